//! The truth an import is audited against: a gold file of questions and answers (any layout
//! [`super::records`] reads; aliases a list, or one string cut at a separator the user names),
//! matched to the bank on an id or on the question's exact text; or a per-id truth file `{id, u}`
//! (an agentic benchmark's own evaluator: WebArena's reward, SWE-bench's resolved list).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::records::{self, as_text, at};
use crate::datasets::qa::normalize::normalize;
use crate::error::{Error, Result};

/// The `gold:` block of an import.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GoldConfig {
    /// The file.
    pub path: String,
    /// Its id field (matched to the bank's id when `match_on: id`).
    #[serde(default = "id")]
    pub id: String,
    /// Its question field.
    #[serde(default = "question")]
    pub question: String,
    /// Its answer field (default: the preset's: `answer`, Memento's `ground_truth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Its aliases field: a list of strings, or one string cut at `alias_separator`.
    #[serde(default = "aliases")]
    pub aliases: String,
    /// What separates aliases written as one string (e.g. `|`), in the aliases field or in the
    /// answer field itself (the first is the answer); default: the preset's (Memento's
    /// `<|answer_split|>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias_separator: Option<String>,
    /// How a memory finds its gold: `question` (its exact text, trimmed; the default) or `id`.
    #[serde(default)]
    pub match_on: MatchOn,
}

fn id() -> String {
    "id".into()
}
fn question() -> String {
    "question".into()
}
fn aliases() -> String {
    "aliases".into()
}

/// How a memory finds its gold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchOn {
    /// The question's exact text (trimmed).
    #[default]
    Question,
    /// The id.
    Id,
}

/// One gold answer.
#[derive(Clone, Debug, PartialEq)]
pub struct GoldRow {
    /// The source's id, when it has one.
    pub id: Option<String>,
    /// The question.
    pub question: String,
    /// The answer.
    pub answer: String,
    /// Other accepted answers.
    pub aliases: Vec<String>,
}

/// A gold file, keyed as the bank will look it up; `alias_only` counts the answers that
/// normalise to nothing (an emoji) and are scored through their aliases. A key written twice
/// with the same truth counts once; one written with conflicting answers is ambiguous: it is in
/// `ambiguous`, not in `by_key`, so its memories are left unscored.
pub struct Gold {
    /// By key (id or question text).
    pub by_key: HashMap<String, GoldRow>,
    /// How keys are made.
    pub match_on: MatchOn,
    /// Answers scored through their aliases only.
    pub alias_only: usize,
    /// The keys written with conflicting answers, and the lines they are on.
    pub ambiguous: BTreeMap<String, Vec<usize>>,
}

/// The text of a field, or an error naming the file and line.
fn field(path: &Path, r: &records::Record, name: &str) -> Result<String> {
    as_text(at(&r.value, name))
        .ok_or_else(|| Error::input(path, format!("line {}: no `{name}` (or it is empty)", r.line)))
}

/// The aliases of a record.
fn alias_list(v: Option<&Value>, separator: Option<&str>) -> Vec<String> {
    match (v, separator) {
        (Some(Value::Array(items)), _) => items.iter().filter_map(|x| as_text(Some(x))).collect(),
        (Some(Value::String(s)), Some(sep)) => {
            s.split(sep).map(str::trim).filter(|a| !a.is_empty()).map(String::from).collect()
        }
        (Some(Value::String(s)), None) if !s.trim().is_empty() => vec![s.trim().to_string()],
        _ => Vec::new(),
    }
}

/// Whether two gold rows score every answer alike: the same answer and the same aliases, once
/// normalised (case, punctuation, articles and alias order aside).
fn same_truth(a: &GoldRow, b: &GoldRow) -> bool {
    let aliases = |r: &GoldRow| {
        let mut v: Vec<String> = r.aliases.iter().map(String::as_str).map(normalize).collect();
        v.sort();
        v.dedup();
        v
    };
    normalize(&a.answer) == normalize(&b.answer) && aliases(a) == aliases(b)
}

