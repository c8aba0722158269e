//! Factual question answering, closed book (the paper's factual banks): the answerer and the
//! self-grader see only the question (and its topic and answer type); the artifact is the
//! executor's answer line; observing it looks the answer up in an evidence corpus from another
//! source than the gold ([`crate::domains::factual::data::evidence`]), which only the channels read.
//! Channels: `no_answer` (empty, a refusal or a hedge), `unsupported` (the normalised answer is
//! in none of the top-k passages retrieved for the question, or only repeats words of the
//! question; silent on topics the corpus does not speak to), `format` (not the type of answer asked for). Gold scoring: normalised match
//! against the answer and its aliases ([`crate::datasets::qa::normalize`]).

pub mod channels;
pub mod data;
pub mod evaluate;
pub mod gold_judge;
mod kind;
pub mod sources;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::columns::{Column, Getter};
use crate::datasets::qa::normalize::{contains_words, matches, normalize};
use crate::datasets::qa::{FactGold, FactTask, tables};
use crate::domains::factual::data::evidence::{BUNDLED_TOPICS, Corpus};
use crate::error::{Invalid, Result};
use crate::seam::records::Episode;
use crate::seam::{Channels, Domain, Judge, Observation};

/// The factual domain's options (the memory loop's `domain: {kind: factual, ...}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactualConfig {
    /// Evidence corpus: a JSON Lines or Parquet file of `{id, title, text}` (relative to where
    /// `lucid run` runs); absent: the bundled corpus (GeoNames and periodictable).
    #[serde(default)]
    pub evidence: Option<String>,
    /// Topics the corpus speaks to (the `unsupported` channel is silent on others); absent: the
    /// bundled corpus's topics, or every topic for a user corpus.
    #[serde(default)]
    pub evidence_topics: Option<Vec<String>>,
    /// Passages retrieved per question.
    #[serde(default = "default_top_k")]
    pub top_k: usize,
    /// Channels whose firing flags an episode (default: all three).
    #[serde(default = "all_channels")]
    pub channels: Vec<String>,
}

fn default_top_k() -> usize {
    3
}
fn all_channels() -> Vec<String> {
    FactualDomain::CHANNELS.iter().map(|c| c.to_string()).collect()
}

impl Default for FactualConfig {
    fn default() -> Self {
        FactualConfig { evidence: None, evidence_topics: None, top_k: default_top_k(), channels: all_channels() }
    }
}

impl FactualConfig {
    /// Its options checked: channel names, `top_k` at least 1.
    pub fn check(&self) -> std::result::Result<(), Invalid> {
        crate::seam::check_channels::<FactualDomain>(&self.channels, "domain.channels")?;
        if self.top_k == 0 { Err(Invalid::from("domain.top_k must be at least 1")) } else { Ok(()) }
    }

    /// The corpus file, resolved by `resolve` (None: bundled).
    pub fn corpus_file(&self, resolve: impl Fn(&str) -> PathBuf) -> Option<PathBuf> {
        self.evidence.as_deref().map(resolve)
    }

    /// The corpus's content hash, for cache keys: the user file's, else the pinned bundled
    /// packages'.
    pub fn corpus_fingerprint(&self, resolve: impl Fn(&str) -> PathBuf) -> Result<String> {
        match self.corpus_file(resolve) {
            Some(f) => crate::fingerprint::file_fingerprint(&f),
            None => Ok(crate::domains::factual::data::wheels::pinned()),
        }
    }
}

/// The factual domain, with its corpus loaded.
pub struct FactualDomain {
    config: FactualConfig,
    corpus: Corpus,
    topics: Option<Vec<String>>,
}

impl FactualDomain {
    /// The domain with `config`, its corpus file resolved by `resolve`, the bundled corpus read
    /// from the fetched packages under `cache_dir`.
    pub fn load(config: FactualConfig, resolve: impl Fn(&str) -> PathBuf, cache_dir: &Path) -> Result<FactualDomain> {
        let file = config.corpus_file(resolve);
        let facts = data::wheels::PACKAGE.dir(&crate::model_files::models_dir(cache_dir));
        FactualDomain::new(config, file.as_deref(), &facts)
    }

    /// The domain with `config`: the corpus from `corpus_file`, else the bundled one under `facts`.
    pub fn new(config: FactualConfig, corpus_file: Option<&Path>, facts: &Path) -> Result<FactualDomain> {
        config.check().map_err(crate::error::Error::usage)?;
        let (corpus, topics) = match corpus_file {
            Some(f) => (Corpus::load(f)?, config.evidence_topics.clone()),
            None => (
                Corpus::bundled(facts)?,
                Some(
                    config
                        .evidence_topics
                        .clone()
                        .unwrap_or_else(|| BUNDLED_TOPICS.iter().map(|t| t.to_string()).collect()),
                ),
            ),
        };
        Ok(FactualDomain { config, corpus, topics })
    }

    /// Whether the corpus speaks to `topic`.
    fn covers(&self, topic: &str) -> bool {
        self.topics.as_ref().is_none_or(|t| t.iter().any(|x| x == topic))
    }

    /// The top-k passages for `question` (None: the corpus does not speak to `topic`, or no
    /// passage shares a word with the question: no claim either way).
    pub fn passages(&self, question: &str, topic: &str) -> Option<Vec<usize>> {
        let hits = if self.covers(topic) { self.corpus.retrieve(question, self.config.top_k) } else { Vec::new() };
        (!hits.is_empty()).then_some(hits)
    }

    /// The passages `hits` as "title: text".
    pub fn texts(&self, hits: &[usize]) -> Vec<String> {
        hits.iter().map(|&d| format!("{}: {}", self.corpus.passages[d].title, self.corpus.passages[d].text)).collect()
    }

