//! Inspect AI logs (`inspect_ai.log`, log format version 2, as inspect-ai 0.3.285 writes it): an
//! `.eval` zip of `header.json` (the eval: task, model, model roles, scorers and their arguments,
//! status), `samples/<id>_epoch_<n>.json` (one sample and epoch: input, target, output, scores,
//! error, events), `summaries.json` and `reductions.json`; or one `.json` log holding the same with
//! its samples inline. A dict value is one score per key (`scorer.key`). The model that graded a
//! score is the model of the model events inside that scorer's span, else the scorer's `model`
//! argument, else the `grader` model role. A newer format version is read as version 2 with a
//! warning; a running eval's zip (no header yet) is read from its journal with a warning.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::inspect_value::{Read, value_to_float};
use super::zip_entries::ZipEntries;
use super::{EvalLog, EvalSample, SampleScore};
use crate::error::{Error, Result};

/// The log format version this reader was written from (`LOG_SCHEMA_VERSION`).
pub const VERSION: i64 = 2;

#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    version: Option<i64>,
    #[serde(default)]
    status: Option<String>,
    eval: Eval,
    #[serde(default)]
    samples: Option<Vec<Sample>>,
}

#[derive(Deserialize)]
struct Eval {
    #[serde(default)]
    task: String,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    model_roles: Option<HashMap<String, Value>>,
    #[serde(default)]
    scorers: Option<Vec<Scorer>>,
}

#[derive(Deserialize)]
struct Scorer {
    name: String,
    #[serde(default)]
    options: Option<HashMap<String, Value>>,
}

#[derive(Deserialize)]
struct Sample {
    id: Value,
    #[serde(default = "one")]
    epoch: u32,
    #[serde(default)]
    input: Value,
    #[serde(default)]
    target: Value,
    #[serde(default)]
    output: Option<Output>,
    #[serde(default)]
    scores: Option<HashMap<String, Score>>,
    #[serde(default)]
    error: Option<SampleError>,
    #[serde(default)]
    events: Vec<Event>,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize)]
struct Output {
    #[serde(default)]
    completion: Option<String>,
}

#[derive(Deserialize)]
struct Score {
    value: Value,
    #[serde(default)]
    answer: Option<String>,
    #[serde(default)]
    explanation: Option<String>,
}

#[derive(Deserialize)]
struct SampleError {
    #[serde(default)]
    message: String,
}

/// The parts of an event that say who graded what: spans (their id, parent, type and name) and
/// model events (their span and model). Everything else in an event is skipped unread.
#[derive(Deserialize)]
struct Event {
    event: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    span_id: Option<String>,
    #[serde(default)]
    parent_id: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default, flatten)]
    _rest: HashMap<String, IgnoredAny>,
}

/// The Inspect log at `path` (`.eval` or `.json`).
pub fn read(path: &Path) -> Result<EvalLog> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "eval" => read_eval(path),
        "json" => {
            let file = std::fs::File::open(path).map_err(|source| Error::Read { path: path.into(), source })?;
            let mut h: Header = serde_json::from_reader(std::io::BufReader::new(file))
                .map_err(|e| Error::input_from(path, "not an Inspect log", e))?;
            let samples = h.samples.take().unwrap_or_default();
            let mut log = start(path, &h)?;
            let defaults = Defaults::of(&h.eval);
            for s in samples {
                let where_ = format!("sample {} epoch {}", id_text(&s.id), s.epoch);
                log.samples.push(sample(path, &where_, s, &defaults, &mut log.warnings));
            }
            Ok(log)
        }
        other => Err(Error::input(path, format!("an Inspect log is an .eval or a .json file, not '.{other}'"))),
    }
}

