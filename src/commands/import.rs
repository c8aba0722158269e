//! `lucid import`: another agent's bank as a run folder, through a one-stage pipeline (the
//! `import` stage), so an unchanged bank is served from the stage store and `lucid audit`,
//! `lucid query` and the reports read the run as they read one of lucid's own. The pipeline is
//! the command's own business, built in memory and run without a file: what it would refuse is
//! refused first in the command line's terms, and its failures name the user's files by flag,
//! never the pipeline or its stage.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::werr;
use crate::error::{Error, Result};
use crate::import::ImportConfig;
use crate::import::evallog::is_eval_preset;
use crate::import::gold::GoldConfig;
use crate::pipeline::RunOptions;
use crate::stages::registry::Stages;

/// The id of the one stage `lucid import` runs.
const STAGE: &str = "bank";

/// `NAME=VALUE` pairs.
fn pairs<'a>(flag: &str, items: &'a [String]) -> Result<Vec<(&'a str, &'a str)>> {
    items
        .iter()
        .map(|s| s.split_once('=').ok_or_else(|| Error::usage(format!("--{flag} {s}: expected NAME=VALUE"))))
        .collect()
}

/// A value read as YAML would read it (a name of an enum).
fn named<T: serde::de::DeserializeOwned>(flag: &str, v: &str) -> Result<T> {
    serde_json::from_value(v.into()).map_err(|e| Error::usage(format!("--{flag} {v}: {e}")))
}

fn absolute(p: &Path) -> Result<String> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_err(|source| Error::Read { path: ".".into(), source })?.join(p)
    };
    Ok(abs.display().to_string())
}

/// The files of the command line: the bank (no flag) and each file flag's, as typed.
fn files(a: &ImportArgs) -> Vec<(Option<&'static str>, &Path)> {
    let mut out = vec![(None, a.bank.as_path())];
    // An eval log's --truth names one of its scores, not a file.
    let truth = if is_eval_preset(&a.preset) { &None } else { &a.truth };
    for (flag, p) in [("--log", &a.log), ("--gold", &a.gold), ("--truth", truth)] {
        out.extend(p.as_deref().map(|p| (Some(flag), p)));
    }
    out
}

/// A file as the user named it: its flag (none for the bank) and its path as typed.
fn shown(flag: Option<&str>, p: &Path) -> String {
    match flag {
        Some(f) => format!("{f} {}", p.display()),
        None => p.display().to_string(),
    }
}

/// Refuse, in the command line's terms, what the pipeline would refuse in its own (its
/// in-memory pipeline, its stage): an unknown preset, a run name that is not a plain folder name, a file that
/// is not there.
fn check(a: &ImportArgs) -> Result<()> {
    if is_eval_preset(&a.preset) {
        if let Some((flag, _)) = [("--log", a.log.is_some()), ("--gold", a.gold.is_some())].iter().find(|f| f.1) {
            return Err(Error::usage(format!(
                "{flag}: an eval log carries its own targets and scores (name the exact score with --truth)"
            )));
        }
    } else {
        crate::import::presets::preset(&a.preset).map_err(|e| {
            let logs: Vec<&str> = crate::import::evallog::PRESETS.iter().map(|(n, _)| *n).collect();
            Error::usage(format!("--preset: {e}; eval logs: {}", logs.join(", ")))
        })?;
        if a.grader.is_some() {
            return Err(Error::usage("--grader names a score of an eval log (an eval-log preset)"));
        }
    }
    if a.name.is_empty() || a.name.starts_with('.') || a.name.contains(['/', '\\']) {
        return Err(Error::usage(format!("--name {:?}: a run's name is a plain folder name", a.name)));
    }
    match files(a).into_iter().find(|(_, p)| !p.is_file()) {
        Some((flag, p)) => Err(Error::input(shown(flag, p), "no such file")),
        None => Ok(()),
    }
}

