//! Bank audits (`lucid audit`): given memories with a self-grade r, a post-hoc truth U and one or
//! more candidate verifiers V (any bank: Parquet, CSV or JSON Lines, or an agent run's own
//! episodes), which verifier may be trusted to de-inflate the bank? The paper's Tables 2-6 for
//! it: the grader's leniency, the EIA table (with ensembles, the gold-fit upper bound and the
//! correlations of verifier errors), the de-inflation payoff with a seeded bootstrap, Proposition
//! 2, filtering controls at the same budget, global calibration and leave-one-seed-out.
//!
//! Definitions (PAPER.md, "Bank-level audits"): bias b = r - U, verifier error nu = V - U. EIA
//! passes when |Corr(nu, b)| < tau_dec and Corr(V, U) > tau_tru. The **demotion-only operator**:
//! a trusted memory (r >= 0.5) that the verifier flags (V < 0.5) gets Q = 0; every other memory
//! keeps Q = r; nothing is promoted, nothing rewritten. Its payoff is the change in Corr(Q, U).

pub mod calibration;
pub mod controls;
pub mod ensemble;
pub mod loso;
pub mod payoff;
pub mod run_bank;
pub mod synth;
pub mod tables;

use std::path::Path;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type};
use serde::Serialize;

use crate::analysis::stats::{Z95, pearson, wilson};
use crate::error::{Error, Result};

/// A bank: one row per memory.
#[derive(Clone, Debug, Default)]
pub struct AuditBank {
    /// Self-grade r (0..1).
    pub r: Vec<f64>,
    /// Post-hoc truth U (0 or 1).
    pub u: Vec<f64>,
    /// Candidate verifiers: name and score per memory (0..1; below 0.5 flags the memory).
    pub verifiers: Vec<(String, Vec<f64>)>,
    /// The seed (or any fold) of each memory, when the bank has one.
    pub seed: Option<Vec<i64>>,
    /// A self-consistency score per memory (agreement of resampled answers), when the bank has one.
    pub sc: Option<Vec<f64>>,
    /// How often each memory was retrieved (reuse count), when the bank has it.
    pub n: Option<Vec<f64>>,
    /// The arm, for the bank of an agent run.
    pub arm: Option<String>,
    /// What each verifier stage of an agent run spent (empty for a bank file).
    pub cost: Vec<CostRow>,
}

/// What one verifier cost over the bank (the cost table beside the EIA table).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CostRow {
    /// The verifier.
    pub verifier: String,
    /// Memories it scored.
    pub scored: usize,
    /// Memories it left unscored (a failed call, an unparseable verdict, no evidence).
    pub skipped: usize,
    /// Model calls.
    pub calls: u64,
    /// Calls that failed after their retries.
    pub failed_calls: u64,
    /// Prompt and generated tokens.
    pub tokens: u64,
    /// Model seconds (0 for cache hits).
    pub seconds: f64,
}

impl AuditBank {
    /// The memories at `idx`.
    pub fn subset(&self, idx: &[usize]) -> AuditBank {
        let pick = |x: &[f64]| idx.iter().map(|&i| x[i]).collect::<Vec<_>>();
        AuditBank {
            r: pick(&self.r),
            u: pick(&self.u),
            verifiers: self.verifiers.iter().map(|(n, v)| (n.clone(), pick(v))).collect(),
            seed: self.seed.as_ref().map(|s| idx.iter().map(|&i| s[i]).collect()),
            sc: self.sc.as_deref().map(pick),
            n: self.n.as_deref().map(pick),
            arm: self.arm.clone(),
            cost: self.cost.clone(),
        }
    }

    /// b = r - U per memory.
    pub fn bias(&self) -> Vec<f64> {
        self.r.iter().zip(&self.u).map(|(r, u)| r - u).collect()
    }

    /// nu = V - U per memory, for verifier scores `v`.
    pub fn errors(&self, v: &[f64]) -> Vec<f64> {
        v.iter().zip(&self.u).map(|(v, u)| v - u).collect()
    }
}

/// A row of the EIA, payoff and Proposition 2 tables: name, kind (see [`kind`]), scores V.
pub type Candidate<'a> = (&'a str, &'static str, &'a [f64]);

