//! `kind: evidence` — the retrieval-based information verifier (`v_<id>`): for each memory,
//! retrieve the top-k passages for its question from the domain's evidence corpus (BM25 over the
//! question; a corpus from other sources than the gold, read once per stage and keyed by its
//! content, so every seed and run shares the cache entry of an unchanged corpus) and score
//! whether they support the stored answer: V = 1 when the normalised answer occurs as whole words
//! in a passage and is not just words of the question, 0 when it does not (or there is no
//! answer), null when the corpus does not speak to the question's topic. It never reads gold.
//! Factual banks (`tasks` with `question` and `topic`).

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::judge::default_answer;
use super::verifiers::{self, Scored};
use crate::domain::factual::{FactualConfig, FactualDomain};
use crate::error::Result;
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of an evidence stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceStage {
    /// Evidence corpus (JSON Lines or Parquet of `{id, title, text}`); absent: the bundled one.
    #[serde(default)]
    pub evidence: Option<String>,
    /// Topics the corpus speaks to (absent: the bundled corpus's, or every topic of a user corpus).
    #[serde(default)]
    pub evidence_topics: Option<Vec<String>>,
    /// Passages retrieved per question.
    #[serde(default = "default_top_k")]
    pub top_k: usize,
    /// The episodes' column holding the stored answer.
    #[serde(default = "default_answer")]
    pub answer_column: String,
}

fn default_top_k() -> usize {
    3
}

impl EvidenceStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "evidence";

    fn config(&self) -> FactualConfig {
        FactualConfig {
            evidence: self.evidence.clone(),
            evidence_topics: self.evidence_topics.clone(),
            top_k: self.top_k,
            ..FactualConfig::default()
        }
    }
}

impl Stage for EvidenceStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }
    fn version(&self) -> u32 {
        1
    }
    fn required_inputs(&self) -> &'static [&'static str] {
        &["tasks", "episodes"]
    }
    fn outputs(&self, stage_id: &str) -> Vec<String> {
        vec![verifiers::table_name(stage_id)]
    }
    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }
    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        let corpus = match self.config().corpus_file(|p| ctx.resolve(p)) {
            Some(f) => crate::fingerprint::file_fingerprint(&f)?,
            None => crate::bench::factual::wheels::pinned(),
        };
        Ok([("evidence".to_string(), corpus)].into())
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let memories = verifiers::memories(ctx, inputs, &self.answer_column)?;
        let config = self.config();
        let file = config.corpus_file(|p| ctx.resolve(p));
        let facts = crate::models::model_path(&crate::models::models_dir(&ctx.cache_dir), "facts");
        let domain = FactualDomain::new(config, file.as_deref(), &facts)?;
        let rows = verifiers::score_all(ctx, &memories, crate::par::default_jobs(), |m| {
            let mut s = Scored::of(m);
            let topic = m.fields.iter().find(|(k, _)| k == "topic").map_or("", |(_, v)| v.as_str());
            let (ids, supported) = match domain.passages(&m.question, topic) {
                None => (Vec::new(), None),
                Some(hits) => {
                    let yes = m.answer.as_deref().is_some_and(|a| domain.supports(&m.question, &hits, a));
                    (domain.ids(&hits), Some(yes))
                }
            };
            s.v = supported.map(|y| if y { 1.0 } else { 0.0 });
            s.detail = serde_json::json!({"passages": ids}).to_string();
            Ok(s)
        })?;
        verifiers::output(ctx, &rows)
    }
}
