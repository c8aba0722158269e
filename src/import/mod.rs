//! Other agents' memory banks, imported: a bank file in its tool's own layout (a preset: Memento,
//! ReasoningBank, mem0, LangMem, A-MEM, Letta; or any JSON Lines / JSON / CSV / Parquet with a
//! field mapping), with — when given — Memento's results log, a gold file or a per-id truth file,
//! becomes the tables lucid's verifier stages, reports and audit read as they read a run of its
//! own agent: `tasks` (the questions), `episodes` (one per memory: its plan or trajectory, its
//! answer when the source has one, its label as r with the raw value kept, where the label came
//! from), `gold` and `evaluation` when truth is known. Nothing is dropped silently: an unknown
//! label value, a missing field, a duplicate id is an error naming the file and line; a memory
//! without gold, or whose gold the gold file gives in conflicting ways, is counted.

pub mod evallog;
pub mod gold;
pub mod presets;
pub mod records;
pub mod tables;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::gold::{Gold, GoldConfig};
use self::presets::{Fields, LabelSource, Preset};
use self::records::{Record, as_text, at};
use crate::datasets::qa::normalize::matches;
use crate::datasets::qa::{FactGold, FactTask};
use crate::error::{Error, Result};

/// What to import (the `import` stage's config; `lucid import`'s flags).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ImportConfig {
    /// The layout: memento, memento-reward, reasoningbank, mem0, langmem, amem, letta, or generic
    /// (then `fields` and, for a labelled bank, `labels` say everything).
    pub preset: String,
    /// The bank file.
    pub bank: String,
    /// Memento's results log (its answers and the judge's verdicts), joined to the bank on the
    /// question's exact text (the latest round of a question wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// A gold file of questions and answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<GoldConfig>,
    /// A per-id truth file `{id, u}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth: Option<String>,
    /// Where each part of a memory is (dotted paths; over the preset's).
    #[serde(default)]
    pub fields: Fields,
    /// Label value -> r (1 trusted, 0 untrusted), over the preset's; values compare as text,
    /// case-insensitively.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, u8>,
    /// Where the labels came from, over the preset's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_source: Option<LabelSource>,
    /// How U is decided when several truths are at hand: `judge` (the normalised match of the
    /// memory's answer against gold; the default) or `source` (the source's own verdict against
    /// its ground truth, e.g. Memento's reward).
    #[serde(default)]
    pub u_from: UFrom,
    /// Read every label the other way round (a bank written by ReasoningBank before its fix of
    /// `if reward == 0: status = "success"`; nothing in the file says which version wrote it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invert_labels: bool,
    /// An eval log's mapping: which score is r, which U, which the verifiers (eval-log presets
    /// only, [`evallog::PRESETS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval: Option<evallog::EvalMapping>,
}

/// How U is decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UFrom {
    /// The normalised match of the answer against gold.
    #[default]
    Judge,
    /// The source's own verdict.
    Source,
}

/// One imported memory.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportedMemory {
    /// Its position (the source's order, or its `order` field's).
    pub step: u64,
    /// Its task (`tasks.question_id`).
    pub question_id: i64,
    /// The source's id (or `line N`).
    pub source_id: String,
    /// Where it is in the bank file.
    pub line: u64,
    /// The question.
    pub question: String,
    /// Its plan or trajectory.
    pub plan: Option<String>,
    /// Its answer, when the source has one.
    pub answer: Option<String>,
    /// The label as the source wrote it.
    pub raw_label: Option<String>,
    /// r: 1 trusted, 0 untrusted.
    pub r: u8,
    /// Whether the memory has a label at all (an eval-log sample the grader did not score has
    /// none: its r is null in `episodes`).
    pub graded: bool,
    /// Where the label came from.
    pub label_source: LabelSource,
}

