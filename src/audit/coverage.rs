//! Whether the hand-label audit's 95 % intervals cover: banks with planted answers
//! ([`super::synth`]), a stratified sample of N memories drawn as `lucid audit --sample N` draws
//! it, labelled with the planted truth, estimated as `--labels` estimates, repeated; each
//! quantity's planted value is its value over the whole bank (the finite population the labels
//! sample). `just audit-coverage` writes `tests/bench/results/hand_labels.md`; a small version
//! runs in the tests.

use serde::Serialize;

use super::design::{Sample, draw, strata};
use super::hand::quantities;
use super::read::{Columns, bank_from_batch};
use super::synth::{Planted, generate};

/// One quantity of one bank at one sample size.
#[derive(Clone, Debug, Serialize)]
pub struct CoverageRow {
    /// The bank.
    pub bank: String,
    /// Its memories.
    pub memories: usize,
    /// Labelled memories per sample.
    pub n: usize,
    /// The quantity.
    pub quantity: String,
    /// Its verifier (None: the self-grade).
    pub verifier: Option<String>,
    /// Its value over the whole bank.
    pub planted: f64,
    /// Share of samples whose interval covers it.
    pub coverage: f64,
    /// Samples where the estimate was undefined (a correlation's interval then is [-1, 1]).
    pub undefined: usize,
    /// Mean interval width.
    pub width: f64,
    /// Mean estimate minus the planted value.
    pub bias: f64,
}

/// Coverage over `reps` samples of each size in `sizes` from each bank of `banks`.
pub fn coverage(banks: &[(String, Planted)], sizes: &[usize], reps: usize, seed: u64) -> Vec<CoverageRow> {
    let mut out = Vec::new();
    for (name, spec) in banks {
        let batch = generate(spec);
        let path = std::path::Path::new(name.as_str());
        let bank = bank_from_batch(path, &batch, &Columns::default(), None).expect("a generated bank reads");
        let qs = quantities(&bank);
        let planted: Vec<Option<f64>> = qs.iter().map(|q| q.exact(&bank.u)).collect();
        for &n in sizes {
            let s = strata(&bank, n);
            let items: Vec<u64> = (0..reps as u64).collect();
            // Per rep, per quantity: the estimate and whether it covered.
            let per: Vec<Vec<Option<(f64, f64, bool)>>> = crate::par::par_map_with(
                &items,
                crate::par::default_jobs(),
                || (),
                |_, &rep| {
                    let picked =
                        draw(&s, n, seed ^ rep.wrapping_mul(0x9E37_79B9_7F4A_7C15)).expect("n fits the strata");
                    let u: Vec<f64> = picked.iter().map(|&i| bank.u[i]).collect();
                    let sample = Sample::new(&s, &picked).expect("the draw covers every stratum");
                    qs.iter()
                        .zip(&planted)
                        .map(|(q, p)| {
                            let (e, p) = (q.estimate(&sample, &picked, &u)?, (*p)?);
                            Some((e.value, e.hi - e.lo, e.lo <= p + 1e-12 && p <= e.hi + 1e-12))
                        })
                        .collect()
                },
            );
            for (j, q) in qs.iter().enumerate() {
                let Some(p) = planted[j] else { continue };
                let got: Vec<(f64, f64, bool)> = per.iter().filter_map(|r| r[j]).collect();
                let k = got.len().max(1) as f64;
                let undefined = got.iter().filter(|g| g.0.is_nan()).count() + reps - got.len();
                out.push(CoverageRow {
                    bank: name.clone(),
                    memories: bank.r.len(),
                    n,
                    quantity: q.name().into(),
                    verifier: q.verifier.clone(),
                    planted: p,
                    coverage: got.iter().filter(|g| g.2).count() as f64 / reps as f64,
                    undefined,
                    width: got.iter().map(|g| g.1).sum::<f64>() / k,
                    bias: {
                        let defined: Vec<f64> = got.iter().map(|g| g.0).filter(|v| !v.is_nan()).collect();
                        defined.iter().sum::<f64>() / defined.len().max(1) as f64 - p
                    },
                });
            }
        }
    }
    out
}

/// The banks of the committed coverage file, with verifiers that err 15 % of the time (judges
/// about as good as the paper's): a large inflated bank, a small one that N = 200 labels half of
/// (the finite-population correction matters), an inverted one; and a stress bank whose
/// verifiers err 5 % of the time (their errors are rare events in a sample).
pub fn planted_banks() -> Vec<(String, Planted)> {
    let base = Planted { seeds: 1, verifiers: 3, continuous: false, flips: 0.15, ..Planted::default() };
    vec![
        (
            "inflated".into(),
            Planted { memories: 2000, base_rate: 0.6, leniency: 0.8, sensitivity: 0.95, seed: 11, ..base.clone() },
        ),
        (
            "small".into(),
            Planted { memories: 400, base_rate: 0.4, leniency: 0.5, sensitivity: 0.9, seed: 12, ..base.clone() },
        ),
        (
            "inverted".into(),
            Planted { memories: 1000, base_rate: 0.5, leniency: 0.9, sensitivity: 0.2, seed: 13, ..base.clone() },
        ),
        (
            "near-perfect verifiers".into(),
            Planted { memories: 2000, base_rate: 0.6, leniency: 0.8, sensitivity: 0.95, flips: 0.05, seed: 14, ..base },
        ),
    ]
}

/// The coverage table as Markdown, each row marked whether it lies in [lo, hi].
pub fn markdown(rows: &[CoverageRow], reps: usize, lo: f64, hi: f64) -> String {
    let mut out = format!(
        "| bank | memories | N | quantity | verifier | planted | coverage ({reps} samples) | in {:.0}-{:.0} % | \
         undefined | mean width | bias |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
        lo * 100.0,
        hi * 100.0
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:+.3} | {:.1} % | {} | {} | {:.3} | {:+.4} |\n",
            r.bank,
            r.memories,
            r.n,
            r.quantity,
            r.verifier.as_deref().unwrap_or("self-grade"),
            r.planted,
            r.coverage * 100.0,
            if (lo..=hi).contains(&r.coverage) { "yes" } else { "**no**" },
            r.undefined,
            r.width,
            r.bias
        ));
    }
    out
}
