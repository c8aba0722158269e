//! OpenInference traces with their evaluations, as OTLP JSON (an `ExportTraceServiceRequest`,
//! `{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}`, one per file or one per line, as
//! the OpenTelemetry SDK's OTLP encoder and the Collector's file exporter write it) using
//! OpenInference's semantic conventions (openinference-semantic-conventions 0.1.42): each span
//! whose `openinference.span.kind` is not EVALUATOR is a memory (its `input.value`,
//! `output.value`, `llm.model_name`) when an evaluation speaks to it; each EVALUATOR span under it
//! (by `parentSpanId`) is a score named by `evaluation.name`, its value `evaluation.score`, else
//! its `evaluation.label` read as pass/fail words; its label and explanation kept; the model that
//! graded it the EVALUATOR span's `llm.model_name`, else that of an LLM span under it. Span ids
//! are compared as written (hex or base64). Phoenix's own span-evaluation export is not read.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::{EvalLog, EvalSample, SampleScore};
use crate::error::{Error, Result};

/// One span, its attributes flattened.
struct Span {
    id: String,
    parent: Option<String>,
    attrs: HashMap<String, Value>,
}

impl Span {
    fn text(&self, key: &str) -> Option<String> {
        self.attrs.get(key).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
    }
    fn kind(&self) -> String {
        self.text("openinference.span.kind").unwrap_or_default().to_uppercase()
    }
}

/// An OTLP `AnyValue` as JSON (`intValue` is a string in protobuf's JSON mapping).
fn any_value(v: &Value) -> Value {
    if let Some(s) = v.get("stringValue") {
        return s.clone();
    }
    if let Some(x) = v.get("doubleValue") {
        return x.clone();
    }
    if let Some(x) = v.get("intValue") {
        return x.as_str().and_then(|s| s.parse::<i64>().ok()).map_or(x.clone(), Value::from);
    }
    v.get("boolValue").cloned().unwrap_or(Value::Null)
}

/// Every span of one request.
fn spans_of(request: &Value, out: &mut Vec<Span>) {
    let list = |v: &Value, k: &str| v.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
    for rs in list(request, "resourceSpans") {
        for ss in list(&rs, "scopeSpans") {
            for s in list(&ss, "spans") {
                let attrs = list(&s, "attributes")
                    .iter()
                    .filter_map(|a| Some((a.get("key")?.as_str()?.to_string(), any_value(a.get("value")?))))
                    .collect();
                let text = |k: &str| s.get(k).and_then(Value::as_str).filter(|x| !x.is_empty()).map(str::to_string);
                out.push(Span { id: text("spanId").unwrap_or_default(), parent: text("parentSpanId"), attrs });
            }
        }
    }
}

/// A label as a verdict: pass words 1, fail words 0.
fn label_value(label: &str) -> Option<f64> {
    match label.trim().to_lowercase().as_str() {
        "correct" | "pass" | "passed" | "true" | "yes" | "relevant" => Some(1.0),
        "incorrect" | "fail" | "failed" | "false" | "no" | "hallucinated" | "unrelated" | "irrelevant" => Some(0.0),
        _ => None,
    }
}

/// The traces at `path` (`.json`: one request; `.jsonl`: one a line).
pub fn read(path: &Path) -> Result<EvalLog> {
    let file = std::fs::File::open(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let mut spans = Vec::new();
    if path.extension().and_then(|e| e.to_str()) == Some("jsonl") {
        for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line.map_err(|source| Error::Read { path: path.into(), source })?;
            if !line.trim().is_empty() {
                let v =
                    serde_json::from_str(&line).map_err(|e| Error::input_from(path, format!("line {}", i + 1), e))?;
                spans_of(&v, &mut spans);
            }
        }
    } else {
        let v: Value = serde_json::from_reader(std::io::BufReader::new(file))
            .map_err(|e| Error::input_from(path, "not OTLP JSON", e))?;
        spans_of(&v, &mut spans);
    }
    if spans.is_empty() {
        return Err(Error::input(path, "no spans (not OTLP JSON: resourceSpans[].scopeSpans[].spans[])"));
    }
    let by_id: HashMap<&str, usize> = spans.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    // The evaluated span of an EVALUATOR: its nearest ancestor that is not one.
    let evaluated = |mut at: usize| -> Option<usize> {
        for _ in 0..64 {
            let p = *by_id.get(spans[at].parent.as_deref()?)?;
            if spans[p].kind() != "EVALUATOR" {
                return Some(p);
            }
            at = p;
        }
        None
    };
    let mut warnings = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    let mut scores: HashMap<usize, Vec<SampleScore>> = HashMap::new();
    for (i, s) in spans.iter().enumerate().filter(|(_, s)| s.kind() == "EVALUATOR") {
        let at = format!("{}: span {}", path.display(), s.id);
        let Some(target) = evaluated(i) else {
            warnings.push(format!("{at}: an evaluation whose evaluated span is not in the file: left out"));
            continue;
        };
        let name = s.text("evaluation.name").unwrap_or_else(|| "evaluation".into());
        let label = s.text("evaluation.label");
        let value =
            s.attrs.get("evaluation.score").and_then(Value::as_f64).or_else(|| label.as_deref().and_then(label_value));
        if value.is_none() {
            warnings.push(format!(
                "{at}: evaluation '{name}' has no score and a label ({label:?}) lucid cannot read: left unscored"
            ));
        }
        let grader_model = s.text("llm.model_name").or_else(|| {
            spans
                .iter()
                .find(|c| c.parent.as_deref() == Some(s.id.as_str()) && c.kind() == "LLM")
                .and_then(|c| c.text("llm.model_name"))
        });
        let raw = serde_json::json!({"score": s.attrs.get("evaluation.score"), "label": label});
        if !scores.contains_key(&target) {
            order.push(target);
        }
        scores.entry(target).or_default().push(SampleScore {
            name,
            raw: raw.to_string(),
            value,
            answer: None,
            explanation: s.text("evaluation.explanation"),
            grader_model,
        });
    }
    // Spans in the order their first evaluation ends (the SDK writes a span when it ends).
    let samples = order
        .into_iter()
        .map(|i| {
            let s = &spans[i];
            let mut sc = scores.remove(&i).unwrap_or_default();
            sc.sort_by(|a, b| a.name.cmp(&b.name));
            EvalSample {
                id: s.id.clone(),
                epoch: 1,
                input: s.text("input.value").unwrap_or_default(),
                target: None,
                answer: s.text("output.value"),
                model: s.text("llm.model_name"),
                status: "ok".into(),
                scores: sc,
            }
        })
        .collect::<Vec<_>>();
    Ok(EvalLog {
        tool: "openinference".into(),
        format: "OTLP JSON traces, OpenInference semantic conventions 0.1.42".into(),
        status: "success".into(),
        task: String::new(),
        model: EvalLog::sample_models(&samples),
        samples,
        warnings,
    })
}
