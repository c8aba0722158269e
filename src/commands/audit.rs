//! `lucid audit`: the paper's bank-level tables for a bank file or an agent run's own bank.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::werr;
use crate::audit::{Columns, Options, audit, read_bank, tables};
use crate::error::{Error, Result};

/// `lucid audit`.
pub fn run(a: &AuditArgs) -> Result<()> {
    if a.bootstrap == 0 {
        return Err(Error::usage("--bootstrap must be at least 1"));
    }
    let cols = Columns {
        verifiers: a.verifiers.clone(),
        ensemble: a.ensemble.clone(),
        seed: a.seed_col.clone(),
        sc: a.sc_col.clone(),
        n: a.n_col.clone(),
        graded: a.graded_col.clone(),
        truth: true,
    };
    if a.sample.is_some() || a.labels.is_some() {
        return hand(a, &cols);
    }
    // A run with episodes but no truth (an imported bank without gold): its labels against the
    // verifiers, and why the rest cannot be computed.
    if a.bank.is_dir() && a.bank.join("episodes").is_dir() && !crate::audit::no_truth::has_truth(&a.bank)? {
        let t = crate::audit::no_truth::no_truth(&a.bank, a.arm.as_deref())?;
        let json = serde_json::json!({"no_truth": t}).to_string() + "\n";
        let mut md = crate::audit::no_truth::markdown(&t, &a.bank.display().to_string());
        // An eval log's audit says what the log is, after the title.
        if let (Some(n), Some(at)) = (crate::audit::eval_log::read(&a.bank)?, md.find("\n\n")) {
            md.insert_str(at + 2, &crate::audit::eval_log::markdown(&n));
        }
        return emit(a, "no_truth", &md, &json);
    }
    let mut bank = read_bank(&a.bank, &cols, a.arm.as_deref())?;
    // An eval log's samples are never retrieved: it has no reuse count, not a count of zero.
    let eval_log = if a.bank.is_dir() { crate::audit::eval_log::read(&a.bank)? } else { None };
    if eval_log.is_some() {
        bank.n = None;
    }
    let opts = Options {
        tau_dec: a.tau_dec,
        tau_tru: a.tau_tru,
        bootstrap: a.bootstrap,
        rng_seed: a.rng_seed,
        random_draws: a.random_draws,
    };
    let result = crate::audit::Audit { eval_log, ..audit(&bank, &opts) };
    let source = match &bank.arm {
        Some(arm) => format!("{} (arm {arm})", a.bank.display()),
        None => a.bank.display().to_string(),
    };
    let text = match a.format {
        AuditFormat::Md => tables::markdown(&result, &source),
        AuditFormat::Json => tables::json(&result).to_string() + "\n",
        AuditFormat::Html => tables::html(&result, &source),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).map_err(werr)?;
    if let Some(dir) = &a.out {
        let page = tables::write(&result, &source, dir)?;
        eprintln!("audit written: {}", page.display());
    }
    Ok(())
}

