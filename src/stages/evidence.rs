//! `kind: evidence` — the retrieval-based information verifier (`v_<id>`): for each memory,
//! retrieve the top-k passages for its question from the domain's evidence corpus (BM25 over the
//! question; a corpus from other sources than the gold, read once per stage and keyed by its
//! content, so every seed and run shares the cache entry of an unchanged corpus) and score
//! whether they support the stored answer: V = 1 when the normalised answer occurs as whole words
//! in a passage and is not just words of the question, 0 when it does not (or there is no
//! answer), null when the corpus does not speak to the question's topic. With a `reader`, a model
//! reads only the passages, the question and the stored answer and says whether they support it
//! (its verdict is V; the lexical rule stays in `detail`). It never reads gold.
//! Banks of a domain with a corpus (factual QA: `tasks` with `question` and `topic`); the corpus
//! options are that domain's (`corpus: {evidence, evidence_topics, top_k}`, as the evaluate stage
//! takes them; `factual:` as older pipelines wrote it).

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::judge::default_answer;
use super::verifiers::{self, Scored, Template};
use crate::domains::registry as domains;
use crate::error::Result;
use crate::error::{Error, Invalid};
use crate::llm::{Decoding, ModelConfig};
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of an evidence stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceStage {
    /// The corpus and retrieval, as the domain with a corpus takes them in its `domain:` options
    /// (factual QA's: `evidence`, a JSON Lines or Parquet file of `{id, title, text}`, absent: the
    /// bundled one; `evidence_topics`; `top_k`). Written `corpus:`, or `factual:` as pipelines
    /// written before domains had a registry did; serialized under that older name, so cached
    /// results keep their keys.
    #[serde(default, rename = "factual", alias = "corpus")]
    pub corpus: serde_json::Map<String, serde_json::Value>,
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
    #[serde(default = "super::judge::default_decoding::<16>")]
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

    /// The corpus options with their defaults, in the first registered domain with a corpus (the
    /// tasks' domain is checked to be it when the stage runs).
    fn options(&self) -> std::result::Result<(domains::Entry, serde_json::Value), Invalid> {
        let entry = domains::all()
            .into_iter()
            .find(|e| e.has_evidence)
            .ok_or_else(|| Invalid::from("no registered domain has an evidence corpus"))?;
        let full = (entry.options)(&self.corpus).map_err(|e| Invalid(format!("corpus: {}", e.0)))?;
        Ok((entry, full))
    }
}

impl Stage for EvidenceStage {
    verifiers::bank_stage!(without_config);

    /// The config, its corpus options with their defaults (as the factual domain's config was).
    fn config_json(&self) -> serde_json::Value {
        let mut json = serde_json::to_value(self).expect("config serializes");
        if let Ok((_, full)) = self.options() {
            json["factual"] = full;
        }
        json
    }

    fn check(
        &self,
        _: &crate::pipeline::stage::Planned<'_>,
    ) -> std::result::Result<(), crate::pipeline::stage::Misplanned> {
        self.options().map(|_| ()).map_err(|e| crate::pipeline::stage::Misplanned::new("factual", e.0))
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        let (entry, options) = self.options().map_err(|e| Error::stage(&ctx.stage_id, e))?;
        let mut fp = (entry.fingerprint)(&options, ctx)?;
        if let Some(r) = &self.reader {
            fp.extend(crate::pipeline::models::model_fingerprint(&r.model, ctx)?);
            fp.insert("prompt".into(), crate::fingerprint::file_fingerprint(&ctx.resolve(&r.prompt))?);
        }
        Ok(fp)
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let memories = verifiers::memories(ctx, inputs, &self.answer_column)?;
        let (entry, options) = self.options().map_err(|e| Error::stage(&ctx.stage_id, e))?;
        let tasks = domains::of_tasks(inputs.get(ctx, "tasks")?).map_err(|e| Error::stage(&ctx.stage_id, e))?;
        if tasks.name != entry.name {
            return Err(Error::stage(
                &ctx.stage_id,
                format!("the {} domain has no evidence corpus to verify its memories with", tasks.name),
            ));
        }
        let domain = (entry.evidence)(&options, ctx)?
            .ok_or_else(|| Error::stage(&ctx.stage_id, format!("the {} domain has no evidence corpus", entry.name)))?;
        let reader = match &self.reader {
            Some(r) => Some((
                r,
                Template::load(&ctx.resolve(&r.prompt))?,
                crate::pipeline::models::chat_model(&r.model, ctx, r.response_cache)?,
            )),
            None => None,
        };
        if let Some((r, _, model)) = &reader {
            crate::pipeline::models::check_choices(ctx, model.as_ref(), &r.decoding, "reader.decoding.choices")?;
        }
        let jobs = reader.as_ref().map_or(crate::par::default_jobs(), |r| r.0.concurrency);
        let rows = verifiers::score_all(ctx, &memories, jobs, |m| {
            let mut s = Scored::of(m);
            let Some(hits) = domain.passages(&m.question, &m.fields) else {
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
