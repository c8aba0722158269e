//! The release binary's link (#38): where GNU gold is installed (binutils on Debian and most
//! Linux distributions), the `lucid` binary of a release build is linked by gold with identical
//! code folding (`--icf=safe`: functions whose address is never taken and whose machine code is
//! the same are kept once). Measured: 100.6 MB stripped without it, 94.1 MB with it. Tests,
//! examples and debug builds link as before; without gold the release binary links as before.

fn main() {
    println!("cargo:rerun-if-changed=src/build.rs");
    let release = std::env::var("PROFILE").as_deref() == Ok("release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let gold = std::process::Command::new("ld.gold").arg("--version").output().is_ok_and(|o| o.status.success());
    if release && linux && gold {
        println!("cargo:rustc-link-arg-bins=-fuse-ld=gold");
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=safe");
    }
}