fn read_eval(path: &Path) -> Result<EvalLog> {
    let mut zip = ZipEntries::open(path)?;
    let parse = |bytes: Vec<u8>, entry: &str| -> Result<Header> {
        serde_json::from_slice(&bytes)
            .map_err(|e| Error::input_from(path, format!("{entry}: not an Inspect header"), e))
    };
    let (header, journal) = if zip.has("header.json") {
        (parse(zip.read("header.json")?, "header.json")?, false)
    } else if zip.has("_journal/start.json") {
        (parse(zip.read("_journal/start.json")?, "_journal/start.json")?, true)
    } else {
        return Err(Error::input(path, "neither header.json nor _journal/start.json: not an Inspect .eval log"));
    };
    let mut log = start(path, &header)?;
    if journal {
        log.status = "started".into();
        log.warnings.push(format!(
            "{}: no header.json (the eval had not finished writing): read from its journal, with the samples written so far",
            path.display()
        ));
    }
    let defaults = Defaults::of(&header.eval);
    let mut names: Vec<String> =
        zip.names().into_iter().filter(|n| n.starts_with("samples/") && n.ends_with(".json")).collect();
    names.sort_by_key(|n| sample_order(n));
    for name in names {
        let bytes = zip.read(&name)?;
        let s: Sample =
            serde_json::from_slice(&bytes).map_err(|e| Error::input_from(path, format!("{name}: not a sample"), e))?;
        drop(bytes);
        log.samples.push(sample(path, &name, s, &defaults, &mut log.warnings));
    }
    Ok(log)
}

/// An entry name's (epoch, id) order key: `samples/q10_epoch_2.json` sorts after `q9`'s.
fn sample_order(name: &str) -> (u32, u64, String) {
    let stem = name.trim_start_matches("samples/").trim_end_matches(".json");
    let (id, epoch) = stem.rsplit_once("_epoch_").unwrap_or((stem, "0"));
    let digits: String = id.chars().filter(char::is_ascii_digit).collect();
    (epoch.parse().unwrap_or(0), digits.parse().unwrap_or(u64::MAX), id.to_string())
}

/// The log's facts, and a warning for a format newer than this reader's.
fn start(path: &Path, h: &Header) -> Result<EvalLog> {
    let version = h.version.unwrap_or(1);
    let mut warnings = Vec::new();
    if version > VERSION {
        warnings.push(format!(
            "{}: Inspect log format version {version}, newer than the version {VERSION} lucid reads: read as version {VERSION} (check the import: fields this version renamed read as absent)",
            path.display()
        ));
    }
    Ok(EvalLog {
        tool: "inspect".into(),
        format: format!("Inspect log version {version}"),
        status: h.status.clone().unwrap_or_else(|| "started".into()),
        task: h.eval.task.clone(),
        model: h.eval.model.clone(),
        samples: Vec::new(),
        warnings,
    })
}

/// Who grades a score when its sample's events do not say: the scorer's `model` argument (by
/// the name Inspect gives each scorer: a second `model_graded_qa` is `model_graded_qa1`); for
/// Inspect's own model-graded scorers, else the `grader` model role, else (as Inspect falls back)
/// the model under evaluation.
struct Defaults {
    by_scorer: HashMap<String, String>,
    grader_role: Option<String>,
    evaluated: Option<String>,
}

impl Defaults {
    fn of(eval: &Eval) -> Defaults {
        let mut by_scorer = HashMap::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for s in eval.scorers.iter().flatten() {
            let n = seen.entry(s.name.as_str()).or_default();
            let name = if *n == 0 { s.name.clone() } else { format!("{}{n}", s.name) };
            *n += 1;
            if let Some(Value::String(m)) = s.options.as_ref().and_then(|o| o.get("model")) {
                by_scorer.insert(name, m.clone());
            }
        }
        let role = eval.model_roles.as_ref().and_then(|r| r.get("grader"));
        let grader_role = role.and_then(|r| r.as_str().or_else(|| r.get("model").and_then(Value::as_str)));
        Defaults { by_scorer, grader_role: grader_role.map(str::to_string), evaluated: eval.model.clone() }
    }
}

