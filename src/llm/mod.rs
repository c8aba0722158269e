//! Chat models: one trait, five backends (OpenAI-compatible HTTP, llama.cpp's llama-server,
//! Anthropic Messages, a local candle GGUF model, replay of recorded calls) plus an instant
//! scripted stand-in for overhead benchmarks, a response cache, and retries. A call that still
//! fails after its retries is returned as a [`CallFailure`] for the caller to record — never
//! dropped, never a panic. API keys are read from environment variables and never written out.
//!
//! Two families: the backends and what they share live here; the local engine — the GGUF
//! decoder, its quantized kernels and tiles (four of the audited `unsafe` modules), batching and
//! sampling — lives in [`local`].

pub mod anthropic;
pub mod cache;
pub mod config;
pub mod forced_choice;
pub mod http;
pub mod llama_server;
pub mod local;
pub mod openai;
pub mod replay;
pub mod retry;
pub mod scripted;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use config::ModelConfig;

/// Who speaks a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The user (our prompts).
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// The role name used by every API and chat template.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    /// Speaker.
    pub role: Role,
    /// Text.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(c: impl Into<String>) -> Message {
        Message { role: Role::System, content: c.into() }
    }
    /// A user message.
    pub fn user(c: impl Into<String>) -> Message {
        Message { role: Role::User, content: c.into() }
    }
    /// A model's message.
    pub fn assistant(c: impl Into<String>) -> Message {
        Message { role: Role::Assistant, content: c.into() }
    }
}

/// Decoding parameters (part of every cache key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decoding {
    /// Most tokens to generate.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// 0 = greedy.
    #[serde(default)]
    pub temperature: f64,
    /// Nucleus sampling mass (None: off).
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Sampling seed (local backend; sent as `seed` to OpenAI-compatible servers).
    #[serde(default)]
    pub seed: u64,
    /// Stop sequences.
    #[serde(default)]
    pub stop: Vec<String>,
    /// Forced choice: instead of generating, score each of these continuations by its
    /// log-likelihood after the prompt and answer the likeliest (as lm-evaluation-harness does for
    /// multiple choice). Backends that can score continuations only (local, and OpenAI-compatible
    /// servers that return log-probabilities: [`forced_choice`]; scripted and replay answer as
    /// recorded). Part of the request key: a forced-choice answer never shares a cache
    /// entry with a generated one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

fn default_max_tokens() -> u32 {
    256
}

impl Default for Decoding {
    fn default() -> Self {
        Decoding {
            max_tokens: default_max_tokens(),
            temperature: 0.0,
            top_p: None,
            seed: 0,
            stop: Vec::new(),
            choices: Vec::new(),
        }
    }
}

/// One request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<Message>,
    /// Decoding.
    pub decoding: Decoding,
    /// Which sample of an otherwise identical request (distinct samples are cached apart).
    pub sample_index: u32,
    /// Whose request it is, where answers must not be shared (an agent program's episode: the
    /// response cache and the local model's prefix states keep one episode's calls from
    /// another's, so no program learns from an answer's speed what an earlier one asked). Not
    /// sent to any model; absent from the key when None, so lucid's own keys are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// A successful call.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The generated text (stop sequence removed).
    pub text: String,
    /// Prompt tokens.
    pub tokens_in: u32,
    /// Generated tokens.
    pub tokens_out: u32,
    /// Wall-clock time including retries (0 for cache hits).
    pub latency: Duration,
    /// Attempts made (0 for cache hits).
    pub attempts: u32,
    /// Served from the response cache.
    pub cache_hit: bool,
}

/// A call that failed after its retries.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("model call failed after {attempts} attempt(s): {message}")]
pub struct CallFailure {
    /// What went wrong (never contains a key).
    pub message: String,
    /// Attempts made.
    pub attempts: u32,
}

/// Which model answers: part of every cache key. Two servers that serve a model under one name
/// are two models: HTTP backends carry their normalised base URL.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// openai / llama-server / anthropic / local / replay.
    pub backend: String,
    /// Model name (local: the GGUF's content hash prefix and file name).
    pub model: String,
    /// The server (HTTP backends: [`http::normalize_base_url`] of the base URL; None otherwise,
    /// and then left out of the key, so local keys are what they always were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

impl ModelIdentity {
    /// A model with no server (local, scripted).
    pub fn new(backend: &str, model: impl Into<String>) -> ModelIdentity {
        ModelIdentity { backend: backend.into(), model: model.into(), endpoint: None }
    }
}

/// A chat model.
pub trait ChatModel: Send + Sync {
    /// Backend and model.
    fn identity(&self) -> ModelIdentity;
    /// Answer one request (after retries, a failure is a value).
    fn chat(&self, req: &ChatRequest) -> Result<Completion, CallFailure>;
    /// Whether it answers forced-choice requests ([`Decoding::choices`]).
    fn supports_choices(&self) -> bool {
        false
    }
}

/// The failure of a forced-choice request sent to a backend that cannot score continuations.
pub fn no_choices(req: &ChatRequest) -> Option<CallFailure> {
    (!req.decoding.choices.is_empty()).then(|| CallFailure {
        message: "forced choice (`choices`) needs a backend that scores continuations: local, or an OpenAI-compatible \
                  server that returns logprobs"
            .into(),
        attempts: 0,
    })
}

/// `text` up to the first stop sequence (servers usually cut already; this makes it certain).
pub fn cut_at_stop(text: &str, stop: &[String]) -> String {
    let end = stop.iter().filter(|s| !s.is_empty()).filter_map(|s| text.find(s.as_str())).min().unwrap_or(text.len());
    text[..end].to_string()
}
