//! Coverage of the hand-label audit's 95 % intervals (`lucid::audit::coverage`): banks with
//! planted answers, repeated stratified samples of N labels drawn and estimated as
//! `lucid audit --sample N` / `--labels` do. `just audit-coverage` writes
//! tests/bench/results/hand_labels.md.
//!
//! usage: cargo run --example hand_label_coverage -- [REPS] [OUT.md]

use lucid::audit::coverage::{coverage, markdown, planted_banks};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps: usize = args.first().and_then(|r| r.parse().ok()).unwrap_or(2000);
    let out = args.get(1).cloned().unwrap_or_else(|| "tests/bench/results/hand_labels.md".into());
    let sizes = [50, 200];
    let rows = coverage(&planted_banks(), &sizes, reps, 1);
    let inside = rows.iter().filter(|r| (0.93..=0.97).contains(&r.coverage)).count();
    let below = rows.iter().filter(|r| r.coverage < 0.93).count();
    let text = format!(
        "# Coverage of the hand-label audit's 95 % intervals\n\n\
         `just audit-coverage` (tests/bench/hand_label_coverage.rs, `lucid::audit::coverage`). Banks generated with \
         planted answers (`lucid::audit::synth`: verifiers `truthful` = U with 5 % flips, `echo` = the self-grade \
         with 5 % flips, `noise` = a coin); {reps} stratified samples of N labels each, drawn as `lucid audit --sample N` \
         draws them (seeded) and estimated as `--labels` estimates them; the planted value is the quantity over the \
         whole bank. A correlation undefined in a sample (a verifier that erred on no labelled memory) gets the \
         interval [-1, 1] and counts in `undefined`.\n\n\
         **{inside} of {} rows lie in 93-97 %; {below} below 93 %, {} above 97 %.** Rows below are where the sample \
         sees few of the events a quantity turns on (the rare disagreements of a near-perfect verifier, or the few \
         demotions of the echoing verifier at N = 50): label more memories there, and read those intervals as \
         optimistic.\n\n{}",
        rows.len(),
        rows.len() - inside - below,
        markdown(&rows, reps, 0.93, 0.97)
    );
    std::fs::write(&out, text).expect("write the coverage file");
    println!("{out}: {inside} of {} rows in 93-97 %", rows.len());
}
