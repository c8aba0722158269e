//! `kind: evidence` — the retrieval-based information verifier (`v_<id>`): for each memory,
//! retrieve the top-k passages for its question from the domain's evidence corpus (BM25 over the
//! question; a corpus from other sources than the gold, read once per stage and keyed by its
//! content, so every seed and run shares the cache entry of an unchanged corpus) and score
//! whether they support the stored answer: V = 1 when the normalised answer occurs as whole words
//! in a passage and is not just words of the question, 0 when it does not (or there is no
//! answer), null when the corpus does not speak to the question's topic. With a `reader`, a model
//! reads only the passages, the question and the stored answer and says whether they support it
//! (its verdict is V; the lexical rule stays in `detail`). It never reads gold.
//! Factual banks (`tasks` with `question` and `topic`); the corpus options are the factual
//! domain's (`factual: {evidence, evidence_topics, top_k}`, as the evaluate stage takes them).

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::judge::default_answer;
use super::verifiers::{self, Scored, Template};
use crate::domains::factual::{FactualConfig, FactualDomain};
use crate::error::Result;
use crate::llm::{Decoding, ModelConfig};
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of an evidence stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceStage {
    /// The corpus and retrieval, as the factual domain takes them (`evidence`: a JSON Lines or
    /// Parquet file of `{id, title, text}`, absent: the bundled one; `evidence_topics`; `top_k`).
    #[serde(default)]
    pub factual: FactualConfig,
    /// A model that reads the passages (absent: the lexical rule decides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader: Option<Reader>,
    /// The episodes' column holding the stored answer.
    #[serde(default = "default_answer")]
    pub answer_column: String,
}

/// The evidence reader: a model, its prompt (variables: question, answer, the task's text columns,
/// `passages`: the retrieved passages' "title: text"), its decoding.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reader {
    /// The model (default: local SmolLM2).
    #[serde(default)]
    pub model: ModelConfig,
    /// Its prompt template.
    pub prompt: String,
    /// Decoding (default: 16 tokens, greedy; `choices` for forced choice).
    #[serde(default = "super::judge::default_decoding")]
    pub decoding: Decoding,
    /// Memories read at once (operational).
    #[serde(default = "super::judge::default_jobs", skip_serializing)]
    pub concurrency: usize,
    /// Use the response cache (operational).
    #[serde(default = "super::judge::yes", skip_serializing)]
    pub response_cache: bool,
}

impl EvidenceStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "evidence";
}

impl Stage for EvidenceStage {
    verifiers::bank_stage!();

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        let mut fp = BTreeMap::from([("evidence".to_string(), self.factual.corpus_fingerprint(|p| ctx.resolve(p))?)]);
        if let Some(r) = &self.reader {
            fp.extend(super::model_fingerprint(&r.model, ctx)?);
            fp.insert("prompt".into(), crate::fingerprint::file_fingerprint(&ctx.resolve(&r.prompt))?);
        }
        Ok(fp)
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let memories = verifiers::memories(ctx, inputs, &self.answer_column)?;
        let domain = FactualDomain::load(self.factual.clone(), |p| ctx.resolve(p), &ctx.cache_dir)?;
        let reader = match &self.reader {
            Some(r) => {
                Some((r, Template::load(&ctx.resolve(&r.prompt))?, super::chat_model(&r.model, ctx, r.response_cache)?))
            }
            None => None,
        };
        if let Some((r, _, model)) = &reader {
            super::check_choices(ctx, model.as_ref(), &r.decoding, "reader.decoding.choices")?;
        }
        let jobs = reader.as_ref().map_or(crate::par::default_jobs(), |r| r.0.concurrency);
        let rows = verifiers::score_all(ctx, &memories, jobs, |m| {
            let mut s = Scored::of(m);
            let topic = m.fields.iter().find(|(k, _)| k == "topic").map_or("", |(_, v)| v.as_str());
            let Some(hits) = domain.passages(&m.question, topic) else {
                s.detail = serde_json::json!({"passages": []}).to_string();
                return Ok(s);
            };
            let lexical = m.answer.as_deref().is_some_and(|a| domain.supports(&m.question, &hits, a));
            let mut detail = serde_json::json!({"passages": domain.ids(&hits), "lexical": lexical});
            s.v = Some(if lexical { 1.0 } else { 0.0 });
            if let Some((r, template, model)) = &reader {
                let passages = minijinja::Value::from(domain.texts(&hits));
                let prompt = template.render(m, &[("passages", passages)])?;
                let (v, said) = verifiers::verdict(model.as_ref(), prompt, &r.decoding, &mut s);
                s.v = v;
                detail["reader"] = said;
            }
            s.detail = detail.to_string();
            Ok(s)
        })?;
        verifiers::output(ctx, &rows)
    }
}