/// Delta Corr(Q, U): Corr(`q`, `u`) minus `before` (Corr(r, U)); None where either is undefined.
pub fn delta(q: &[f64], u: &[f64], before: Option<f64>) -> Option<f64> {
    Some(pearson(q, u)? - before?)
}

/// Among `candidates`, the one passing EIA (`pass`) whose demotion pays most (`pays`).
pub fn best_passing(
    candidates: impl Iterator<Item = usize>,
    pass: impl Fn(usize) -> bool,
    pays: impl Fn(usize) -> Option<f64>,
) -> Option<usize> {
    let pays = |i: usize| pays(i).unwrap_or(f64::NEG_INFINITY);
    candidates.filter(|&i| pass(i)).max_by(|&a, &b| pays(a).total_cmp(&pays(b)))
}

/// Which columns of a bank file mean what.
#[derive(Clone, Debug)]
pub struct Columns {
    /// Verifier columns (empty: every column named `v_<name>`).
    pub verifiers: Vec<String>,
    /// The fold column (used when present).
    pub seed: String,
    /// The self-consistency column (used when present).
    pub sc: String,
    /// The reuse-count column (used when present).
    pub n: String,
}

impl Default for Columns {
    fn default() -> Self {
        Columns { verifiers: Vec::new(), seed: "seed".into(), sc: "sc".into(), n: "n".into() }
    }
}

/// Read a bank file (`.parquet`, `.csv`, `.jsonl`/`.json`), or the bank of an agent run folder
/// (see [`run_bank`]). Errors name the file, the column and the row.
pub fn read_bank(path: &Path, cols: &Columns, arm: Option<&str>) -> Result<AuditBank> {
    let remote_run = path.to_str().and_then(crate::remote::listing::split_run_url).is_some();
    if path.is_dir() || remote_run {
        return run_bank::read(path, arm, cols);
    }
    let batch = crate::session::block_on(async {
        let ctx = crate::session::new();
        let loc = path.display().to_string();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let registered = match ext {
            "parquet" => ctx.register_parquet("bank", &loc, Default::default()).await,
            "csv" => ctx.register_csv("bank", &loc, Default::default()).await,
            "jsonl" | "json" | "ndjson" => {
                let dotted = format!(".{ext}");
                let opts = datafusion::datasource::file_format::options::JsonReadOptions {
                    file_extension: &dotted,
                    ..Default::default()
                };
                ctx.register_json("bank", &loc, opts).await
            }
            _ => {
                return Err(Error::input(path, "a bank is a .parquet, .csv or .jsonl file, or an agent run folder"));
            }
        };
        registered.map_err(|e| Error::input_from(path, "", e))?;
        crate::session::collect(&ctx, "SELECT * FROM bank").await.map_err(|e| Error::input_from(path, "", e))
    })?;
    bank_from_batch(path, &batch, cols)
}