/// `lucid audit --sample N` (the labelling sheet) and `--labels FILE` (the audit from it).
fn hand(a: &AuditArgs, cols: &Columns) -> Result<()> {
    use crate::audit::{design, hand, sheet};
    let artifacts: Vec<&str> = crate::domains::registry::all().iter().map(|e| e.artifact).collect();
    let m = sheet::memories(&a.bank, cols, a.arm.as_deref(), &artifacts)?;
    let mut out = std::io::stdout().lock();
    if let Some(n) = a.sample {
        let strata = design::strata(&m.bank, n);
        let picked = design::draw(&strata, n, a.rng_seed)?;
        let spares = design::spares(&strata, &picked, a.rng_seed);
        out.write_all(sheet::sheet(&m, &picked, &spares).as_bytes()).map_err(werr)?;
        eprintln!(
            "{} of {} memories sampled: fill the u column (1 right, 0 wrong) of every row whose `replaces` is empty; \
             where you cannot judge a memory leave it blank and label the spare row that replaces it (the last {} \
             rows); a second labeller may fill a column u2 on any rows. Keep every row, then lucid audit {} --labels \
             SHEET.csv",
            picked.len(),
            m.bank.r.len(),
            spares.len(),
            a.bank.display()
        );
        if m.text.iter().all(|[_, answer, _]| answer.is_empty()) {
            eprintln!(
                "warning: {} holds no answers: the sheet's answer column is empty, so a labeller can judge only from the \
                 question and plan (an imported bank's answers come with its results log, `lucid import --log`)",
                a.bank.display()
            );
        }
        return Ok(());
    }
    let path = a.labels.as_ref().expect("called with --sample or --labels");
    let (rows, mut labels) = sheet::labels(path, &m)?;
    labels.stated = [
        label_error(&a.labeller_error, "--labeller-error")?,
        label_error(&a.second_labeller_error, "--second-labeller-error")?,
    ];
    let result =
        hand::hand_audit(&m.bank, rows, &labels, hand::HandOptions { tau_dec: a.tau_dec, tau_tru: a.tau_tru })?;
    drop(out);
    // The warnings hold for the plan too (too few labels, labellers agreeing too well).
    for w in &result.warnings {
        eprintln!("warning: {w}");
    }
    if a.plan {
        use crate::audit::label_plan;
        let strata = design::strata(&m.bank, rows);
        let p = label_plan::plan(&result, &strata, &labels.picked, &labels.unlabelled, a.rng_seed);
        let next: Vec<serde_json::Value> = p
            .next
            .iter()
            .map(|(i, h, on)| serde_json::json!({"memory": m.ids[*i], "stratum": h, "on_sheet": on}))
            .collect();
        let json = serde_json::json!({"plan": {"labelled": p.labelled, "verdicts": p.verdicts, "next": next}})
            .to_string()
            + "\n";
        let md = label_plan::markdown(&p, &m.ids, &a.bank.display().to_string());
        return emit(a, "plan", &md, &json);
    }
    let json = serde_json::json!({"hand_labels": result}).to_string() + "\n";
    let md = hand::markdown(&result, &a.bank.display().to_string());
    emit(a, "hand_labels", &md, &json)
}

/// Prints an audit that has no tables of the full audit (hand labels, no truth) in `--format`,
/// and writes `<stem>.md`, `.json` and `.html` into `--out` where given.
fn emit(a: &AuditArgs, stem: &str, md: &str, json: &str) -> Result<()> {
    let html = || crate::report::html::markdown_page(&format!("lucid audit: {}", a.bank.display()), md);
    let text = match a.format {
        AuditFormat::Md => md.to_string(),
        AuditFormat::Json => json.to_string(),
        AuditFormat::Html => html(),
    };
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(werr)?;
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write { path: dir.clone(), source })?;
        for (ext, body) in [("md", md.to_string()), ("json", json.to_string()), ("html", html())] {
            let path = dir.join(format!("{stem}.{ext}"));
            std::fs::write(&path, body).map_err(|source| Error::Write { path: path.clone(), source })?;
        }
        eprintln!("audit written: {}", dir.join(format!("{stem}.html")).display());
    }
    Ok(())
}

/// `lucid audit`'s defaults, shared with the `audit` stage.
const AUDIT: crate::audit::Options = crate::audit::Options::DEFAULT;

