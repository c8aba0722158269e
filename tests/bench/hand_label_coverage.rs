//! Coverage of the hand-label audit's 95 % intervals (`lucid::audit::coverage`) over the grid
//! of `lucid::audit::coverage::grid`: repeated stratified samples of N labels, drawn and
//! estimated as `lucid audit --sample N` / `--labels` do, the stratified estimator and PPI++
//! beside it. `just audit-coverage` writes tests/bench/results/hand_labels.md.
//!
//! usage: cargo run --example hand_label_coverage -- [REPS] [OUT.md] [CELL...]
//! (CELL: only the grid's cells whose names contain it)

use lucid::audit::coverage::{CoverageRow, coverage, grid, markdown};
use lucid::audit::estimator::PSEUDO;

/// Rows, how many below `floor`, the lowest coverage.
fn group(rows: &[&CoverageRow], floor: f64) -> (usize, usize, f64) {
    let below = rows.iter().filter(|r| r.coverage < floor).count();
    (rows.len(), below, rows.iter().map(|r| r.coverage).fold(1.0, f64::min))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps: usize = args.first().and_then(|r| r.parse().ok()).unwrap_or(1000);
    let out = args.get(1).cloned().unwrap_or_else(|| "tests/bench/results/hand_labels.md".into());
    let start = std::time::Instant::now();
    let only = &args[args.len().min(2)..];
    let cells: Vec<_> =
        grid().into_iter().filter(|c| only.is_empty() || only.iter().any(|o| c.name.contains(o.as_str()))).collect();
    let rows = coverage(&cells, reps, 1);
    if std::env::var_os("LUCID_COVERAGE_SE").is_some() {
        for r in &rows {
            eprintln!(
                "{} {} {:?}: cover {:.3} sd {:.4} se {:.4}",
                r.cell, r.quantity, r.verifier, r.coverage, r.sd_se.0, r.sd_se.1
            );
        }
    }
    let floor = 0.93;
    let assumed: Vec<&CoverageRow> = rows.iter().filter(|r| r.assumed).collect();
    let (total, below, lowest) = group(&assumed, floor);
    let zero = assumed.iter().map(|r| r.zero_width).sum::<usize>();
    let of = |text: &str| -> Vec<&CoverageRow> { assumed.iter().copied().filter(|r| r.cell.contains(text)).collect() };
    let (stated, fifth) = (of("and says so"), of("a fifth labelled twice"));
    let (s_rows, s_below, s_low) = group(&stated, floor);
    let (f_rows, f_below, f_low) = group(&fifth, 0.90);
    let ppi: Vec<&CoverageRow> = assumed.iter().copied().filter(|r| r.ppi_coverage.is_some()).collect();
    let narrower: Vec<&&CoverageRow> = ppi.iter().filter(|r| r.ppi_ratio.is_some_and(|w| w < 0.99)).collect();
    let ppi_low = ppi.iter().filter_map(|r| r.ppi_coverage).fold(1.0, f64::min);
    let ppi_below = ppi.iter().filter(|r| r.ppi_coverage.is_some_and(|c| c < floor)).count();
    let best = ppi.iter().filter_map(|r| r.ppi_ratio).fold(1.0, f64::min);
    let widest = ppi.iter().filter_map(|r| r.ppi_ratio).fold(0.0, f64::max);
    let mc = (0.95 * 0.05 / reps as f64).sqrt() * 100.0;
    let text = format!(
        "# Coverage of the hand-label audit's 95 % intervals\n\n\
         `just audit-coverage` (tests/bench/hand_label_coverage.rs, `lucid::audit::coverage::grid`), {reps} samples \
         per cell, {:.0} s on this machine (2 cores, shared). Banks generated with planted answers \
         (`lucid::audit::synth`, one seed each): a lenient self-grade (leniency 0.8, sensitivity 0.9); verifiers \
         `truthful` = U and `echo` = the self-grade, each flipped at the cell's verifier error, `noise` = a coin, \
         `judge4`... = the self-grade half the time and U (20 % flips) otherwise. Each sample is drawn as `lucid \
         audit --sample N` draws it (seeded), labelled with the planted truth (by the cell's labeller, who errs at \
         the cell's rate, each label the wrong way round independently) and estimated as `--labels` estimates it: \
         the stratified estimator with its linearized variance, each stratum's floored by {PSEUDO} pseudo-label of \
         the other truth, labels read through the stated or estimated labelling error (`lucid::audit::estimator`). \
         The planted value is the quantity over the whole bank. Monte Carlo error of a coverage near 95 %: {mc:.1} \
         points.\n\n\
         **Every cell within the assumptions: {total} rows, {below} below {:.0} %, lowest {:.1} %; {zero} intervals \
         of width 0 (none of these samples labels a bank in full).**\n\n\
         - **A labeller who errs 5 % or 10 % and says so** (`--labeller-error`), N = 30 / 100 / 300: {s_rows} rows, \
         {s_below} below 93 %, lowest {:.1} %.\n\
         - **The rate estimated from a fifth of the sample labelled twice** (a second labeller, erring as often, \
         independently): {f_rows} rows, {f_below} below 90 %, lowest {:.1} %.\n\
         - **PPI++** (accuracy, leniency, sensitivity, Corr(V, U); the stratified interval where PPI++ is not \
         narrower, so never wider): {} rows, {} narrower by more than 1 % (width ratio down to {best:.3}; widest \
         {widest:.3}); its coverage lowest {:.1} %, {ppi_below} below 93 %. With 0/1 scores and strata by verifier \
         pattern the strata already hold what the verifiers know (ratio 1); it narrows where scores are spread \
         within a stratum (continuous scores, flag-count strata of many verifiers).\n\n\
         The last cell breaks the assumptions — a labeller who errs 10 % unsaid and unmeasured — to show what it \
         costs.\n\n{}",
        start.elapsed().as_secs_f64(),
        floor * 100.0,
        lowest * 100.0,
        s_low * 100.0,
        f_low * 100.0,
        ppi.len(),
        narrower.len(),
        ppi_low * 100.0,
        markdown(&rows, reps, floor)
    );
    std::fs::write(&out, text).expect("write the coverage file");
    println!("{out}: {below} of {total} rows below {floor}, lowest {lowest:.3}");
}
