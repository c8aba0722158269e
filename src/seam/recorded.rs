//! One model call and its `calls` row: what the built-in agent's roles and an agent program's
//! proxy both record (one place, so neither reaches into the other).

use crate::llm::cache::request_key;
use crate::llm::{CallFailure, ChatModel, ChatRequest, Completion};
use crate::seam::records::CallRecord;

/// Call `model` with `req` for episode `step` of task `question_id` in `role`: the outcome and
/// its `calls` row.
pub fn recorded_call(
    model: &dyn ChatModel,
    req: &ChatRequest,
    step: u64,
    question_id: i64,
    role: &'static str,
) -> (std::result::Result<Completion, CallFailure>, CallRecord) {
    let id = model.identity();
    let mut rec = CallRecord {
        step,
        question_id,
        role,
        key: request_key(&id, req),
        backend: id.backend,
        model: id.model,
        endpoint: id.endpoint,
        text: None,
        error: None,
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 0.0,
        attempts: 0,
        cache_hit: false,
    };
    let out = model.chat(req);
    match &out {
        Ok(c) => {
            rec.tokens_in = c.tokens_in;
            rec.tokens_out = c.tokens_out;
            rec.latency_ms = c.latency.as_secs_f64() * 1e3;
            rec.attempts = c.attempts;
            rec.cache_hit = c.cache_hit;
            rec.text = Some(c.text.clone());
        }
        Err(f) => {
            rec.attempts = f.attempts;
            rec.error = Some(f.message.clone());
        }
    }
    (out, rec)
}