/// The bank in `batch` (read from `path`, which errors name).
pub fn bank_from_batch(path: &Path, batch: &RecordBatch, cols: &Columns) -> Result<AuditBank> {
    if batch.num_rows() == 0 {
        return Err(Error::input(path, "the bank is empty"));
    }
    let column = |name: &str| -> Result<Vec<f64>> {
        let c = batch.column_by_name(name).ok_or_else(|| {
            let have: Vec<String> = batch.schema().fields().iter().map(|f| f.name().clone()).collect();
            Error::input(path, format!("no column '{name}' (columns: {})", have.join(", ")))
        })?;
        let c = arrow::compute::cast(c, &DataType::Float64)
            .map_err(|_| Error::input(path, format!("column '{name}' is not numeric ({})", c.data_type())))?;
        let c = c.as_primitive::<Float64Type>();
        (0..c.len())
            .map(|i| {
                if c.is_null(i) || !c.value(i).is_finite() {
                    Err(Error::input(path, format!("row {i}: column '{name}' has no number")))
                } else {
                    Ok(c.value(i))
                }
            })
            .collect()
    };
    let optional = |name: &str| batch.column_by_name(name).map(|_| column(name)).transpose();
    // A verifier may leave memories unscored (null): NaN here, and each verifier is audited over
    // the memories it scored.
    let scores = |name: &str| -> Result<Vec<f64>> {
        let present = batch.column_by_name(name).map(|c| (0..c.len()).map(|i| c.is_valid(i)).collect::<Vec<_>>());
        let Some(present) = present else { return column(name) };
        if present.iter().all(|p| *p) {
            return column(name);
        }
        let c = batch.column_by_name(name).expect("checked");
        let c = arrow::compute::cast(c, &DataType::Float64)
            .map_err(|_| Error::input(path, format!("column '{name}' is not numeric ({})", c.data_type())))?;
        let c = c.as_primitive::<Float64Type>();
        (0..c.len())
            .map(|i| match (c.is_valid(i), c.is_valid(i) && c.value(i).is_finite()) {
                (false, _) => Ok(f64::NAN),
                (true, true) => Ok(c.value(i)),
                (true, false) => Err(Error::input(path, format!("row {i}: column '{name}' has no number"))),
            })
            .collect()
    };
    let names: Vec<String> = if cols.verifiers.is_empty() {
        batch.schema().fields().iter().filter(|f| f.name().starts_with("v_")).map(|f| f.name().clone()).collect()
    } else {
        cols.verifiers.clone()
    };
    if names.is_empty() {
        return Err(Error::input(path, "no verifier: name them with --verifiers, or call their columns v_<name>"));
    }
    let verifiers =
        names.iter().map(|n| Ok((n.trim_start_matches("v_").to_string(), scores(n)?))).collect::<Result<Vec<_>>>()?;
    let u = column("u")?;
    if let Some(i) = u.iter().position(|&x| x != 0.0 && x != 1.0) {
        return Err(Error::input(path, format!("row {i}: column 'u' is {}, not 0 or 1", u[i])));
    }
    Ok(AuditBank {
        r: column("r")?,
        u,
        verifiers,
        seed: optional(&cols.seed)?.map(|s| s.into_iter().map(|s| s as i64).collect()),
        // A memory a resample left unscored has no sc (NaN): never pruned by the sc control.
        sc: batch.column_by_name(&cols.sc).map(|_| scores(&cols.sc)).transpose()?,
        n: optional(&cols.n)?,
        arm: None,
        cost: Vec::new(),
    })
}

/// The grader's row (Table 2's first line): how lenient the self-grade is on this bank.
#[derive(Clone, Debug, Serialize)]
pub struct GraderRow {
    /// Memories.
    pub memories: usize,
    /// Share right (U = 1).
    pub base_rate: f64,
    /// Leniency l = P(r >= 0.5 | U = 0), with its 95 % Wilson interval.
    pub leniency: Option<f64>,
    /// Lower end.
    pub leniency_lo: Option<f64>,
    /// Upper end.
    pub leniency_hi: Option<f64>,
    /// Sensitivity s = P(r >= 0.5 | U = 1), with its 95 % Wilson interval.
    pub sensitivity: Option<f64>,
    /// Lower end.
    pub sensitivity_lo: Option<f64>,
    /// Upper end.
    pub sensitivity_hi: Option<f64>,
    /// Trusted-bank corruption: share of trusted memories (r >= 0.5) that are wrong.
    pub trusted_corruption: Option<f64>,
    /// Corr(r, U).
    pub corr_r_u: Option<f64>,
}

/// The grader row of `bank`.
pub fn grader(bank: &AuditBank) -> GraderRow {
    let n = bank.r.len();
    let count = |f: &dyn Fn(usize) -> bool| (0..n).filter(|&i| f(i)).count() as f64;
    let (wrong, right) = (count(&|i| bank.u[i] < 0.5), count(&|i| bank.u[i] >= 0.5));
    let lenient = count(&|i| bank.u[i] < 0.5 && bank.r[i] >= 0.5);
    let sensitive = count(&|i| bank.u[i] >= 0.5 && bank.r[i] >= 0.5);
    let (l, s) = (wilson(lenient, wrong, Z95), wilson(sensitive, right, Z95));
    let trusted = lenient + sensitive;
    GraderRow {
        memories: n,
        base_rate: right / n as f64,
        leniency: (wrong > 0.0).then(|| lenient / wrong),
        leniency_lo: l.map(|x| x.0),
        leniency_hi: l.map(|x| x.1),
        sensitivity: (right > 0.0).then(|| sensitive / right),
        sensitivity_lo: s.map(|x| x.0),
        sensitivity_hi: s.map(|x| x.1),
        trusted_corruption: (trusted > 0.0).then(|| lenient / trusted),
        corr_r_u: pearson(&bank.r, &bank.u),
    }
}