/// One memory's truth.
#[derive(Clone, Debug, PartialEq)]
pub struct Truth {
    /// The memory's step.
    pub step: u64,
    /// Its task.
    pub question_id: i64,
    /// U.
    pub u: u8,
    /// match / mismatch / no_answer / source verdict / truth file.
    pub verdict: &'static str,
    /// How U was decided.
    pub u_source: &'static str,
}

/// What an import made, and what it counted.
#[derive(Debug, Default)]
pub struct Imported {
    /// One task per memory.
    pub tasks: Vec<FactTask>,
    /// The memories.
    pub memories: Vec<ImportedMemory>,
    /// Gold of the tasks that have it.
    pub gold: Vec<FactGold>,
    /// U of the memories whose truth is known (none without truth).
    pub truth: Vec<Truth>,
    /// Whether any truth was given.
    pub has_truth: bool,
    /// Memories with no gold (or no truth-file row) when truth was given.
    pub without_truth: usize,
    /// Gold answers scored through their aliases only.
    pub alias_only: usize,
    /// Memories left unscored because the gold file answers their question (or id) in
    /// conflicting ways.
    pub ambiguous: usize,
    /// The gold file's keys written with conflicting answers, and the lines they are on.
    pub ambiguous_gold: BTreeMap<String, Vec<usize>>,
}

/// A memory's source verdict from Memento's results log, and its answer and ground truth.
struct Logged {
    answer: Option<String>,
    ground_truth: Option<(String, Vec<String>)>,
    verdict: Option<u8>,
}

/// Import `c`, its paths resolved by `resolve`.
pub fn import(c: &ImportConfig, resolve: impl Fn(&str) -> PathBuf) -> Result<Imported> {
    let preset = presets::preset(&c.preset).map_err(Error::usage)?;
    let fields = preset.fields.merged(&c.fields);
    let labels = label_map(preset, &c.labels);
    let source = c.label_source.unwrap_or(preset.label_source);
    let bank = resolve(&c.bank);
    let mut records = records::read(&bank)?;
    if records.is_empty() {
        return Err(Error::input(&bank, "no memories"));
    }
    let question = question_field(preset, &fields, source)?;
    if let Some(order) = &fields.order {
        sort_by(&mut records, order);
    }
    let logged = match &c.log {
        Some(log) => read_log(&resolve(log), preset.gold_answer.1)?,
        None => HashMap::new(),
    };
    // The preset's own answer field holds a call (ReasoningBank's actions): its argument is the
    // answer, and a memory that makes no such call has none. A field the user named is read as is.
    let call = preset.answer_call.filter(|_| c.fields.answer.is_none());
    let mut out = Imported::default();
    let mut ids = HashMap::new();
    for (step, r) in records.iter().enumerate() {
        let at_line = |m: String| Error::input(&bank, format!("line {}: {m}", r.line));
        let q = as_text(at(&r.value, &question)).ok_or_else(|| at_line(format!("no `{question}` (or it is empty)")))?;
        let q = q.trim().to_string();
        let source_id = match &fields.id {
            Some(f) => as_text(at(&r.value, f)).ok_or_else(|| at_line(format!("no `{f}`")))?,
            None => format!("line {}", r.line),
        };
        if let Some(first) = ids.insert(source_id.clone(), r.line) {
            return Err(at_line(format!("id `{source_id}` appears twice (first on line {first})")));
        }
        let (raw_label, r_value) = match (&fields.label, source) {
            (_, LabelSource::Unlabelled) => (None, 1),
            (Some(f), _) => {
                let raw = label_text(at(&r.value, f)).ok_or_else(|| at_line(format!("no label `{f}`")))?;
                let value = labels.get(&raw.to_lowercase()).copied().ok_or_else(|| {
                    let known: Vec<&String> = labels.keys().collect();
                    at_line(format!("label value '{raw}' is not mapped (mapped: {known:?}; add it under `labels:`)"))
                })?;
                (Some(raw), if c.invert_labels { 1 - value } else { value })
            }
            (None, _) => unreachable!("checked above"),
        };
        let answer = answer_of(&r.value, fields.answer.as_deref(), call, logged.get(&q));
        let question_id = step as i64;
        out.tasks.push(FactTask {
            question_id,
            task_id: source_id.clone(),
            question: q.clone(),
            topic: "general".into(),
            answer_type: "text".into(),
        });
        out.memories.push(ImportedMemory {
            step: step as u64,
            question_id,
            source_id,
            line: r.line as u64,
            question: q,
            plan: fields.plan.iter().filter_map(|f| as_text(at(&r.value, f))).reduce(|a, b| format!("{a}\n{b}")),
            answer,
            raw_label,
            r: r_value,
            graded: true,
            label_source: source,
        });
    }
    truths(c, preset, &resolve, &logged, &mut out)?;
    Ok(out)
}