fn id_text(id: &Value) -> String {
    id.as_str().map_or_else(|| id.to_string(), str::to_string)
}

/// Text of an input or target: a string, a list of strings (joined), a chat (its messages'
/// content joined).
fn text_of(v: &Value) -> Option<String> {
    let part = |m: &Value| match m {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => match o.get("content") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(parts)) => {
                Some(parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"))
            }
            _ => None,
        },
        _ => None,
    };
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => Some(items.iter().filter_map(part).collect::<Vec<_>>().join("\n")),
        other => Some(other.to_string()),
    }
}

/// The model of each scorer span's model events (`scorer name -> model`).
fn graders(events: &[Event]) -> HashMap<String, String> {
    let mut spans: HashMap<&str, (&str, &str, Option<&str>)> = HashMap::new();
    for e in events.iter().filter(|e| e.event == "span_begin") {
        if let (Some(id), Some(name)) = (e.id.as_deref(), e.name.as_deref()) {
            spans.insert(id, (e.kind.as_deref().unwrap_or(""), name, e.parent_id.as_deref()));
        }
    }
    let mut out = HashMap::new();
    for e in events.iter().filter(|e| e.event == "model") {
        let (mut at, mut hops) = (e.span_id.as_deref(), 0);
        while let (Some(id), true) = (at, hops < 64) {
            match spans.get(id) {
                Some(("scorer", name, _)) => {
                    if let Some(m) = &e.model {
                        out.entry(name.to_string()).or_insert_with(|| m.clone());
                    }
                    break;
                }
                Some((_, _, parent)) => at = *parent,
                None => break,
            }
            hops += 1;
        }
    }
    out
}

/// One sample as the tables keep it; `at` names it in warnings.
fn sample(path: &Path, at: &str, s: Sample, d: &Defaults, warnings: &mut Vec<String>) -> EvalSample {
    let graded_by = graders(&s.events);
    let mut scores: Vec<SampleScore> = Vec::new();
    for (name, sc) in s.scores.unwrap_or_default() {
        let grader_model = graded_by.get(&name).or_else(|| d.by_scorer.get(&name)).cloned().or_else(|| {
            let own = name.starts_with("model_graded");
            own.then(|| d.grader_role.clone().or_else(|| d.evaluated.clone())).flatten()
        });
        // A scorer's dict value (several metrics at once) is one score per key, `scorer.key`,
        // each read as Inspect's metrics read a dict's values.
        let parts: Vec<(String, &Value)> = match &sc.value {
            Value::Object(m) => m.iter().map(|(k, v)| (format!("{name}.{k}"), v)).collect(),
            v => vec![(name.clone(), v)],
        };
        for (part, v) in parts {
            let value = match value_to_float(v) {
                Read::Float(x) => Some(x),
                Read::Unknown => {
                    warnings.push(format!(
                        "{}: {at}: score '{part}' is {v}, which Inspect's value_to_float cannot read (it reads it as 0): left unscored",
                        path.display()
                    ));
                    None
                }
            };
            scores.push(SampleScore {
                raw: v.to_string(),
                value,
                answer: sc.answer.clone(),
                explanation: sc.explanation.clone(),
                grader_model: grader_model.clone(),
                name: part,
            });
        }
    }
    scores.sort_by(|a, b| a.name.cmp(&b.name));
    let status = match &s.error {
        Some(e) => format!("error: {}", e.message.lines().next().unwrap_or("")),
        None => "ok".into(),
    };
    if scores.is_empty() {
        warnings.push(format!("{}: {at}: no scores ({status}): imported ungraded, out of the audit", path.display()));
    }
    EvalSample {
        id: id_text(&s.id),
        epoch: s.epoch,
        input: text_of(&s.input).unwrap_or_default(),
        target: text_of(&s.target),
        answer: s.output.and_then(|o| o.completion).filter(|c| !c.is_empty()),
        model: None,
        status,
        scores,
    }
}
