//! The skip summary: `cargo test` runs it after the integration tests (no harness, so what it
//! prints shows for passing runs too). It lists every test that skipped for want of something
//! outside the repository, and fails under `CI=true` when any did.

#[path = "support/probes.rs"]
mod probes;

fn main() {
    let mut skipped = 0;
    for probe in probes::ALL {
        if let Some(why) = probe.missing() {
            for t in probe.tests() {
                println!("SKIPPED {t}: {why}");
                skipped += 1;
            }
        }
    }
    if skipped == 0 {
        println!("skip summary: no test skipped ({} outside requirements present)", probes::ALL.len());
        return;
    }
    println!("skip summary: {skipped} test(s) skipped (they passed without checking anything)");
    if probes::ci() {
        eprintln!("CI=true: nothing may skip");
        std::process::exit(1);
    }
}
