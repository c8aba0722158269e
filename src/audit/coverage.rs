//! Whether the hand-label audit's 95 % intervals cover: banks with planted answers
//! ([`super::synth`]), a stratified sample of N memories drawn as `lucid audit --sample N` draws
//! it, labelled with the planted truth by a labeller who may err, leave blanks or be joined by a
//! second labeller, estimated as `--labels` estimates, repeated; each quantity's planted value is
//! its value over the whole bank (the finite population the labels sample). `just
//! audit-coverage` writes `tests/bench/results/hand_labels.md`; a slice runs in the tests.

use serde::Serialize;

use super::design::{draw, strata};
use super::estimator::{LabelError, Labels};
use super::hand::estimates;
use super::read::{Columns, bank_from_batch};
use super::synth::{Planted, generate};
use crate::rng::SplitMix64;

/// How the sample is labelled.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Labeller {
    /// Chance that a label is the wrong way round.
    pub error: f64,
    /// Share of the sample a second labeller (erring as often, independently) labels too.
    pub second: f64,
    /// Chance that a row is left blank.
    pub blank: f64,
    /// Whether the error rate is stated to the audit (`--labeller-error`).
    pub stated: bool,
}

/// One cell of the grid: a bank, a sample size and a labeller.
#[derive(Clone, Debug)]
pub struct Cell {
    /// What the cell varies (the grid's row label).
    pub name: String,
    /// The bank.
    pub bank: Planted,
    /// Labelled memories per sample (rows of the sheet).
    pub n: usize,
    /// The labeller.
    pub labeller: Labeller,
    /// Whether the cell meets the intervals' assumptions (a single labeller who errs does not).
    pub assumed: bool,
}

/// One quantity of one cell.
#[derive(Clone, Debug, Serialize)]
pub struct CoverageRow {
    /// The cell.
    pub cell: String,
    /// Memories in its bank.
    pub memories: usize,
    /// Labelled memories per sample.
    pub n: usize,
    /// Whether the cell meets the intervals' assumptions.
    pub assumed: bool,
    /// The quantity.
    pub quantity: String,
    /// Its verifier (None: the self-grade).
    pub verifier: Option<String>,
    /// Its value over the whole bank.
    pub planted: f64,
    /// Share of samples whose interval covers it.
    pub coverage: f64,
    /// Samples whose interval has width 0.
    pub zero_width: usize,
    /// Mean interval width.
    pub width: f64,
    /// Mean estimate minus the planted value.
    pub bias: f64,
    /// Share of samples whose PPI++ interval covers it (the stratified interval where PPI++ is not
    /// narrower; None: a quantity PPI++ does not estimate).
    pub ppi_coverage: Option<f64>,
    /// The estimates' standard deviation over the samples, and the mean standard error the
    /// intervals used (a check of the variance).
    pub sd_se: (f64, f64),
    /// Mean PPI++ width over the stratified estimator's mean width.
    pub ppi_ratio: Option<f64>,
}

/// The labels of the memories `picked` of a bank with truth `u`, by `l`, seeded.
fn label(picked: &[usize], u: &[f64], l: Labeller, seed: u64) -> Labels {
    let mut rng = SplitMix64(seed ^ 0x4C41_4245_4C4C_4552);
    let read = |t: f64, rng: &mut SplitMix64| if rng.uniform() < l.error { 1.0 - t } else { t };
    let mut out = Labels::default();
    if l.stated {
        out.stated = [Some(LabelError::symmetric(l.error)), None];
    }
    for &i in picked {
        if rng.uniform() < l.blank {
            out.blanks += 1;
            continue;
        }
        let first = read(u[i], &mut rng);
        let second = (rng.uniform() < l.second).then(|| read(u[i], &mut rng));
        out.picked.push(i);
        out.u.push(first);
        out.second.push(second);
    }
    out
}

