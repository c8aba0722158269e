//! Coverage of the hand-label audit's 95 % intervals (`lucid::audit::coverage`) over the grid
//! of `lucid::audit::coverage::grid`: repeated stratified samples of N labels, drawn and
//! estimated as `lucid audit --sample N` / `--labels` do. `just audit-coverage` writes
//! tests/bench/results/hand_labels.md.
//!
//! usage: cargo run --example hand_label_coverage -- [REPS] [OUT.md] [CELL...]
//! (CELL: only the grid's cells whose names contain it)

use lucid::audit::coverage::{coverage, grid, markdown};
use lucid::audit::estimator::PSEUDO;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps: usize = args.first().and_then(|r| r.parse().ok()).unwrap_or(1000);
    let out = args.get(1).cloned().unwrap_or_else(|| "tests/bench/results/hand_labels.md".into());
    let start = std::time::Instant::now();
    let only = &args[args.len().min(2)..];
    let cells: Vec<_> =
        grid().into_iter().filter(|c| only.is_empty() || only.iter().any(|o| c.name.contains(o.as_str()))).collect();
    let rows = coverage(&cells, reps, 1);
    let floor = 0.93;
    let assumed: Vec<_> = rows.iter().filter(|r| r.assumed).collect();
    let below = assumed.iter().filter(|r| r.coverage < floor).count();
    let lowest = assumed.iter().map(|r| r.coverage).fold(1.0, f64::min);
    let zero = assumed.iter().map(|r| r.zero_width).sum::<usize>();
    let mc = (0.95 * 0.05 / reps as f64).sqrt() * 100.0;
    let text = format!(
        "# Coverage of the hand-label audit's 95 % intervals\n\n\
         `just audit-coverage` (tests/bench/hand_label_coverage.rs, `lucid::audit::coverage::grid`), {reps} samples \
         per cell, {:.0} s on this machine. Banks generated with planted answers \
         (`lucid::audit::synth`, one seed each): a lenient self-grade (leniency 0.8, sensitivity 0.9); verifiers \
         `truthful` = U and `echo` = the self-grade, each flipped at the cell's verifier error, `noise` = a coin, \
         `judge4`... = the self-grade half the time and U (20 % flips) otherwise. Each sample is drawn as `lucid \
         audit --sample N` draws it (seeded), labelled with the planted truth (by the cell's labeller) and estimated \
         as `--labels` estimates it: the stratified estimator with its linearized variance, each stratum's floored \
         by {PSEUDO} pseudo-label of the other truth (`lucid::audit::estimator`). The planted value is the quantity over the whole bank. Monte Carlo \
         error of a coverage near 95 %: {mc:.1} points.\n\n\
         **Every cell within the assumptions: {} rows, {below} below {:.0} %, lowest {:.1} %; {zero} intervals of \
         width 0 (none of these samples labels a bank in full).** The last cell breaks the assumption of a labeller \
         who does not err, to show what it costs: with a second labeller on half the sample (the cell before it) the \
         intervals carry the error.\n\n{}",
        start.elapsed().as_secs_f64(),
        assumed.len(),
        floor * 100.0,
        lowest * 100.0,
        markdown(&rows, reps, floor)
    );
    std::fs::write(&out, text).expect("write the coverage file");
    println!("{out}: {below} of {} rows below {floor}, lowest {lowest:.3}", assumed.len());
}