/// The question's field, which every bank must name (a labelled bank its label's field too).
fn question_field(preset: &Preset, fields: &Fields, source: LabelSource) -> Result<String> {
    let question = fields.question.clone().ok_or_else(|| {
        Error::usage(format!("preset {}: name the question's field (`fields.question`)", preset.name))
    })?;
    if source != LabelSource::Unlabelled && fields.label.is_none() {
        return Err(Error::usage(format!(
            "preset {}: name the label's field (`fields.label`), or say `label_source: unlabelled`",
            preset.name
        )));
    }
    Ok(question)
}

/// A memory's answer: its `field` (where the preset's answer field holds a `call`, the call's
/// argument, and none when it makes no such call), else the answer its results-log row `log` has.
fn answer_of(value: &Value, field: Option<&str>, call: Option<&str>, log: Option<&Logged>) -> Option<String> {
    field
        .and_then(|f| as_text(at(value, f)))
        .and_then(|a| match call {
            Some(call) => called_with(&a, call).filter(|a| !a.trim().is_empty()),
            None => Some(a),
        })
        .or_else(|| log.and_then(|l| l.answer.clone()))
}

/// The preset's label map with the user's over it, keys in lower case.
fn label_map(preset: &Preset, extra: &BTreeMap<String, u8>) -> HashMap<String, u8> {
    let mut m: HashMap<String, u8> = preset.labels.iter().map(|(k, v)| (k.to_lowercase(), *v)).collect();
    m.extend(extra.iter().map(|(k, v)| (k.to_lowercase(), *v)));
    m
}

/// A label as text: booleans and numbers as written.
fn label_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        other => as_text(Some(other)),
    }
}

/// `records` in the order of their `order` field (numbers by value, else text), stably.
fn sort_by(records: &mut [Record], order: &str) {
    let key = |r: &Record| match at(&r.value, order) {
        Some(Value::Number(n)) => (0, n.as_f64().unwrap_or(f64::NAN), String::new()),
        other => (1, 0.0, as_text(other).unwrap_or_default()),
    };
    records.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(ka.2.cmp(&kb.2))
    });
}

/// The quoted argument of the last `call(...)` in `text` (`send_msg_to_user('3/2/22')` ->
/// `3/2/22`), its escapes read as Python reads them (`'it\'s'` -> `it's`); None when `text`
/// makes no such call or its quote is not closed.
fn called_with(text: &str, call: &str) -> Option<String> {
    let rest = &text[text.rfind(&format!("{call}("))? + call.len() + 1..];
    let mut chars = rest.trim_start().chars();
    let quote = chars.next().filter(|q| *q == '\'' || *q == '"')?;
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                e @ ('\\' | '\'' | '"') => out.push(e),
                other => out.extend(['\\', other]),
            },
            c if c == quote => return Some(out),
            c => out.push(c),
        }
    }
    None
}

