//! Factual question answering (the paper's factual banks): tasks with a question, a topic and the
//! type of answer asked for; gold answers with their aliases, in their own table. Layouts:
//! SimpleQA's CSV (`metadata,problem,answer`), JSON Lines (`{id, question, answer, aliases?,
//! topic?, answer_type?}`), and the bundled offline set built from PyPI data packages (the
//! factual domain's sources, in its folder). Other agents' imported banks are written in this
//! layout too. Ids: `question_id` is the 0-based position in the source (Int64, the key every
//! table joins on), `task_id` the source's own id as a string.

pub mod normalize;
pub mod tables;

use std::collections::HashSet;
use std::path::Path;

use crate::error::{Error, Result};

/// One factual task as the agent sees it: no field can hold an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactTask {
    /// 0-based position in the source.
    pub question_id: i64,
    /// The source's own id.
    pub task_id: String,
    /// The question.
    pub question: String,
    /// Its topic (e.g. `capital`, `element_symbol`; `general` when the source has none).
    pub topic: String,
    /// What kind of answer is asked for: name, number, year, code, symbol or text.
    pub answer_type: String,
}

/// The reference answer of one task. Only evaluation reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactGold {
    /// The task it belongs to.
    pub question_id: i64,
    /// The answer.
    pub answer: String,
    /// Other accepted spellings.
    pub aliases: Vec<String>,
}

/// A loaded factual benchmark: tasks and their gold, aligned, in the source's order.
#[derive(Clone, Debug, Default)]
pub struct FactBench {
    /// What the agent may see.
    pub tasks: Vec<FactTask>,
    /// What only evaluation may read.
    pub gold: Vec<FactGold>,
    /// The ids whose answer normalises to nothing (an emoji, punctuation) while an alias does not:
    /// scored through their aliases, and counted here rather than refused.
    pub alias_only: Vec<String>,
}

/// The answer types, and what each means to the `format` channel.
pub const ANSWER_TYPES: &[&str] = &["name", "number", "year", "code", "symbol", "text"];

/// One source row before checking.
pub struct SourceRow {
    /// Where it is (1-based line or row), for errors.
    pub line: usize,
    /// The source's id.
    pub id: String,
    /// The question.
    pub question: String,
    /// The answer.
    pub answer: String,
    /// Aliases.
    pub aliases: Vec<String>,
    /// Topic.
    pub topic: Option<String>,
    /// Answer type.
    pub answer_type: Option<String>,
}

impl FactBench {
    /// The benchmark of `rows` read from `path`: errors name the file and the row for an empty
    /// question, an answer that normalises to nothing with no alias that does not (one with such
    /// an alias is kept and counted in `alias_only`), a duplicate id or an unknown answer type.
    pub fn from_rows(path: &Path, rows: Vec<SourceRow>) -> Result<FactBench> {
        let mut seen = HashSet::new();
        let mut b = FactBench::default();
        for (i, r) in rows.into_iter().enumerate() {
            let at = |m: String| Error::input(path, format!("row {}: {m}", r.line));
            if r.question.trim().is_empty() {
                return Err(at("empty question".into()));
            }
            if normalize::normalize(&r.answer).is_empty() {
                if !r.aliases.iter().any(|a| !normalize::normalize(a).is_empty()) {
                    return Err(at(format!("empty answer for id '{}' (and no alias that is not)", r.id)));
                }
                b.alias_only.push(r.id.clone());
            }
            if !seen.insert(r.id.clone()) {
                return Err(at(format!("duplicate id '{}'", r.id)));
            }
            let answer_type = r.answer_type.unwrap_or_else(|| "text".into());
            if !ANSWER_TYPES.contains(&answer_type.as_str()) {
                return Err(at(format!("answer_type '{answer_type}' is not one of {}", ANSWER_TYPES.join(", "))));
            }
            let question_id = i as i64;
            b.tasks.push(FactTask {
                question_id,
                task_id: r.id,
                question: r.question.trim().to_string(),
                topic: r.topic.filter(|t| !t.is_empty()).unwrap_or_else(|| "general".into()),
                answer_type,
            });
            b.gold.push(FactGold { question_id, answer: r.answer.trim().to_string(), aliases: r.aliases });
        }
        if b.tasks.is_empty() {
            return Err(Error::input(path, "no questions"));
        }
        Ok(b)
    }

    /// Keep the first `n` questions of each topic.
    pub fn per_topic(&mut self, n: usize) {
        let mut count: std::collections::HashMap<String, usize> = Default::default();
        let keep: Vec<bool> = self
            .tasks
            .iter()
            .map(|t| {
                let c = count.entry(t.topic.clone()).or_default();
                *c += 1;
                *c <= n
            })
            .collect();
        let mut k = keep.iter();
        self.tasks.retain(|_| *k.next().expect("aligned"));
        let mut k = keep.iter();
        self.gold.retain(|_| *k.next().expect("aligned"));
    }

    /// Keep the first `n` questions.
    pub fn truncate(&mut self, n: usize) {
        self.tasks.truncate(n);
        self.gold.truncate(n);
    }
}
