//! promptfoo's results (`promptfoo eval -o results.json`, results version 3, as promptfoo
//! 0.121.20 writes it): `results.results` holds one row per test case × prompt × provider, its
//! rendered prompt, the provider's answer and `gradingResult.componentResults`, one per
//! assertion. Each row is a memory; each assertion a score named by its `metric` (else its
//! `type`; a second one of a name in a row gets `_2`), its value the assertion's pass (1) or fail
//! (0) as promptfoo decides it, its score and reason kept. The grading provider of a model-graded
//! assertion (llm-rubric, model-graded-closedqa, factuality, ...) is the assertion's own
//! `provider`, else the test's `options.provider` (defaultTest's merged in), else promptfoo's
//! default grader (named as such). A provider is named by its label, else its id. A newer
//! results version is read as version 3 with a warning.

use std::path::Path;

use serde_json::Value;

use super::{EvalLog, EvalSample, SampleScore};
use crate::error::{Error, Result};

/// The results version this reader was written from.
pub const VERSION: i64 = 3;

/// Assertion types whose verdict a model gives.
const MODEL_GRADED: &[&str] = &[
    "llm-rubric",
    "g-eval",
    "model-graded-closedqa",
    "model-graded-factuality",
    "factuality",
    "answer-relevance",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "select-best",
    "search-rubric",
];

/// A provider's name: its label, else its id.
fn provider_name(p: &Value) -> Option<String> {
    match p {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("label").or_else(|| o.get("id")).and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

/// The promptfoo results file at `path`.
pub fn read(path: &Path) -> Result<EvalLog> {
    let file = std::fs::File::open(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let d: Value = serde_json::from_reader(std::io::BufReader::new(file))
        .map_err(|e| Error::input_from(path, "not a promptfoo results file", e))?;
    let results = d.get("results").ok_or_else(|| Error::input(path, "no `results`: not `promptfoo eval -o` output"))?;
    let rows = results
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::input(path, "no `results.results` list: not `promptfoo eval -o` output"))?;
    let version = results.get("version").and_then(Value::as_i64).unwrap_or(0);
    let mut log = EvalLog {
        tool: "promptfoo".into(),
        format: format!("promptfoo results version {version}"),
        status: "success".into(),
        task: d.pointer("/config/description").and_then(Value::as_str).unwrap_or("").to_string(),
        ..EvalLog::default()
    };
    if version > VERSION {
        log.warnings.push(format!(
            "{}: promptfoo results version {version}, newer than the version {VERSION} lucid reads: read as version {VERSION}",
            path.display()
        ));
    }
    for (n, r) in rows.iter().enumerate() {
        log.samples.push(row(path, n, r, &mut log.warnings)?);
    }
    // The providers under evaluation, as the log's model (each sample keeps its own).
    log.model = EvalLog::sample_models(&log.samples);
    Ok(log)
}

/// One result row.
fn row(path: &Path, n: usize, r: &Value, warnings: &mut Vec<String>) -> Result<EvalSample> {
    let num = |k: &str| r.get(k).and_then(Value::as_u64);
    let model = r.get("provider").and_then(provider_name);
    let id = format!(
        "test {} prompt {} {}",
        num("testIdx").unwrap_or(n as u64),
        num("promptIdx").unwrap_or(0),
        model.as_deref().unwrap_or("")
    )
    .trim_end()
    .to_string();
    let at = format!("{}: result {} ({id})", path.display(), n + 1);
    let test_grader = r.pointer("/testCase/options/provider").and_then(provider_name);
    let mut scores: Vec<SampleScore> = Vec::new();
    let components = r.pointer("/gradingResult/componentResults").and_then(Value::as_array);
    for c in components.into_iter().flatten() {
        let a = c.get("assertion").cloned().unwrap_or(Value::Null);
        let kind = a.get("type").and_then(Value::as_str).unwrap_or("assertion").to_string();
        let base = a.get("metric").and_then(Value::as_str).map_or(kind.clone(), str::to_string);
        let count = scores.iter().filter(|s| s.name == base || s.name.starts_with(&format!("{base}_"))).count();
        let name = if count == 0 { base } else { format!("{base}_{}", count + 1) };
        let value = match c.get("pass") {
            Some(Value::Bool(p)) => Some(f64::from(u8::from(*p))),
            other => {
                warnings.push(format!("{at}: assertion '{name}' has no pass/fail ({other:?}): left unscored"));
                None
            }
        };
        let grader_model = MODEL_GRADED.contains(&kind.as_str()).then(|| {
            a.get("provider")
                .and_then(provider_name)
                .or_else(|| test_grader.clone())
                .unwrap_or_else(|| "promptfoo's default grader".into())
        });
        let raw = serde_json::json!({"pass": c.get("pass"), "score": c.get("score")});
        scores.push(SampleScore {
            name,
            raw: raw.to_string(),
            value,
            answer: None,
            explanation: c.get("reason").and_then(Value::as_str).map(str::to_string),
            grader_model,
        });
    }
    let error = r.get("error").and_then(Value::as_str).filter(|e| !e.is_empty());
    let status = match (error, num("failureReason")) {
        (Some(e), _) => format!("error: {}", e.lines().next().unwrap_or("")),
        (None, Some(2)) => "error".into(),
        _ => "ok".into(),
    };
    if scores.is_empty() {
        warnings.push(format!("{at}: no assertion results ({status}): imported ungraded"));
    }
    let target = r
        .pointer("/testCase/assert")
        .and_then(Value::as_array)
        .and_then(|list| list.iter().find(|a| a.get("type").and_then(Value::as_str) == Some("equals")))
        .and_then(|a| a.get("value"))
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));
    let answer = r.pointer("/response/output").map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_string));
    Ok(EvalSample {
        id,
        epoch: 1,
        input: r.pointer("/prompt/raw").and_then(Value::as_str).unwrap_or("").to_string(),
        target,
        answer,
        model,
        status,
        scores,
    })
}