/// What a row of the EIA and payoff tables is.
pub mod kind {
    /// A verifier of the bank.
    pub const VERIFIER: &str = "verifier";
    /// A label-blind combination of the bank's verifiers.
    pub const ENSEMBLE: &str = "ensemble";
    /// Fitted to U: an upper bound, not a method.
    pub const GOLD_FIT: &str = "gold-fit (reads U)";
    /// V = U: the ceiling.
    pub const ORACLE: &str = "oracle (reads U)";
    /// A label-blind map of r (z-score).
    pub const CALIBRATION: &str = "label-blind calibration";
}

/// One row of the EIA table.
#[derive(Clone, Debug, Serialize)]
pub struct EiaRow {
    /// The verifier.
    pub verifier: String,
    /// verifier, ensemble or gold-fit (reads U).
    pub kind: String,
    /// Corr(nu, b): how much the verifier's errors echo the grader's.
    pub corr_nu_b: Option<f64>,
    /// Corr(V, U): how truthful it is.
    pub corr_v_u: Option<f64>,
    /// Both conditions hold.
    pub pass: bool,
    /// Why it fails, in words (empty when it passes).
    pub failure: String,
    /// Memories it scored (its correlations and payoff are over these).
    pub scored: usize,
    /// Memories it left unscored.
    pub skipped: usize,
}

/// The EIA row of verifier scores `v` on `bank` at thresholds `tau_dec`, `tau_tru`.
pub fn eia_row(bank: &AuditBank, b: &[f64], name: &str, kind: &str, v: &[f64], tau_dec: f64, tau_tru: f64) -> EiaRow {
    let (dec, tru) = (pearson(&bank.errors(v), b), pearson(v, &bank.u));
    let decorrelated = dec.is_some_and(|c| c.abs() < tau_dec);
    let truthful = tru.is_some_and(|c| c > tau_tru);
    let failure = match (decorrelated, truthful) {
        (true, true) => String::new(),
        (false, true) => "echoes the grader: its errors move with the self-grade's".into(),
        (true, false) => "not truthful enough: it barely tracks U".into(),
        (false, false) => "echoes the grader and barely tracks U".into(),
    };
    EiaRow {
        verifier: name.into(),
        kind: kind.into(),
        corr_nu_b: dec,
        corr_v_u: tru,
        pass: decorrelated && truthful,
        failure,
        scored: v.len(),
        skipped: 0,
    }
}

/// The EIA table of `bank`'s own verifiers.
pub fn eia(bank: &AuditBank, tau_dec: f64, tau_tru: f64) -> Vec<EiaRow> {
    let b = bank.bias();
    bank.verifiers.iter().map(|(name, v)| eia_row(bank, &b, name, kind::VERIFIER, v, tau_dec, tau_tru)).collect()
}

/// Q after the demotion-only operator with verifier scores `v`.
pub fn demote(r: &[f64], v: &[f64]) -> Vec<f64> {
    r.iter().zip(v).map(|(&r, &v)| if r >= 0.5 && v < 0.5 { 0.0 } else { r }).collect()
}

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
    /// Leniency and sensitivity of the self-grade.
    pub grader: GraderRow,
    /// EIA per verifier, ensemble and the gold-fit bound.
    pub eia: Vec<EiaRow>,
    /// Corr(nu_a, nu_b) for every pair of the bank's verifiers.
    pub error_correlations: Vec<ensemble::ErrorCorrelation>,
    /// The demotion-only payoff per row of `eia`, the oracle and label-blind calibration.
    pub payoff: Vec<payoff::PayoffRow>,
    /// Proposition 2 per row of `eia`.
    pub proposition2: Vec<controls::Prop2Row>,
    /// Filtering controls at the selected verifier's budget.
    pub controls: Vec<controls::ControlRow>,
    /// Global calibration of r.
    pub calibration: Vec<calibration::CalibrationRow>,
    /// Leave-one-seed-out folds (empty without two seeds).
    pub leave_one_seed_out: Vec<loso::Fold>,
    /// What each verifier stage spent.
    pub cost: Vec<CostRow>,
}

