//! `kind: judge` — a re-grade of every memory of an arm's bank by any model with any prompt
//! (`v_<id>`): the same model with an adversarial prompt, another model of the same family,
//! another vendor's (any backend). Each is a named verifier on the EIA axes. The prompt sees the
//! question and the stored answer only; the verdict is read from its `VERDICT:` line (forced
//! choice with `decoding.choices` on a local model). V = 1 for CORRECT, 0 for INCORRECT; a call
//! that failed after its retries or an unparseable verdict is recorded in `detail` and leaves V
//! null for that memory.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::verifiers::{self, Scored, Template};
use crate::error::Result;
use crate::llm::{Decoding, ModelConfig};
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of a verifier that asks one model per memory with a prompt template: the judge stage
/// (`ModelVerifier<16>`: a verdict) and the selftest stage (`ModelVerifier<256>`: tests to run).
/// `TOKENS` is the default decoding's token budget.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelVerifier<const TOKENS: u32> {
    /// The model (default: local SmolLM2).
    #[serde(default)]
    pub model: ModelConfig,
    /// Its prompt template (variables: question, answer and the task's text columns).
    pub prompt: String,
    /// Decoding (default: `TOKENS` tokens, greedy).
    #[serde(default = "default_decoding::<TOKENS>")]
    pub decoding: Decoding,
    /// The episodes' column holding the stored answer.
    #[serde(default = "default_answer")]
    pub answer_column: String,
    /// Memories scored at once (operational).
    #[serde(default = "default_jobs", skip_serializing)]
    pub concurrency: usize,
    /// Use the response cache (operational).
    #[serde(default = "yes", skip_serializing)]
    pub response_cache: bool,
}

/// Config of a judge stage.
pub type JudgeStage = ModelVerifier<16>;

impl<const TOKENS: u32> ModelVerifier<TOKENS> {
    /// The model's and the prompt's files, for the key.
    pub fn files(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        let mut fp = crate::pipeline::models::model_fingerprint(&self.model, ctx)?;
        fp.insert("prompt".into(), crate::fingerprint::file_fingerprint(&ctx.resolve(&self.prompt))?);
        Ok(fp)
    }
}

pub(crate) fn default_answer() -> String {
    "answer".into()
}
pub(crate) fn default_jobs() -> usize {
    2
}
pub(crate) fn yes() -> bool {
    true
}
pub(crate) fn default_decoding<const TOKENS: u32>() -> Decoding {
    Decoding { max_tokens: TOKENS, ..Decoding::default() }
}

impl JudgeStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "judge";
}

impl Stage for JudgeStage {
    verifiers::bank_stage!();

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        self.files(ctx)
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let memories = verifiers::memories(ctx, inputs, &self.answer_column)?;
        let template = Template::load(&ctx.resolve(&self.prompt))?;
        let model = crate::pipeline::models::chat_model(&self.model, ctx, self.response_cache)?;
        crate::pipeline::models::check_choices(ctx, model.as_ref(), &self.decoding, "decoding.choices")?;
        let rows = verifiers::score_all(ctx, &memories, self.concurrency, |m| {
            let mut s = Scored::of(m);
            let (v, detail) = verifiers::verdict(model.as_ref(), template.render(m, &[])?, &self.decoding, &mut s);
            (s.v, s.detail) = (v, detail.to_string());
            Ok(s)
        })?;
        verifiers::output(ctx, &rows)
    }
}