/// `answer` cut at `separator` (the first part is the answer, the rest aliases), and `aliases`.
pub fn split_answer(answer: &str, separator: Option<&str>, mut aliases: Vec<String>) -> (String, Vec<String>) {
    match separator.filter(|s| answer.contains(*s)) {
        Some(sep) => {
            let mut parts = answer.split(sep).map(str::trim).filter(|p| !p.is_empty()).map(String::from);
            let first = parts.next().unwrap_or_default();
            let mut all: Vec<String> = parts.collect();
            all.append(&mut aliases);
            (first, all)
        }
        None => (answer.trim().to_string(), aliases),
    }
}

impl Gold {
    /// Read `c.path` (resolved to `path`); `default_answer` is the preset's answer field and
    /// alias separator.
    pub fn read(c: &GoldConfig, path: &Path, default_answer: (&str, Option<&str>)) -> Result<Gold> {
        let mut by_key: HashMap<String, GoldRow> = HashMap::new();
        let mut lines: HashMap<String, Vec<usize>> = HashMap::new();
        let mut conflicting = Vec::new();
        let answer_field = c.answer.as_deref().unwrap_or(default_answer.0);
        let separator = c.alias_separator.as_deref().or(default_answer.1);
        for r in records::read(path)? {
            let raw = as_text(at(&r.value, answer_field)).unwrap_or_default();
            let (answer, aliases) = split_answer(&raw, separator, alias_list(at(&r.value, &c.aliases), separator));
            let row = GoldRow {
                id: as_text(at(&r.value, &c.id)),
                question: field(path, &r, &c.question)?.trim().to_string(),
                answer,
                aliases,
            };
            if normalize(&row.answer).is_empty() && !row.aliases.iter().any(|a| !normalize(a).is_empty()) {
                return Err(Error::input(
                    path,
                    format!("line {}: the answer is empty (and so is every alias)", r.line),
                ));
            }
            let key = match c.match_on {
                MatchOn::Question => row.question.clone(),
                MatchOn::Id => {
                    row.id.clone().ok_or_else(|| Error::input(path, format!("line {}: no `{}`", r.line, c.id)))?
                }
            };
            lines.entry(key.clone()).or_default().push(r.line);
            match by_key.get(&key) {
                // The same truth written again counts once.
                Some(first) if same_truth(first, &row) => {}
                Some(_) => conflicting.push(key),
                None => {
                    by_key.insert(key, row);
                }
            }
        }
        let ambiguous: BTreeMap<String, Vec<usize>> = conflicting
            .into_iter()
            .filter_map(|k| {
                by_key.remove(&k);
                lines.remove_entry(&k)
            })
            .collect();
        let alias_only = by_key.values().filter(|r| normalize(&r.answer).is_empty()).count();
        Ok(Gold { by_key, match_on: c.match_on, alias_only, ambiguous })
    }

    /// The key a memory finds its gold under: its source id or its question.
    pub fn key<'a>(&self, source_id: &'a str, question: &'a str) -> &'a str {
        if self.match_on == MatchOn::Id { source_id } else { question }
    }
}

/// A per-id truth file `{id, u}` (u: 1/0, true/false): the benchmark's own verdict per task.
pub fn read_truth(path: &Path) -> Result<HashMap<String, u8>> {
    let mut out = HashMap::new();
    for r in records::read(path)? {
        let id = field(path, &r, "id")?;
        let u = match at(&r.value, "u") {
            Some(Value::Bool(b)) => u8::from(*b),
            Some(Value::Number(n)) if n.as_f64() == Some(1.0) => 1,
            Some(Value::Number(n)) if n.as_f64() == Some(0.0) => 0,
            other => {
                return Err(Error::input(path, format!("line {}: u must be 0/1 or true/false, not {other:?}", r.line)));
            }
        };
        if out.insert(id.clone(), u).is_some() {
            return Err(Error::input(path, format!("line {}: id `{id}` appears twice", r.line)));
        }
    }
    Ok(out)
}
