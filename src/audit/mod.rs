//! Bank audits (`lucid audit`): given memories with a self-grade r, a post-hoc truth U and one or
//! more candidate verifiers V (any bank: Parquet, CSV or JSON Lines, or an agent run's own
//! episodes), which verifier may be trusted to de-inflate the bank? The paper's Tables 2-6 for
//! it. A bank flows one way: read ([`read`], [`run_bank`]) -> the bank ([`bank`]) -> one file per
//! table (grader, eia, ensemble, payoff, controls, proposition2, calibration, loso, echo_gap) ->
//! rendering ([`tables`]).
//!
//! Definitions (docs/paper.md, "Bank-level audits"): bias b = r - U, verifier error nu = V - U. EIA
//! passes when |Corr(nu, b)| < tau_dec and Corr(V, U) > tau_tru. The **demotion-only operator**:
//! a trusted memory (r >= 0.5) that the verifier flags (V < 0.5) gets Q = 0; every other memory
//! keeps Q = r; nothing is promoted, nothing rewritten. Its payoff is the change in Corr(Q, U).

pub mod bank;
pub mod calibration;
pub mod controls;
pub mod coverage;
pub mod design;
pub mod echo_gap;
pub mod eia;
pub mod ensemble;
pub mod estimator;
pub mod eval_log;
pub mod grader;
pub mod hand;
pub mod label_plan;
pub mod loso;
pub mod no_truth;
pub mod payoff;
pub mod proposition2;
pub mod read;
pub mod run_bank;
pub mod sanity;
pub mod sheet;
pub mod synth;
pub mod tables;
pub mod votes;

use serde::Serialize;

pub use bank::{AuditBank, CostRow};
pub use eia::{Candidate, kind};
pub use read::Columns;
pub use run_bank::read_bank;

/// The knobs of an audit.
#[derive(Clone, Debug)]
pub struct Options {
    /// EIA decorrelation threshold: |Corr(nu, b)| below it.
    pub tau_dec: f64,
    /// EIA truthfulness threshold: Corr(V, U) above it.
    pub tau_tru: f64,
    /// Bootstrap resamples of the payoff.
    pub bootstrap: usize,
    /// Seed of the bootstrap and the random prunes.
    pub rng_seed: u64,
    /// Random prunes averaged in the budget-matched control.
    pub random_draws: usize,
}

impl Options {
    /// The paper's thresholds (0.3 / 0.3), 2,000 resamples, seed 0, 200 random prunes.
    pub const DEFAULT: Options =
        Options { tau_dec: 0.3, tau_tru: 0.3, bootstrap: 2000, rng_seed: 0, random_draws: 200 };
}

impl Default for Options {
    fn default() -> Self {
        Options::DEFAULT
    }
}

/// Every table of an audit.
#[derive(Clone, Debug, Serialize)]
pub struct Audit {
    /// Memories in the bank.
    pub memories: usize,
    /// EIA thresholds.
    pub tau_dec: f64,
    /// EIA thresholds.
    pub tau_tru: f64,
    /// Bootstrap resamples.
    pub bootstrap: usize,
    /// Bootstrap and random-prune seed.
    pub rng_seed: u64,
    /// The judges the ensembles and the gold-fit combine.
    pub ensemble: Vec<String>,
    /// Where the labels came from and whether they point the right way.
    pub label_sanity: Vec<sanity::SanityRow>,
    /// Leniency and sensitivity of the self-grade (graded episodes; and the stored labels).
    pub grader: Vec<grader::GraderRow>,
    /// The Echo Gap among wrong memories (empty without a reuse count).
    pub echo_gap: Vec<echo_gap::EchoGapRow>,
    /// EIA per verifier, ensemble and the gold-fit bound.
    pub eia: Vec<eia::EiaRow>,
    /// Corr(nu_a, nu_b) for every pair of the bank's verifiers.
    pub error_correlations: Vec<ensemble::ErrorCorrelation>,
    /// The demotion-only payoff per row of `eia`, the oracle and label-blind calibration.
    pub payoff: Vec<payoff::PayoffRow>,
    /// Proposition 2 per row of `eia`.
    pub proposition2: Vec<proposition2::Prop2Row>,
    /// Filtering controls at the selected verifier's budget.
    pub controls: Vec<controls::ControlRow>,
    /// Global calibration of r.
    pub calibration: Vec<calibration::CalibrationRow>,
    /// Leave-one-seed-out folds and their means (empty without two seeds).
    pub leave_one_seed_out: Vec<loso::Fold>,
    /// What each verifier stage spent.
    pub cost: Vec<CostRow>,
    /// The eval log the bank was imported from, when it was (set by the caller).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_log: Option<eval_log::EvalLogNote>,
}

/// Audit `bank`. Every verifier is audited over the whole bank — a memory it left unscored is not
/// flagged and keeps its label — in the payoff, the controls, the ensembles and
/// leave-one-seed-out, so every payoff row shares one "before"; EIA and Proposition 2 are over
/// the memories it scored (the rows say how many).
pub fn audit(bank: &AuditBank, o: &Options) -> Audit {
    let ensembles = ensemble::ensembles(bank);
    let gold = ensemble::gold_fit(bank);
    let mut rows: Vec<Candidate> = bank.verifiers.iter().map(|(n, v)| (n.as_str(), kind::VERIFIER, &v[..])).collect();
    rows.extend(ensembles.iter().map(|(n, v)| (n.as_str(), kind::ENSEMBLE, &v[..])));
    if let Some(g) = &gold {
        rows.push((ensemble::GOLD_FIT, kind::GOLD_FIT, g));
    }
    let eia: Vec<eia::EiaRow> = rows.iter().map(|&c| eia::eia_row(bank, c, o.tau_dec, o.tau_tru)).collect();
    let payoff = payoff::payoff(bank, &rows, o.bootstrap, o.rng_seed);
    // The budget to match: the label-blind row passing EIA that pays most, else the one that pays most.
    let selectable = || (0..rows.len()).filter(|&i| rows[i].1 != kind::GOLD_FIT);
    let pays = |i: usize| payoff[i].delta;
    let best = eia::best_passing(selectable(), |i| eia[i].pass, pays)
        .or_else(|| eia::best_passing(selectable(), |_| true, pays));
    let controls =
        best.map(|i| controls::controls(bank, (rows[i].0, rows[i].2), o.random_draws, o.rng_seed)).unwrap_or_default();
    let mut blind = bank.clone();
    blind.verifiers.extend(ensembles.iter().cloned());
    Audit {
        memories: bank.r.len(),
        tau_dec: o.tau_dec,
        tau_tru: o.tau_tru,
        bootstrap: o.bootstrap,
        rng_seed: o.rng_seed,
        ensemble: if ensembles.is_empty() { Vec::new() } else { bank.judges.clone() },
        label_sanity: sanity::sanity(bank),
        grader: grader::grader(bank),
        echo_gap: echo_gap::echo_gap(bank),
        eia,
        error_correlations: ensemble::error_correlations(bank),
        proposition2: proposition2::proposition2(bank, &rows),
        payoff,
        controls,
        calibration: calibration::calibration(bank),
        leave_one_seed_out: loso::loso(&blind, o.tau_dec, o.tau_tru),
        cost: bank.cost.clone(),
        eval_log: None,
    }
}