    /// The ids of passages `hits`.
    pub fn ids(&self, hits: &[usize]) -> Vec<String> {
        hits.iter().map(|&d| self.corpus.passages[d].id.clone()).collect()
    }

    /// Whether normalised `text` occurs in one of `hits` and is not just words of `question`
    /// ("Kenya" for "the capital of Kenya?" is no support).
    pub fn supports(&self, question: &str, hits: &[usize], text: &str) -> bool {
        let norm = normalize(text);
        !contains_words(&normalize(question), &norm)
            && hits.iter().any(|&d| contains_words(&self.corpus.normalized[d], &norm))
    }

    /// The top-k passages' ids for `question` and whether `answer` is supported by them (empty
    /// and None when [`Self::passages`] finds none).
    pub fn lookup(&self, question: &str, topic: &str, answer: &str) -> (Vec<String>, Option<bool>) {
        match self.passages(question, topic) {
            None => (Vec::new(), None),
            Some(hits) => (self.ids(&hits), Some(self.supports(question, &hits, answer))),
        }
    }
}

/// What looking an answer up recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FactObs {
    /// The answer, normalised.
    pub normalized: String,
    /// Ids of the passages retrieved for the question (empty when the corpus does not cover it).
    pub evidence_ids: Vec<String>,
    /// Whether the normalised answer is in one of them (None: not covered, or no answer).
    pub in_evidence: Option<bool>,
}

type E = Getter<Episode<FactObs>>;

impl Domain for FactualDomain {
    type Task = FactTask;
    type Worker = ();
    type Obs = FactObs;

    const NAME: &'static str = "factual";
    const GROUP: &'static str = "topic";
    const GROUP_DOC: &'static str = "The question's topic.";
    const ARTIFACT: &'static str = "answer";
    const PROMPTS: &'static str = "pipelines/prompts-factual";
    const ARTIFACT_DOC: &'static str = "The answer the executor gave: the first non-empty line of its text, without Markdown, lead-in labels ('A:', 'Answer:', 'The answer to the question is:', 'The answer is'), surrounding quotes or a final period. Null when the text is empty, its first line starts another 'Question:' / 'Q:', or the executor call failed.";
    const CHANNELS: &'static [&'static str] = &["no_answer", "unsupported", "format"];
    const PLANNER_OPTIONAL: bool = true;

    fn tasks(&self, batch: &RecordBatch, path: &Path) -> Result<Vec<FactTask>> {
        tables::tasks_from_batch(batch, path)
    }
    fn id(task: &FactTask) -> i64 {
        task.question_id
    }
    fn question(task: &FactTask) -> &str {
        &task.question
    }
    fn group(task: &FactTask) -> &str {
        &task.topic
    }
    fn worker(&self) {}

    fn context(&self, _: &mut (), task: &FactTask) -> Result<Vec<(&'static str, String)>> {
        Ok(vec![("topic", task.topic.clone()), ("answer_type", task.answer_type.clone())])
    }

    fn extract(&self, text: &str) -> std::result::Result<String, Invalid> {
        channels::answer_line(text).ok_or_else(|| "no answer in the executor's text".into())
    }

    fn unobserved(&self, _why: &str) -> FactObs {
        FactObs::default()
    }

    fn observe(&self, _: &mut (), task: &FactTask, answer: &str) -> Result<Observation<FactObs>> {
        let (evidence_ids, in_evidence) = self.lookup(&task.question, &task.topic, answer);
        let obs = FactObs { normalized: normalize(answer), evidence_ids, in_evidence };
        Ok(Observation { obs, status: "answered".into(), result: answer.to_string() })
    }

    fn channels(&self, task: &FactTask, answer: Option<&str>, obs: &FactObs) -> Channels {
        channels::channels(task, answer, obs)
    }

    fn flag_channels(&self) -> Vec<String> {
        self.config.channels.clone()
    }

    fn observation_columns() -> Vec<Column<Episode<FactObs>>> {
        vec![
            Column::new("normalized", E::Str(|e| &e.obs.normalized), "The answer normalised (docs/domains.md's rule)."),
            Column::new(
                "evidence_ids",
                E::OptText(|e| {
                    (!e.obs.evidence_ids.is_empty()).then(|| serde_json::to_string(&e.obs.evidence_ids).expect("json"))
                }),
                "Ids of the evidence passages retrieved for the question (BM25 over the question only), as a JSON list; null when the corpus does not speak to the topic, no passage shares a word with the question, or nothing was answered.",
            ),
            Column::new(
                "in_evidence",
                E::OptBool(|e| e.obs.in_evidence),
                "The normalised answer occurs (as whole words) in one of those passages and is not just words of the question; null when not looked up.",
            ),
        ]
    }
    /// `unsupported` only where the corpus speaks to the question; `format` only where a type is asked.
    fn speaks(&self, task: &FactTask) -> Vec<(&'static str, bool)> {
        vec![
            ("no_answer", true),
            ("unsupported", self.passages(&task.question, &task.topic).is_some()),
            ("format", task.answer_type != "text"),
        ]
    }
}

impl Judge for FactualDomain {
    type Gold = FactGold;

    fn gold(&self, batch: &RecordBatch, path: &Path) -> Result<HashMap<i64, FactGold>> {
        Ok(tables::gold_from_batch(batch, path)?.into_iter().map(|g| (g.question_id, g)).collect())
    }

    fn score(&self, _: &FactTask, gold: &FactGold, answer: Option<&str>) -> Result<u8> {
        Ok(answer.is_some_and(|a| matches(a, &gold.answer, &gold.aliases)).into())
    }
}
