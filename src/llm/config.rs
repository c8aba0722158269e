//! Model configuration as written in a pipeline (`model: {backend: openai, ...}`) and the
//! construction of the backend it names.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::http::{HttpClient, Secret};
use super::local::{LocalModel, Requantize};
use super::retry::RetryPolicy;
use super::{ChatModel, anthropic::Anthropic, llama_server::LlamaServer, openai::OpenAi, replay::Replay};
use crate::error::{Error, Result};

/// Which model answers, and how to reach it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "lowercase")]
pub enum ModelConfig {
    /// An OpenAI-compatible server.
    Openai(HttpConfig),
    /// llama.cpp's `llama-server` (`base_url` its root, default `http://127.0.0.1:8080`): chat
    /// as an OpenAI-compatible server, forced choice scored exactly through its native endpoints.
    #[serde(rename = "llama-server")]
    LlamaServer(HttpConfig),
    /// Anthropic's Messages API.
    Anthropic(HttpConfig),
    /// A local GGUF chat model run by candle on the CPU (default: SmolLM2-135M-Instruct).
    Local(LocalConfig),
    /// Answers from recorded calls.
    Replay(ReplayConfig),
    /// An instant deterministic stand-in (loop-overhead benchmarks, model-free pipeline runs).
    Scripted,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig::Local(LocalConfig::default())
    }
}

/// An HTTP backend.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    /// Model name.
    pub model: String,
    /// Base URL (OpenAI: including `/v1`; default the vendor's).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the key (OpenAI default `OPENAI_API_KEY`,
    /// llama-server `LLAMA_API_KEY`, both optional for local servers; Anthropic default
    /// `ANTHROPIC_API_KEY`). Never the key itself.
    #[serde(default)]
    pub api_key_env: Option<String>,
    // Operational (how fast and how patiently, not what the model answers): never serialized,
    // so never part of a stage's cache key.
    /// Calls in flight at once to this server and model, across every stage instance of the
    /// process (the first instance to connect sets it).
    #[serde(default = "default_concurrency", skip_serializing)]
    pub max_concurrency: usize,
    /// Per-request timeout, seconds.
    #[serde(default = "default_timeout", skip_serializing)]
    pub timeout_secs: f64,
    /// Retries.
    #[serde(default, skip_serializing)]
    pub retry: RetryPolicy,
}

fn default_concurrency() -> usize {
    4
}
fn default_timeout() -> f64 {
    120.0
}

/// The local candle backend.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalConfig {
    /// The GGUF file (default: the `model` named below, else SmolLM2, from `lucid models fetch`).
    #[serde(default)]
    pub gguf: Option<PathBuf>,
    /// A chat model `lucid models` knows by name: smollm2 (default) or qwen2.5-coder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Requantize the file's Q4_1 weights when loading (see [`Requantize`]); default: the
    /// file's own weights, computed as llama.cpp computes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requantize: Option<Requantize>,
}

/// The replay backend.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayConfig {
    /// A recorded `calls` Parquet table (or a folder of them).
    pub calls: PathBuf,
}

impl LocalConfig {
    /// The GGUF file: the configured one, else the named model (default SmolLM2) from `models_dir`.
    pub fn gguf_path(&self, models_dir: &std::path::Path) -> Result<PathBuf> {
        match (&self.gguf, &self.model) {
            (Some(p), _) => Ok(p.clone()),
            (None, Some(name)) => crate::model_files::chat_model_path(models_dir, name),
            (None, None) => crate::model_files::smollm2_path(models_dir),
        }
    }
}

impl ModelConfig {
    /// The config with its file paths (a local GGUF, recorded calls) resolved by `resolve`
    /// (against the run's base folder).
    pub fn resolved(&self, resolve: impl Fn(&str) -> PathBuf) -> ModelConfig {
        let mut model = self.clone();
        match &mut model {
            ModelConfig::Local(c) => c.gguf = c.gguf.take().map(|p| resolve(&p.to_string_lossy())),
            ModelConfig::Replay(c) => c.calls = resolve(&c.calls.to_string_lossy()),
            _ => {}
        }
        model
    }

    /// Files whose content decides the model's answers (for a cache key): a local GGUF, the
    /// recorded calls of a replay.
    pub fn files(&self, models_dir: &std::path::Path) -> Result<Vec<PathBuf>> {
        Ok(match self {
            ModelConfig::Local(c) => vec![c.gguf_path(models_dir)?],
            ModelConfig::Replay(c) => super::replay::calls_files(&c.calls)?,
            _ => Vec::new(),
        })
    }

    /// Build the backend. `models_dir` is where `lucid models fetch` puts the offline models.
    pub fn build(&self, models_dir: &std::path::Path) -> Result<Arc<dyn ChatModel>> {
        Ok(match self {
            ModelConfig::Openai(c) => {
                let key = match &c.api_key_env {
                    Some(var) => Some(Secret::from_env(var)?),
                    None => Secret::from_env("OPENAI_API_KEY").ok(),
                };
                let base = c.base_url.clone().unwrap_or_else(|| OPENAI_URL.into());
                Arc::new(OpenAi { http: http(c, &base, key)?, base_url: base, model: c.model.clone() })
            }
            ModelConfig::LlamaServer(c) => {
                let key = match &c.api_key_env {
                    Some(var) => Some(Secret::from_env(var)?),
                    None => Secret::from_env("LLAMA_API_KEY").ok(),
                };
                let root = super::llama_server::root_of(c.base_url.as_deref().unwrap_or(LLAMA_SERVER_URL));
                Arc::new(LlamaServer { http: http(c, &root, key)?, root, model: c.model.clone() })
            }
            ModelConfig::Anthropic(c) => {
                let key = Secret::from_env(c.api_key_env.as_deref().unwrap_or("ANTHROPIC_API_KEY"))?;
                let base = c.base_url.clone().unwrap_or_else(|| ANTHROPIC_URL.into());
                Arc::new(Anthropic { http: http(c, &base, Some(key))?, base_url: base, model: c.model.clone() })
            }
            ModelConfig::Local(c) => Arc::new(LocalModel::load_as(&c.gguf_path(models_dir)?, c.requantize)?),
            ModelConfig::Replay(c) => Arc::new(Replay::load(&c.calls)?),
            ModelConfig::Scripted => Arc::new(super::scripted::Scripted),
        })
    }
}

const OPENAI_URL: &str = "https://api.openai.com/v1";
const LLAMA_SERVER_URL: &str = "http://127.0.0.1:8080";
const ANTHROPIC_URL: &str = "https://api.anthropic.com";

fn http(c: &HttpConfig, base_url: &str, key: Option<Secret>) -> Result<HttpClient> {
    let timeout = Duration::try_from_secs_f64(c.timeout_secs)
        .map_err(|_| Error::model(format!("timeout_secs must be positive, got {}", c.timeout_secs)))?;
    let endpoint = format!("{} {}", super::http::normalize_base_url(base_url), c.model);
    HttpClient::new(&endpoint, timeout, c.max_concurrency, c.retry.clone(), key)
}
