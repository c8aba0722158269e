//! lm-eval's per-sample logs (`lm_eval --log_samples`: `samples_<task>_<date>.jsonl`, as
//! lm-eval 0.4.13's EvaluationTracker writes them): one JSON object a line per document and
//! filter — `doc_id`, `doc`, `target`, `arguments` (the prompt is `gen_args_0.arg_0`), `resps`,
//! `filtered_resps`, `filter`, `metrics` (the names of its metrics) and each metric's value under
//! its name. Each line is a memory (a filter other than `none` is part of its id), each metric a
//! score read as a number (a boolean as 1/0). The file has no version of its own: the
//! `results_<date>.json` beside it, when there, names the lm-eval version (a version past 0.4 is
//! read as 0.4 with a warning) and the model; lm-eval records no grading model.

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::{EvalLog, EvalSample, SampleScore};
use crate::error::{Error, Result};

/// The lm-eval series this reader was written from.
pub const SERIES: &str = "0.4";

/// The lm-eval log at `path`.
pub fn read(path: &Path) -> Result<EvalLog> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let task = name.strip_prefix("samples_").and_then(|n| n.rsplit_once('_')).map_or("", |(t, _)| t);
    let mut log = EvalLog {
        tool: "lm-eval".into(),
        format: format!("lm-eval {SERIES} sample log"),
        status: "success".into(),
        task: task.to_string(),
        ..EvalLog::default()
    };
    results_beside(path, name, &mut log);
    let file = std::fs::File::open(path).map_err(|source| Error::Read { path: path.into(), source })?;
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| Error::Read { path: path.into(), source })?;
        if line.trim().is_empty() {
            continue;
        }
        let r: Value =
            serde_json::from_str(&line).map_err(|e| Error::input_from(path, format!("line {}", i + 1), e))?;
        log.samples.push(sample(path, i + 1, &r, &mut log.warnings)?);
    }
    Ok(log)
}

/// The lm-eval version and the model from `results_<date>.json` beside `path`.
fn results_beside(path: &Path, name: &str, log: &mut EvalLog) {
    let Some(date) = name.strip_suffix(".jsonl").and_then(|n| n.rsplit_once('_')).map(|(_, d)| d) else { return };
    let results = path.with_file_name(format!("results_{date}.json"));
    let Some(d) = std::fs::read(&results).ok().and_then(|b| serde_json::from_slice::<Value>(&b).ok()) else { return };
    if let Some(v) = d.get("lm_eval_version").and_then(Value::as_str) {
        log.format = format!("lm-eval {v} sample log");
        if !v.starts_with(&format!("{SERIES}.")) {
            log.warnings.push(format!(
                "{}: written by lm-eval {v} (per {}), not the {SERIES} series lucid reads: read as {SERIES}",
                path.display(),
                results.display()
            ));
        }
    }
    let model = d.pointer("/config/model").and_then(Value::as_str);
    let args = d.pointer("/config/model_args").and_then(Value::as_str).filter(|a| !a.is_empty());
    log.model = model.map(|m| args.map_or(m.to_string(), |a| format!("{m} ({a})")));
}

/// Line `line` of the file.
fn sample(path: &Path, line: usize, r: &Value, warnings: &mut Vec<String>) -> Result<EvalSample> {
    let doc_id = r.get("doc_id").ok_or_else(|| Error::input(path, format!("line {line}: no `doc_id`")))?;
    let filter = r.get("filter").and_then(Value::as_str).unwrap_or("none");
    let id = match filter {
        "none" => format!("doc {doc_id}"),
        f => format!("doc {doc_id} {f}"),
    };
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let names: Vec<String> = r
        .get("metrics")
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let mut scores = Vec::new();
    for name in names {
        let raw = r.get(&name).cloned().unwrap_or(Value::Null);
        let value = match &raw {
            Value::Number(n) => n.as_f64(),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        };
        if value.is_none() {
            warnings.push(format!(
                "{}: line {line} ({id}): metric '{name}' is {raw}, not a number: left unscored",
                path.display()
            ));
        }
        scores.push(SampleScore {
            name,
            raw: raw.to_string(),
            value,
            answer: None,
            explanation: None,
            grader_model: None,
        });
    }
    if scores.is_empty() {
        warnings.push(format!("{}: line {line} ({id}): no metrics: imported ungraded", path.display()));
    }
    let answer = r.get("filtered_resps").and_then(|f| match f {
        Value::Array(items) => items.first().map(text),
        other => Some(text(other)),
    });
    let input = r.pointer("/arguments/gen_args_0/arg_0").map(text).or_else(|| r.get("doc").map(Value::to_string));
    Ok(EvalSample {
        id,
        epoch: 1,
        input: input.unwrap_or_default(),
        target: r.get("target").map(text),
        answer,
        model: None,
        status: "ok".into(),
        scores,
    })
}
