//! Any OpenAI-compatible `/chat/completions` server (hosted APIs, vLLM, llama.cpp server, Ollama),
//! with forced choice scored from the server's log-probabilities ([`super::forced_choice`]).

use serde_json::json;

use super::http::HttpClient;
use super::{CallFailure, ChatModel, ChatRequest, Completion, ModelIdentity};
use crate::error::Fault;

/// The OpenAI-compatible backend.
pub struct OpenAi {
    /// HTTP client.
    pub http: HttpClient,
    /// Base URL including the version path (e.g. `http://localhost:8000/v1`).
    pub base_url: String,
    /// Model name sent to the server.
    pub model: String,
}

/// `req`'s messages as chat APIs take them.
pub fn messages(req: &ChatRequest) -> Vec<serde_json::Value> {
    req.messages.iter().map(|m| json!({"role": m.role.as_str(), "content": m.content})).collect()
}

/// The request body for `req`.
pub fn body(model: &str, req: &ChatRequest) -> serde_json::Value {
    let d = &req.decoding;
    let mut b = json!({
        "model": model,
        "messages": messages(req),
        "max_tokens": d.max_tokens,
        "temperature": d.temperature,
        "seed": d.seed.wrapping_add(req.sample_index as u64),
        "n": 1,
    });
    if let Some(p) = d.top_p {
        b["top_p"] = json!(p);
    }
    if !d.stop.is_empty() {
        b["stop"] = json!(d.stop);
    }
    b
}

/// Text and token counts from a response, or why it is unusable.
pub fn parse(v: &serde_json::Value) -> Result<(String, u32, u32), Fault> {
    let text = v["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| Fault::new("response has no choices[0].message.content"))?;
    let tok = |k: &str| v["usage"][k].as_u64().unwrap_or(0) as u32;
    Ok((text.to_string(), tok("prompt_tokens"), tok("completion_tokens")))
}

impl ChatModel for OpenAi {
    fn identity(&self) -> ModelIdentity {
        ModelIdentity {
            backend: "openai".into(),
            model: self.model.clone(),
            endpoint: Some(super::http::normalize_base_url(&self.base_url)),
        }
    }

    fn chat(&self, req: &ChatRequest) -> Result<Completion, CallFailure> {
        let url = format!("{}/chat/completions", self.base_url.trim_end_matches('/'));
        let headers = self.http.bearer();
        let choices = &req.decoding.choices;
        if choices.is_empty() {
            return self.http.chat_call(&url, &headers, &body(&self.model, req), req, &parse);
        }
        let scored = |v: &serde_json::Value| {
            let text = super::forced_choice::answer(v, choices)?;
            let tok = |k: &str| v["usage"][k].as_u64().unwrap_or(0) as u32;
            Ok((text, tok("prompt_tokens"), tok("completion_tokens")))
        };
        let fc = super::forced_choice::request(body(&self.model, req), choices);
        self.http.chat_call(&url, &headers, &fc, req, &scored)
    }

    fn supports_choices(&self) -> bool {
        true
    }
}
