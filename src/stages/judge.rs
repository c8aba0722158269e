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

/// Config of a judge stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeStage {
    /// The judge model (default: local SmolLM2).
    #[serde(default)]
    pub model: ModelConfig,
    /// Its prompt template (variables: question, answer and the task's text columns).
    pub prompt: String,
    /// Decoding (default: 16 tokens, greedy).
    #[serde(default = "default_decoding")]
    pub decoding: Decoding,
    /// The episodes' column holding the stored answer.
    #[serde(default = "default_answer")]
    pub answer_column: String,
    /// Memories judged at once (operational).
    #[serde(default = "default_jobs", skip_serializing)]
    pub concurrency: usize,
    /// Use the response cache (operational).
    #[serde(default = "yes", skip_serializing)]
    pub response_cache: bool,
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
pub(crate) fn default_decoding() -> Decoding {
    Decoding { max_tokens: 16, ..Decoding::default() }
}

impl JudgeStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "judge";
}

impl Stage for JudgeStage {
    verifiers::bank_stage!();

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        let mut fp = super::model_fingerprint(&self.model, ctx)?;
        let p = ctx.resolve(&self.prompt);
        fp.insert("prompt".into(), crate::fingerprint::file_fingerprint(&p)?);
        Ok(fp)
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let memories = verifiers::memories(ctx, inputs, &self.answer_column)?;
        let template = Template::load(&ctx.resolve(&self.prompt))?;
        let model = super::chat_model(&self.model, ctx, self.response_cache)?;
        super::check_choices(ctx, model.as_ref(), &self.decoding, "decoding.choices")?;
        let rows = verifiers::score_all(ctx, &memories, self.concurrency, |m| {
            let mut s = Scored::of(m);
            let (v, detail) = verifiers::verdict(model.as_ref(), template.render(m, &[])?, &self.decoding, &mut s);
            (s.v, s.detail) = (v, detail.to_string());
            Ok(s)
        })?;
        verifiers::output(ctx, &rows)
    }
}
