//! `kind: resample` — self-consistency (`v_<id>`, also `sc`): the answerer's own prompt without
//! memories (the no-memory arm's request: the prompts folder's system and executor templates),
//! sampled `samples` times with seeds 0..n at the given temperature; V = sc = the share of
//! answers that agree with the stored one as the tasks' domain compares artifacts (factual QA:
//! the answer line, lower case, no punctuation or articles; text-to-SQL: the query's words; code:
//! the same results on the calls of the prompt's docstring examples, run in the sandbox; an
//! empty answer agrees with nothing, so a memory without an answer gets 0; V is null, and no sample
//! is drawn, on a task the domain cannot compare on: code whose prompt shows no example). Failed samples are counted in `failed_calls` and left out of the
//! share; V is null when every sample failed. On an imported bank (no request of the agent that
//! answered is kept) the questions are re-asked to the named model, and the stage says so.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::judge::{default_answer, default_jobs, yes};
use super::verifiers::{self, Scored, Template};
use crate::error::{Error, Result};
use crate::llm::{Decoding, ModelConfig};
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of a resample stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ResampleStage {
    /// The answering model (default: local SmolLM2).
    #[serde(default)]
    pub model: ModelConfig,
    /// The answerer's prompts folder (its `system.txt` and `executor.txt`).
    pub prompts: String,
    /// Samples per memory.
    #[serde(default = "default_samples")]
    pub samples: u32,
    /// Decoding of every sample (default: temperature 0.7, 8 tokens, one line); sample i gets seed i.
    #[serde(default = "default_decoding")]
    pub decoding: Decoding,
    /// The episodes' column holding the stored answer.
    #[serde(default = "default_answer")]
    pub answer_column: String,
    /// Memories resampled at once (operational).
    #[serde(default = "default_jobs", skip_serializing)]
    pub concurrency: usize,
    /// Use the response cache (operational).
    #[serde(default = "yes", skip_serializing)]
    pub response_cache: bool,
}

fn default_samples() -> u32 {
    5
}
fn default_decoding() -> Decoding {
    Decoding { max_tokens: 8, temperature: 0.7, stop: vec!["\n".into()], ..Decoding::default() }
}

impl ResampleStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "resample";
}

impl Stage for ResampleStage {
    verifiers::bank_stage!();

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        let mut fp = crate::pipeline::models::model_fingerprint(&self.model, ctx)?;
        fp.extend(crate::memory_loop::prompts::Prompts::fingerprint(&ctx.resolve(&self.prompts))?);
        Ok(fp)
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        if self.samples == 0 {
            return Err(Error::stage(&ctx.stage_id, "samples must be at least 1"));
        }
        let memories = verifiers::memories(ctx, inputs, &self.answer_column)?;
        let domain = crate::domains::registry::of_tasks(inputs.get(ctx, "tasks")?)
            .map_err(|e| Error::stage(&ctx.stage_id, e))?;
        let answer_of = (domain.agreement)(ctx)?;
        let dir = ctx.resolve(&self.prompts);
        let system = crate::memory_loop::prompts::Prompts::load(&dir)?.system().to_string();
        let template = Template::load(&dir.join("executor.txt"))?;
        let model = crate::pipeline::models::chat_model(&self.model, ctx, self.response_cache)?;
        crate::pipeline::models::check_choices(ctx, model.as_ref(), &self.decoding, "decoding.choices")?;
        // An imported bank keeps no request of the agent that answered: its questions are re-asked.
        if inputs.get(ctx, "episodes")?.column_by_name("label_source").is_some() {
            let id = model.identity();
            let said = format!(
                "{}: imported memories keep no request of their agent: their questions are re-asked to {} ({}) with {}, \
                 so self-consistency measures that model, not the agent that answered",
                ctx.stage_id,
                id.model,
                id.backend,
                dir.join("executor.txt").display()
            );
            ctx.progress.warn(&said);
            ctx.progress
                .note("answerer", serde_json::json!({"re_asked": true, "backend": id.backend, "model": id.model}));
        }
        let rows = verifiers::score_all(ctx, &memories, self.concurrency, |m| {
            let mut s = Scored::of(m);
            let prompt = template.render(m, &[])?;
            let key = |text: &str| answer_of(&m.question, &m.fields, text);
            // No answer agrees with nothing (V = 0); a task the domain cannot compare on gets no V.
            let stored = match m.answer.as_deref() {
                None => String::new(),
                Some(a) => match key(a) {
                    Some(k) => k,
                    None => {
                        s.detail = serde_json::json!({"stored": null, "samples": [], "no_claim": true}).to_string();
                        return Ok(s);
                    }
                },
            };
            let mut answers = Vec::new();
            for i in 0..self.samples {
                let decoding = Decoding { seed: u64::from(i), ..self.decoding.clone() };
                let req = verifiers::request(Some(&system), prompt.clone(), &decoding, i);
                answers.push(s.spend(model.chat(&req)).map(|c| key(&c.text).unwrap_or_default()));
            }
            let ok: Vec<&String> = answers.iter().flatten().collect();
            // An empty answer agrees with nothing: a memory with no answer gets V = 0.
            let agree = ok.iter().filter(|a| !stored.is_empty() && **a == &stored).count();
            s.v = (!ok.is_empty()).then(|| agree as f64 / ok.len() as f64);
            s.sc = s.v;
            s.detail = serde_json::json!({"stored": stored, "samples": answers}).to_string();
            Ok(s)
        })?;
        verifiers::output(ctx, &rows)
    }
}