/// Coverage over `reps` samples of each cell.
pub fn coverage(cells: &[Cell], reps: usize, seed: u64) -> Vec<CoverageRow> {
    let mut out = Vec::new();
    for cell in cells {
        let batch = generate(&cell.bank);
        let path = std::path::Path::new(cell.name.as_str());
        let bank = bank_from_batch(path, &batch, &Columns::default(), None).expect("a generated bank reads");
        let qs = super::hand::quantities(&bank);
        let planted: Vec<Option<f64>> = qs.iter().map(|q| q.exact(&bank.u)).collect();
        let s = strata(&bank, cell.n);
        let items: Vec<u64> = (0..reps as u64).collect();
        // Per rep, per quantity: the estimate, the width and whether it covered, stratified and
        // PPI++ (the stratified one where PPI++ is not narrower).
        type Got = Option<((f64, f64, bool, f64), Option<(f64, bool)>)>;
        let per: Vec<Vec<Got>> = crate::par::par_map_with(
            &items,
            crate::par::default_jobs(),
            || (),
            |_, &rep| {
                let key = seed ^ rep.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let picked = draw(&s, cell.n, key).expect("n fits the strata");
                let labels = label(&picked, &bank.u, cell.labeller, key);
                let covers = |lo: f64, hi: f64, p: f64| lo <= p + 1e-12 && p <= hi + 1e-12;
                estimates(&bank, &s, &labels)
                    .iter()
                    .zip(&planted)
                    .map(|((q, e, ppi), p)| {
                        let p = (*p)?;
                        let strat = (e.value.unwrap_or(f64::NAN), e.hi - e.lo, covers(e.lo, e.hi, p), e.se);
                        let ppi = q.ppi_estimated().then(|| match ppi {
                            Some(x) => (x.summary.hi - x.summary.lo, covers(x.summary.lo, x.summary.hi, p)),
                            None => (strat.1, strat.2),
                        });
                        Some((strat, ppi))
                    })
                    .collect()
            },
        );
        for (j, q) in qs.iter().enumerate() {
            let Some(p) = planted[j] else { continue };
            let got: Vec<(f64, f64, bool, f64)> = per.iter().filter_map(|r| r[j].map(|g| g.0)).collect();
            let ppi: Vec<(f64, bool)> = per.iter().filter_map(|r| r[j].and_then(|g| g.1)).collect();
            let defined: Vec<f64> = got.iter().map(|g| g.0).filter(|v| !v.is_nan()).collect();
            let mean = defined.iter().sum::<f64>() / defined.len().max(1) as f64;
            let sd = (defined.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / defined.len().max(2) as f64).sqrt();
            let ses: Vec<f64> = got.iter().map(|g| g.3).filter(|s| s.is_finite()).collect();
            let sd_se = (sd, ses.iter().sum::<f64>() / ses.len().max(1) as f64);
            let width = got.iter().map(|g| g.1).sum::<f64>() / got.len().max(1) as f64;
            out.push(CoverageRow {
                cell: cell.name.clone(),
                memories: bank.r.len(),
                n: cell.n,
                assumed: cell.assumed,
                quantity: q.name().into(),
                verifier: q.verifier.clone(),
                planted: p,
                coverage: got.iter().filter(|g| g.2).count() as f64 / reps as f64,
                zero_width: got.iter().filter(|g| g.1 <= 0.0).count(),
                width,
                bias: mean - p,
                sd_se,
                ppi_coverage: (!ppi.is_empty()).then(|| ppi.iter().filter(|g| g.1).count() as f64 / reps as f64),
                ppi_ratio: (!ppi.is_empty() && width > 0.0)
                    .then(|| ppi.iter().map(|g| g.0).sum::<f64>() / ppi.len() as f64 / width),
            });
        }
    }
    out
}

/// A grid bank: `memories` memories, a lenient self-grade (leniency 0.8, sensitivity 0.9), the
/// given accuracy, `verifiers` verifiers whose `truthful` and `echo` err `error` of the time.
pub fn bank(memories: usize, accuracy: f64, error: f64, verifiers: usize, seed: u64) -> Planted {
    Planted {
        memories,
        seeds: 1,
        base_rate: accuracy,
        leniency: 0.8,
        sensitivity: 0.9,
        verifiers,
        continuous: false,
        flips: error,
        seed,
        ..Planted::default()
    }
}

