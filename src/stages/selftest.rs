//! `kind: selftest` — the answering model writes tests for its own stored artifact, and the tests
//! run against it in the tasks' domain (`v_<id>`; code: one sandbox run of the prompt, the code
//! and the tests). V = 1 when the tests pass, 0 when they fail (an assert, an exception, a
//! sandbox limit); null when its call failed or the domain finds no test to run in its text
//! (code: no module-level `assert`, tests that do not parse, a wall-clock stop; math's cross-path,
//! where the "tests" are a program computing the answer: no program, or one that fails or prints
//! no answer — the detail's outcome then reads "no test written" in every domain). The
//! prompt sees the question and the stored artifact only, never the hidden tests: whether a test
//! the model writes for its own solution is an independent verifier or one more echo of its
//! self-grade is what the audit then measures.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;

use super::judge::ModelVerifier;
use super::verifiers::{self, Scored, Template};
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of a selftest stage: the model that writes the tests (the answerer, for the EIA
/// question), its prompt, decoding (default: 256 tokens, greedy), the stored artifact's column.
pub type SelftestStage = ModelVerifier<256>;

impl SelftestStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "selftest";
}

impl Stage for SelftestStage {
    verifiers::bank_stage!();

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        self.files(ctx)
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let domain = crate::domains::registry::of_tasks(inputs.get(ctx, "tasks")?)
            .map_err(|e| Error::stage(&ctx.stage_id, e))?;
        let runner = (domain.test_runner)(ctx)?.ok_or_else(|| {
            Error::stage(&ctx.stage_id, format!("the {} domain cannot run tests a model writes", domain.name))
        })?;
        let memories = verifiers::memories(ctx, inputs, &self.answer_column)?;
        let template = Template::load(&ctx.resolve(&self.prompt))?;
        let model = crate::pipeline::models::chat_model(&self.model, ctx, self.response_cache)?;
        let rows = verifiers::score_all(ctx, &memories, self.concurrency, |m| {
            let mut s = Scored::of(m);
            let Some(artifact) = m.answer.as_deref() else {
                // Nothing stored: nothing passes.
                s.v = Some(0.0);
                s.detail = serde_json::json!({"tests": null, "outcome": "no artifact"}).to_string();
                return Ok(s);
            };
            let reply = s.spend(model.chat(&verifiers::request(None, template.render(m, &[])?, &self.decoding, 0)));
            let Some(reply) = reply else {
                s.detail = serde_json::json!({"tests": null, "outcome": "call failed"}).to_string();
                return Ok(s);
            };
            let (v, outcome) = match runner(&m.question, &m.fields, artifact, &reply.text) {
                Some((true, _)) => (Some(1.0), "passed".to_string()),
                Some((false, why)) => (Some(0.0), format!("failed: {why}")),
                None => (None, "no test written".to_string()),
            };
            s.v = v;
            s.detail = serde_json::json!({"tests": reply.text, "outcome": outcome}).to_string();
            Ok(s)
        })?;
        verifiers::output(ctx, &rows)
    }
}
