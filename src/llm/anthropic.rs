//! Anthropic's Messages API (`/v1/messages`).

use serde_json::json;

use super::http::HttpClient;
use super::{CallFailure, ChatModel, ChatRequest, Completion, ModelIdentity, Role};
use crate::error::Fault;

/// API version header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The Anthropic backend.
pub struct Anthropic {
    /// HTTP client (holds the key).
    pub http: HttpClient,
    /// Base URL (default `https://api.anthropic.com`).
    pub base_url: String,
    /// Model name.
    pub model: String,
}

/// The request body: system messages go to `system`, the rest to `messages`.
pub fn body(model: &str, req: &ChatRequest) -> serde_json::Value {
    let d = &req.decoding;
    let system: Vec<&str> =
        req.messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
    let messages: Vec<_> = req
        .messages
        .iter()
        .filter(|m| m.role != Role::System)
        .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
        .collect();
    let mut b = json!({"model": model, "max_tokens": d.max_tokens, "messages": messages, "temperature": d.temperature});
    if !system.is_empty() {
        b["system"] = json!(system.join("\n\n"));
    }
    if let Some(p) = d.top_p {
        b["top_p"] = json!(p);
    }
    if !d.stop.is_empty() {
        b["stop_sequences"] = json!(d.stop);
    }
    b
}

/// Text and token counts from a response.
pub fn parse(v: &serde_json::Value) -> Result<(String, u32, u32), Fault> {
    let blocks = v["content"].as_array().ok_or_else(|| Fault::new("response has no content array"))?;
    let text: String = blocks.iter().filter(|b| b["type"] == "text").filter_map(|b| b["text"].as_str()).collect();
    let tok = |k: &str| v["usage"][k].as_u64().unwrap_or(0) as u32;
    Ok((text, tok("input_tokens"), tok("output_tokens")))
}

impl ChatModel for Anthropic {
    fn identity(&self) -> ModelIdentity {
        ModelIdentity {
            backend: "anthropic".into(),
            model: self.model.clone(),
            endpoint: Some(super::http::normalize_base_url(&self.base_url)),
        }
    }

    fn chat(&self, req: &ChatRequest) -> Result<Completion, CallFailure> {
        if let Some(f) = super::no_choices(req) {
            return Err(f);
        }
        let url = format!("{}/v1/messages", self.base_url.trim_end_matches('/'));
        let mut headers: Vec<(&'static str, String)> = vec![("anthropic-version", ANTHROPIC_VERSION.into())];
        if let Some(k) = self.http.key() {
            headers.push(("x-api-key", k.expose().to_string()));
        }
        self.http.chat_call(&url, &headers, &body(&self.model, req), req, &parse)
    }
}