/// The grid of the committed coverage file: accuracy 0.1 / 0.3 / 0.6 / 0.9 crossed with verifier
/// error 3 / 15 / 30 % at N = 50 and 3 verifiers on 500 memories; then, from accuracy 0.3 and
/// error 15 %, 1, 11 and 20 verifiers, N = 20 and 200, the demo's own shape (132 memories, 11
/// verifiers, accuracy 0.1), a labeller who errs 10 % with a second labeller on half the sample,
/// one who leaves 10 % blank; a single labeller who errs 5 % or 10 % at N = 30, 100, 300, who
/// states the rate or has it estimated from a fifth labelled twice; continuous scores (where
/// PPI++ has something to add); and — outside the assumptions — a labeller who errs 10 % unsaid.
pub fn grid() -> Vec<Cell> {
    let one = Labeller::default();
    let cell =
        |name: String, bank: Planted, n: usize, labeller: Labeller| Cell { name, bank, n, labeller, assumed: true };
    let mut out = Vec::new();
    let mut seed = 100;
    for accuracy in [0.1, 0.3, 0.6, 0.9] {
        for error in [0.03, 0.15, 0.30] {
            seed += 1;
            let name = format!("accuracy {accuracy}, verifiers err {:.0} %", 100.0 * error);
            out.push(cell(name, bank(500, accuracy, error, 3, seed), 50, one));
        }
    }
    for k in [1, 11, 20] {
        out.push(cell(format!("{k} verifiers"), bank(500, 0.3, 0.15, k, 200 + k as u64), 50, one));
    }
    for n in [20, 200, 300] {
        out.push(cell(format!("N = {n}"), bank(500, 0.3, 0.15, 3, 300 + n as u64), n, one));
    }
    out.push(cell("demo's shape (132 memories, 11 verifiers)".into(), bank(132, 0.1, 0.15, 11, 401), 50, one));
    let twice = Labeller { error: 0.1, second: 0.5, ..one };
    out.push(cell("labeller errs 10 %, half labelled twice".into(), bank(500, 0.3, 0.15, 3, 402), 50, twice));
    let blanks = Labeller { blank: 0.1, ..one };
    out.push(cell("10 % of rows left blank".into(), bank(500, 0.3, 0.15, 3, 403), 50, blanks));
    for error in [0.05, 0.1] {
        for n in [30, 100, 300] {
            let pct = 100.0 * error;
            let stated = Labeller { error, stated: true, ..one };
            out.push(cell(
                format!("labeller errs {pct:.0} % and says so, N = {n}"),
                bank(500, 0.3, 0.15, 3, 402),
                n,
                stated,
            ));
            let fifth = Labeller { error, second: 0.2, ..one };
            out.push(cell(
                format!("labeller errs {pct:.0} %, rate estimated from a fifth labelled twice, N = {n}"),
                bank(500, 0.3, 0.15, 3, 402),
                n,
                fifth,
            ));
        }
    }
    // Scores spread within their side of 0.5: the strata cannot hold what the verifiers know, PPI++ can.
    for n in [50, 200] {
        let spread = Planted { continuous: true, ..bank(500, 0.3, 0.15, 3, 500 + n as u64) };
        out.push(cell(format!("continuous scores, N = {n}"), spread, n, one));
    }
    let alone = Labeller { error: 0.1, ..one };
    out.push(Cell {
        assumed: false,
        ..cell(
            "labeller errs 10 %, labelled once, rate not stated (outside the assumptions)".into(),
            bank(500, 0.3, 0.15, 3, 402),
            50,
            alone,
        )
    });
    out
}

/// The coverage table as Markdown, each row marked whether it reaches `floor`.
pub fn markdown(rows: &[CoverageRow], reps: usize, floor: f64) -> String {
    let mut out = format!(
        "| cell | memories | N | quantity | verifier | planted | coverage ({reps} samples) | at least {:.0} % | \
         width 0 | mean width | bias | PPI++ coverage | PPI++ width / stratified |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        floor * 100.0
    );
    for r in rows {
        let ppi = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("-".to_string(), f);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:+.3} | {:.1} % | {} | {} | {:.3} | {:+.4} | {} | {} |\n",
            r.cell,
            r.memories,
            r.n,
            r.quantity,
            r.verifier.as_deref().unwrap_or("self-grade"),
            r.planted,
            r.coverage * 100.0,
            if r.coverage >= floor { "yes" } else { "**no**" },
            r.zero_width,
            r.width,
            r.bias,
            ppi(r.ppi_coverage, &|c| format!("{:.1} %", 100.0 * c)),
            ppi(r.ppi_ratio, &|w| format!("{w:.3}")),
        ));
    }
    out
}