/// A failure of the import stage as the user reads it: without the pipeline's instance and stage
/// (`bank[seed-0_arm-memento]: stage 'bank': `), and each file by its flag and its path as typed
/// (`--gold gold.jsonl: line 3: ...`) where the stage named the absolute path it read.
fn readable(failure: &str, a: &ImportArgs) -> Result<String> {
    let instance = format!("{STAGE}[");
    let msg = failure.split_once("]: ").filter(|(at, _)| at.starts_with(&instance)).map_or(failure, |(_, m)| m);
    let stage = format!("stage '{STAGE}': ");
    let msg = msg.strip_prefix(stage.as_str()).unwrap_or(msg);
    let mut named =
        files(a).into_iter().map(|(flag, p)| Ok((absolute(p)?, shown(flag, p)))).collect::<Result<Vec<_>>>()?;
    // The longest path first, so that none is replaced inside another.
    named.sort_by_key(|(abs, _)| std::cmp::Reverse(abs.len()));
    Ok(named.iter().fold(msg.to_string(), |m, (abs, name)| m.replace(abs.as_str(), name)))
}

/// The import config of the flags.
fn config(a: &ImportArgs) -> Result<ImportConfig> {
    let mut fields = serde_json::Map::new();
    for (k, v) in pairs("field", &a.fields)? {
        let value = if k == "plan" { serde_json::json!(v.split(',').collect::<Vec<_>>()) } else { v.into() };
        fields.insert(k.to_string(), value);
    }
    let labels = pairs("label", &a.labels)?
        .into_iter()
        .map(|(k, v)| {
            Ok((
                k.to_string(),
                v.parse::<u8>()
                    .ok()
                    .filter(|r| *r <= 1)
                    .ok_or_else(|| Error::usage(format!("--label {k}={v}: r is 0 or 1")))?,
            ))
        })
        .collect::<Result<_>>()?;
    let gold = a
        .gold
        .as_deref()
        .map(|g| -> Result<GoldConfig> {
            let mut c = serde_json::json!({"path": absolute(g)?, "match_on": a.match_on});
            if let Some(field) = &a.gold_answer {
                c["answer"] = field.clone().into();
            }
            if let Some(sep) = &a.alias_separator {
                c["alias_separator"] = sep.clone().into();
            }
            serde_json::from_value(c).map_err(|e| Error::usage(format!("--gold: {e}")))
        })
        .transpose()?;
    let eval = is_eval_preset(&a.preset).then(|| eval_mapping(a)).transpose()?;
    Ok(ImportConfig {
        preset: a.preset.clone(),
        bank: absolute(&a.bank)?,
        log: a.log.as_deref().map(absolute).transpose()?,
        gold,
        truth: if eval.is_some() { None } else { a.truth.as_deref().map(absolute).transpose()? },
        fields: serde_json::from_value(fields.into()).map_err(|e| Error::usage(format!("--field: {e}")))?,
        labels,
        label_source: a.label_source.as_deref().map(|s| named("label-source", s)).transpose()?,
        u_from: named("u-from", &a.u_from)?,
        invert_labels: a.invert_labels,
        eval,
    })
}

/// The mapping of an eval log's scores: the log read once for its score names (the stage's
/// tables are named after them), the user's --grader and --truth over the defaults.
fn eval_mapping(a: &ImportArgs) -> Result<crate::import::evallog::EvalMapping> {
    let log = crate::import::evallog::read(&a.preset, &a.bank)?;
    let truth = a.truth.as_deref().map(|t| t.display().to_string());
    crate::import::evallog::mapping(&a.bank, &log, a.grader.as_deref(), truth.as_deref())
}