/// Audit `bank`. A verifier that left memories unscored (NaN) gets its EIA, payoff and
/// Proposition 2 rows over the memories it scored (the EIA row says how many it skipped); the
/// tables that combine verifiers (ensembles, error correlations, controls, leave-one-seed-out)
/// use the verifiers that scored every memory.
pub fn audit(bank: &AuditBank, o: &Options) -> Audit {
    let complete = |v: &[f64]| v.iter().all(|x| !x.is_nan());
    let full =
        AuditBank { verifiers: bank.verifiers.iter().filter(|(_, v)| complete(v)).cloned().collect(), ..bank.clone() };
    let mut a = audit_complete(&full, o);
    let at = a.eia.iter().rposition(|r| r.kind == kind::VERIFIER).map_or(0, |i| i + 1);
    let mut payoff_at = a.payoff.iter().rposition(|r| r.kind == kind::VERIFIER).map_or(0, |i| i + 1);
    for (j, (name, v)) in bank.verifiers.iter().filter(|(_, v)| !complete(v)).enumerate() {
        let idx: Vec<usize> = (0..v.len()).filter(|&i| !v[i].is_nan()).collect();
        let sub =
            AuditBank { verifiers: vec![(name.clone(), idx.iter().map(|&i| v[i]).collect())], ..bank.subset(&idx) };
        let sv = &sub.verifiers[0].1;
        let mut row = eia_row(&sub, &sub.bias(), name, kind::VERIFIER, sv, o.tau_dec, o.tau_tru);
        row.skipped = v.len() - idx.len();
        a.eia.insert(at + j, row);
        if idx.is_empty() {
            continue;
        }
        let cand: Candidate = (name.as_str(), kind::VERIFIER, sv);
        if let Some(p) = payoff::payoff(&sub, &[cand], o.bootstrap, o.rng_seed).into_iter().next() {
            a.payoff.insert(payoff_at, p);
            payoff_at += 1;
        }
        a.proposition2.extend(controls::proposition2(&sub, &[cand]));
    }
    a.cost = bank.cost.clone();
    a
}

fn audit_complete(bank: &AuditBank, o: &Options) -> Audit {
    let blind = ensemble::with_ensembles(bank);
    let gold = ensemble::gold_fit(bank);
    let mut rows: Vec<Candidate> = blind
        .verifiers
        .iter()
        .enumerate()
        .map(|(i, (n, v))| (n.as_str(), if i < bank.verifiers.len() { kind::VERIFIER } else { kind::ENSEMBLE }, &v[..]))
        .collect();
    if let Some(g) = &gold {
        rows.push((ensemble::GOLD_FIT, kind::GOLD_FIT, g));
    }
    let b = bank.bias();
    let eia: Vec<EiaRow> = rows.iter().map(|&(n, k, v)| eia_row(bank, &b, n, k, v, o.tau_dec, o.tau_tru)).collect();
    let payoff = payoff::payoff(bank, &rows, o.bootstrap, o.rng_seed);
    // The budget to match: the label-blind row passing EIA that pays most, else the one that pays most.
    let selectable = || (0..rows.len()).filter(|&i| rows[i].1 != kind::GOLD_FIT);
    let pays = |i: usize| payoff[i].delta;
    let best = best_passing(selectable(), |i| eia[i].pass, pays).or_else(|| best_passing(selectable(), |_| true, pays));
    let controls =
        best.map(|i| controls::controls(bank, (rows[i].0, rows[i].2), o.random_draws, o.rng_seed)).unwrap_or_default();
    Audit {
        memories: bank.r.len(),
        tau_dec: o.tau_dec,
        tau_tru: o.tau_tru,
        bootstrap: o.bootstrap,
        rng_seed: o.rng_seed,
        grader: grader(bank),
        eia,
        error_correlations: ensemble::error_correlations(bank),
        proposition2: controls::proposition2(bank, &rows),
        payoff,
        controls,
        calibration: calibration::calibration(bank),
        leave_one_seed_out: loso::loso(&blind, o.tau_dec, o.tau_tru),
        cost: Vec::new(),
    }
}
