//! The release binary's link (#38, #58): on x86-64 Linux the toolchain links with its own LLD
//! (rust-lld, the default since Rust 1.90), and a release build of the `lucid` binary asks it for
//! identical code folding (`--icf=all`: functions whose machine code is the same are kept once;
//! Rust promises no distinct addresses for distinct functions, so folding them all is sound),
//! which keeps the binary under 100 MB (`--icf=safe` folds only what rustc marks address-
//! insignificant and left it at 101.8 MB). No other linker is asked for (GNU gold, used before,
//! is deprecated and warned about on every build). Tests, examples, debug builds and other
//! targets link as the toolchain does.

fn main() {
    println!("cargo:rerun-if-changed=src/build.rs");
    let release = std::env::var("PROFILE").as_deref() == Ok("release");
    let target = std::env::var("TARGET").unwrap_or_default();
    if release && target == "x86_64-unknown-linux-gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
    }
}