/// `lucid import`; false when the import failed.
pub fn run(a: &ImportArgs) -> Result<bool> {
    check(a)?;
    let c = config(a)?;
    let arm = a.arm.clone().unwrap_or_else(|| c.preset.clone());
    let pipeline = serde_json::json!({
        "name": a.name,
        "runs_dir": absolute(&a.runs_dir)?,
        "seeds": [0],
        "arms": [arm],
        "stages": [{"id": STAGE, "kind": crate::stages::import::ImportStage::KIND, "matrix": ["seed", "arm"], "config": c}],
    });
    let opts = RunOptions {
        overrides: Vec::new(),
        limit: None,
        only: Vec::new(),
        dry_run: false,
        explain: false,
        quiet: true,
        cache_dir: a.cache_dir.clone().unwrap_or_else(crate::cache_dir::cache_dir),
        base_dir: std::env::current_dir().map_err(|source| Error::Read { path: ".".into(), source })?,
        sharing: Default::default(),
    };
    // Built in memory and run without a file: its name in errors is the command's.
    let summary = crate::pipeline::run_text::<Stages>(Path::new("lucid import"), &pipeline.to_string(), &opts)?;
    let mut out = std::io::stdout().lock();
    if !summary.failed.is_empty() {
        for f in &summary.failed {
            eprintln!("error: {}", readable(f, a)?);
        }
        return Ok(false);
    }
    writeln!(out, "imported {} ({}) -> {}", a.bank.display(), c.preset, summary.run_dir.display()).map_err(werr)?;
    match &c.eval {
        Some(m) => {
            let truth = m.truth.as_deref().unwrap_or("none (audit with hand labels: lucid audit RUN --sample N)");
            writeln!(out, "grader (r): {}; truth (U): {truth}; verifiers: {}", m.grader, m.verifiers.join(", "))
                .map_err(werr)?;
        }
        None => {
            let preset = crate::import::presets::preset(&c.preset).map_err(Error::usage)?;
            writeln!(out, "labels: {}", c.label_source.unwrap_or(preset.label_source).meaning()).map_err(werr)?;
        }
    }
    writeln!(out, "next: lucid audit {}", summary.run_dir.display()).map_err(werr)?;
    Ok(true)
}

/// `lucid import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The bank file.
    pub bank: PathBuf,
    /// Its layout: memento, memento-reward, reasoningbank, mem0, langmem, amem, letta or generic;
    /// or an eval log's tool: inspect.
    #[arg(long)]
    pub preset: String,
    /// An eval log's score playing the self-grade r (default: the first score a model graded).
    #[arg(long, value_name = "SCORE")]
    pub grader: Option<String>,
    /// The run to write (`<runs-dir>/<name>`).
    #[arg(long)]
    pub name: String,
    /// Memento's results log (answers, the judge's verdicts, ground truth).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// A gold file of questions and answers (JSONL/JSON/CSV/Parquet: id, question, answer, aliases).
    #[arg(long, value_name = "FILE")]
    pub gold: Option<PathBuf>,
    /// The gold file's answer field (default: the preset's: `answer`, Memento's `ground_truth`).
    #[arg(long)]
    pub gold_answer: Option<String>,
    /// Match memories to gold on `question` (exact text; default) or `id`.
    #[arg(long, default_value = "question")]
    pub match_on: String,
    /// What separates aliases written as one string.
    #[arg(long)]
    pub alias_separator: Option<String>,
    /// A per-id truth file `{id, u}` (an agentic benchmark's own evaluator); for an eval log, the
    /// exact score standing for U (default: `match`, `exact`, `exact_match` or `equals` when the log
    /// has one; `none`: no truth, audit with hand labels).
    #[arg(long, value_name = "FILE|SCORE")]
    pub truth: Option<PathBuf>,
    /// Where a memory's part is: `question=case`, `plan=think_list`, `answer=...`, `label=...`,
    /// `id=...`, `order=...` (dotted paths; over the preset's).
    #[arg(long = "field", value_name = "PART=PATH")]
    pub fields: Vec<String>,
    /// A label value and its r: `positive=1`, `fail=0` (over the preset's).
    #[arg(long = "label", value_name = "VALUE=R")]
    pub labels: Vec<String>,
    /// Where the labels came from: self-graded, judge-with-gold, judge, environment-reward, unlabelled.
    #[arg(long)]
    pub label_source: Option<String>,
    /// How U is decided: judge (normalised match against gold; default) or source (the source's verdict).
    #[arg(long, default_value = "judge")]
    pub u_from: String,
    /// The arm the memories are written under (default: the preset's name).
    #[arg(long)]
    pub arm: Option<String>,
    /// Read every label the other way round (ReasoningBank banks written before its fix).
    #[arg(long)]
    pub invert_labels: bool,
    /// Where runs live.
    #[arg(long, default_value = "runs")]
    pub runs_dir: PathBuf,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}