/// Memento's results log by question text: the latest row of each question (its ground truth's
/// aliases cut at `separator`).
fn read_log(path: &Path, separator: Option<&str>) -> Result<HashMap<String, Logged>> {
    let mut out = HashMap::new();
    for r in records::read(path)? {
        let q =
            as_text(at(&r.value, "query")).ok_or_else(|| Error::input(path, format!("line {}: no `query`", r.line)))?;
        let verdict = match at(&r.value, "reward").or_else(|| at(&r.value, "judgement")) {
            Some(Value::Number(n)) => n.as_f64().map(|x| u8::from(x > 0.5)),
            Some(Value::Bool(b)) => Some(u8::from(*b)),
            Some(Value::String(s)) => match s.trim().to_lowercase().as_str() {
                "correct" | "true" | "yes" | "1" => Some(1),
                "incorrect" | "false" | "no" | "0" => Some(0),
                _ => None,
            },
            _ => None,
        };
        let logged = Logged {
            answer: as_text(at(&r.value, "pred_answer")),
            ground_truth: as_text(at(&r.value, "ground_truth")).map(|g| gold::split_answer(&g, separator, Vec::new())),
            verdict,
        };
        out.insert(q.trim().to_string(), logged);
    }
    Ok(out)
}

/// The truth of every memory the given truth speaks to: a truth file by id, else gold (a gold
/// file, or the log's ground truth) by the normalised match or the source's verdict.
fn truths(
    c: &ImportConfig,
    preset: &Preset,
    resolve: &impl Fn(&str) -> PathBuf,
    logged: &HashMap<String, Logged>,
    out: &mut Imported,
) -> Result<()> {
    let gold = c.gold.as_ref().map(|g| Gold::read(g, &resolve(&g.path), preset.gold_answer)).transpose()?;
    let truth_file = c.truth.as_ref().map(|t| gold::read_truth(&resolve(t))).transpose()?;
    out.has_truth = gold.is_some()
        || truth_file.is_some()
        || logged.values().any(|l| l.ground_truth.is_some() || l.verdict.is_some());
    out.alias_only = gold.as_ref().map_or(0, |g| g.alias_only);
    out.ambiguous_gold = gold.as_ref().map(|g| g.ambiguous.clone()).unwrap_or_default();
    for m in &out.memories {
        let key = gold.as_ref().map(|g| g.key(&m.source_id, &m.question));
        // Gold that answers the question in conflicting ways decides nothing: left unscored.
        if key.is_some_and(|k| out.ambiguous_gold.contains_key(k)) {
            out.ambiguous += 1;
            continue;
        }
        let log = logged.get(&m.question);
        let row =
            gold.as_ref().zip(key).and_then(|(g, k)| g.by_key.get(k)).map(|r| (r.answer.clone(), r.aliases.clone()));
        let row = row.or_else(|| log.and_then(|l| l.ground_truth.clone()));
        if let Some((answer, aliases)) = &row {
            out.gold.push(FactGold { question_id: m.question_id, answer: answer.clone(), aliases: aliases.clone() });
        }
        let by_file =
            truth_file.as_ref().and_then(|t| t.get(&m.source_id)).map(|u| (*u, "truth file", "the truth file's u"));
        let by_source = log
            .and_then(|l| l.verdict)
            .map(|u| (u, "source verdict", "the source's own verdict against its ground truth"));
        // A memory whose source keeps no answer cannot be judged (its truth is unknown, not 0).
        let by_judge = row.as_ref().zip(m.answer.as_ref()).map(|((answer, aliases), a)| {
            if matches(a, answer, aliases) {
                (1, "match", "normalised match against gold")
            } else {
                (0, "mismatch", "normalised match against gold")
            }
        });
        let chosen = match c.u_from {
            UFrom::Judge => by_file.or(by_judge).or(by_source),
            UFrom::Source => by_file.or(by_source).or(by_judge),
        };
        match chosen {
            Some((u, verdict, u_source)) => {
                out.truth.push(Truth { step: m.step, question_id: m.question_id, u, verdict, u_source })
            }
            None if out.has_truth => out.without_truth += 1,
            None => {}
        }
    }
    Ok(())
}