/// `lucid audit`.
#[derive(Args, Debug)]
pub struct AuditArgs {
    /// The bank: .parquet, .csv or .jsonl with columns r, u and one per verifier; or an agent run
    /// folder (its episodes of one arm: r, U from evaluation, detector channels as verifiers).
    pub bank: PathBuf,
    /// The arm whose bank to audit, for a run folder (default: lucid, else memento).
    #[arg(long)]
    pub arm: Option<String>,
    /// Verifier columns (default: every column named v_<name>).
    #[arg(long, value_delimiter = ',')]
    pub verifiers: Vec<String>,
    /// The judges the ensembles and the gold-fit combine (default: every verifier of a bank file;
    /// for a run, its judge stages without the detector's channels, the detector and panels).
    #[arg(long, value_delimiter = ',')]
    pub ensemble: Option<Vec<String>>,
    /// The fold column for leave-one-seed-out (used when the bank has it).
    #[arg(long, default_value = "seed")]
    pub seed_col: String,
    /// The self-consistency column for the self-consistency prune (used when the bank has it).
    #[arg(long, default_value = "sc")]
    pub sc_col: String,
    /// The reuse-count column (used when the bank has it).
    #[arg(long, default_value = "n")]
    pub n_col: String,
    /// Whether each memory's self-grade parsed (boolean or 0/1; used when the bank has it).
    #[arg(long, default_value = "graded")]
    pub graded_col: String,
    /// EIA decorrelation threshold: |Corr(nu, b)| below it.
    #[arg(long, default_value_t = AUDIT.tau_dec)]
    pub tau_dec: f64,
    /// EIA truthfulness threshold: Corr(V, U) above it.
    #[arg(long, default_value_t = AUDIT.tau_tru)]
    pub tau_tru: f64,
    /// Bootstrap resamples of the payoff.
    #[arg(long, default_value_t = AUDIT.bootstrap)]
    pub bootstrap: usize,
    /// Seed of the bootstrap and the random prunes.
    #[arg(long, default_value_t = AUDIT.rng_seed)]
    pub rng_seed: u64,
    /// Random prunes averaged in the budget-matched control.
    #[arg(long, default_value_t = AUDIT.random_draws)]
    pub random_draws: usize,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = AuditFormat::Md)]
    pub format: AuditFormat,
    /// Also write audit.md, audit.json and audit.html into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// For a bank without truth: print a labelling sheet of N memories (CSV: memory, question,
    /// answer, plan, u), stratified by label and verifier flags and seeded by --rng-seed, for a
    /// person to fill the u column and give back with --labels.
    #[arg(long, value_name = "N", conflicts_with = "labels")]
    pub sample: Option<usize>,
    /// Audit from hand labels: a CSV with columns memory and u (1 right, 0 wrong, empty not
    /// labelled), the sheet of --sample filled in, and optionally u2 (a second labeller on some
    /// rows: their disagreement is carried into the intervals): leniency, sensitivity, label
    /// sanity, each verifier's EIA axes and payoff, with 95 % intervals for the sampling design.
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// How often the labeller of column u errs: one rate (a share of labels the wrong way round),
    /// or two, WRONG_AS_RIGHT,RIGHT_AS_WRONG (a wrong memory labelled right, a right one labelled
    /// wrong). Each label is read through it and the intervals carry it; without it, a second
    /// labeller's disagreement estimates it, else the labels are taken as the truth.
    #[arg(long, value_name = "RATE[,RATE]", requires = "labels", value_delimiter = ',')]
    pub labeller_error: Vec<f64>,
    /// The same for the second labeller (column u2; default: --labeller-error).
    #[arg(long, value_name = "RATE[,RATE]", requires = "labeller_error", value_delimiter = ',')]
    pub second_labeller_error: Vec<f64>,
    /// With --labels: how many more labels would settle each open EIA verdict, in which strata,
    /// and which memories to label next (a seeded draw, --rng-seed).
    #[arg(long, requires = "labels")]
    pub plan: bool,
}

/// A labeller's stated error from `--labeller-error` values (`flag` names it in errors).
fn label_error(values: &[f64], flag: &str) -> Result<Option<crate::audit::estimator::LabelError>> {
    use crate::audit::estimator::LabelError;
    let e = match values {
        [] => return Ok(None),
        [e] => LabelError::symmetric(*e),
        [a, b] => LabelError { wrong_as_right: *a, right_as_wrong: *b },
        _ => return Err(Error::usage(format!("{flag} takes one rate or two (WRONG_AS_RIGHT,RIGHT_AS_WRONG)"))),
    };
    let ok = |x: f64| (0.0..0.5).contains(&x);
    if !ok(e.wrong_as_right) || !ok(e.right_as_wrong) {
        return Err(Error::usage(format!(
            "{flag} {values:?}: a rate is a share of labels in [0, 0.5) (0.05 for one label in twenty the wrong \
             way round); at 0.5 a label says nothing"
        )));
    }
    Ok(Some(e))
}

/// How `lucid audit` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditFormat {
    /// Markdown tables.
    Md,
    /// `{"tables": {...}}`.
    Json,
    /// One self-contained page.
    Html,
}
