//! llama.cpp's own `llama-server`: chat through its OpenAI-compatible `/v1/chat/completions`
//! (the [`super::openai`] request and parsing), and forced choice scored exactly through its
//! native endpoints rather than from one token's `top_logprobs`.
//!
//! A forced choice is the log-likelihood of each whole choice after the prompt, token by token,
//! as the local backend computes it:
//! 1. `/apply-template` renders the messages with the chat template the server serves (the one
//!    its chat endpoint applies, the assistant's opener included);
//! 2. `/tokenize` gives the prompt's tokens and those of prompt + choice (special tokens parsed,
//!    the model's BOS added as its chat endpoint adds it); a choice's tokens are what follows the
//!    prompt's (BPE does not merge across the template's assistant opener);
//! 3. for each token of each choice, `/completion` with the prompt and the choice's earlier tokens
//!    as token ids, one token asked for with that token forced (`logit_bias` +1000) and
//!    `n_probs: 1`: the server reports the forced token's probability from the model's raw logits
//!    (`post_sampling_probs` off, its default), so the bias never enters the score. Tokens the
//!    choices share are asked once; `cache_prompt` keeps the prompt's KV cache between the calls.
//!
//! The answer is the likeliest choice (the first on a tie, as the local backend), in the local
//! backend's format, with every score. The server must be started on the model the pipeline
//! names: llama-server serves one model and ignores the `model` field.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{Value, json};

use super::http::HttpClient;
use super::{CallFailure, ChatModel, ChatRequest, Completion, ModelIdentity};

/// The bias that forces a token: far beyond any logit difference a model produces.
const FORCE: f64 = 1000.0;

/// The llama-server backend.
pub struct LlamaServer {
    /// HTTP client.
    pub http: HttpClient,
    /// The server's root (`http://127.0.0.1:8080`; a trailing `/v1` is dropped).
    pub root: String,
    /// Model name sent on chat requests (llama-server answers with the model it was started on).
    pub model: String,
}

/// The server's root from a configured base URL, with or without its `/v1`.
pub fn root_of(base_url: &str) -> String {
    let url = super::http::normalize_base_url(base_url);
    url.strip_suffix("/v1").map_or(url.clone(), str::to_string)
}

impl LlamaServer {
    /// POST `body` to the native endpoint `path`; attempts are added to `attempts`.
    fn post(&self, path: &str, body: &Value, attempts: &mut u32) -> Result<Value, CallFailure> {
        let (result, n) = self.http.post_json(&format!("{}{path}", self.root), &self.http.bearer(), body);
        *attempts += n;
        result.map_err(|f| CallFailure { message: format!("{path}: {f}"), attempts: *attempts })
    }

    fn tokenize(&self, content: &str, add_special: bool, attempts: &mut u32) -> Result<Vec<u32>, CallFailure> {
        let v = self.post("/tokenize", &json!({"content": content, "add_special": add_special}), attempts)?;
        v["tokens"]
            .as_array()
            .and_then(|t| t.iter().map(|x| x.as_u64().map(|x| x as u32)).collect::<Option<Vec<u32>>>())
            .ok_or_else(|| fault("/tokenize answered no `tokens` array of ids", *attempts))
    }

    /// The raw-logit log-probability of `token` after `prefix`.
    fn token_logprob(&self, prefix: &[u32], token: u32, attempts: &mut u32) -> Result<f64, CallFailure> {
        let body = json!({
            "prompt": prefix, "n_predict": 1, "n_probs": 1, "logit_bias": [[token, FORCE]],
            "temperature": 0.0, "seed": 0, "cache_prompt": true, "post_sampling_probs": false,
        });
        let v = self.post("/completion", &body, attempts)?;
        let p = &v["completion_probabilities"][0];
        if p["id"].as_u64() != Some(token as u64) {
            return Err(fault(
                format!(
                    "/completion did not take the forced token {token} (answered {}): the server ignores logit_bias",
                    p["id"]
                ),
                *attempts,
            ));
        }
        p["logprob"].as_f64().ok_or_else(|| {
            fault(
                "/completion answered no completion_probabilities[0].logprob: a llama-server older than the \
                 logprob format (2025) cannot score choices exactly",
                *attempts,
            )
        })
    }

    fn choose(&self, req: &ChatRequest) -> Result<Completion, CallFailure> {
        let start = Instant::now();
        let mut attempts = 0;
        let messages = super::openai::messages(req);
        let templated = self.post("/apply-template", &json!({"messages": messages}), &mut attempts)?;
        let prompt = templated["prompt"]
            .as_str()
            .ok_or_else(|| fault("/apply-template answered no `prompt` string", attempts))?
            .to_string();
        let ids = self.tokenize(&prompt, true, &mut attempts)?;
        let choices = &req.decoding.choices;
        let mut memo: HashMap<Vec<u32>, f64> = HashMap::new();
        let mut scored: Vec<(f64, usize)> = Vec::with_capacity(choices.len());
        for choice in choices {
            let joint = self.tokenize(&format!("{prompt}{choice}"), true, &mut attempts)?;
            let cont = match joint.strip_prefix(ids.as_slice()) {
                Some(rest) => rest.to_vec(),
                None => self.tokenize(choice, false, &mut attempts)?,
            };
            let mut lp = 0.0;
            for j in 0..cont.len() {
                let path = cont[..=j].to_vec();
                let step = match memo.get(&path) {
                    Some(&x) => x,
                    None => {
                        let prefix: Vec<u32> = ids.iter().chain(&cont[..j]).copied().collect();
                        let x = self.token_logprob(&prefix, cont[j], &mut attempts)?;
                        memo.insert(path, x);
                        x
                    }
                };
                lp += step;
            }
            scored.push((lp, cont.len()));
        }
        let scores: Vec<f64> = scored.iter().map(|s| s.0).collect();
        let best = super::forced_choice::first_best(&scores);
        Ok(Completion {
            text: super::forced_choice::answer_text(choices, &scores, best),
            tokens_in: ids.len() as u32,
            tokens_out: scored.get(best).map_or(0, |s| s.1 as u32),
            latency: start.elapsed(),
            attempts,
            cache_hit: false,
        })
    }
}

fn fault(message: impl Into<String>, attempts: u32) -> CallFailure {
    CallFailure { message: message.into(), attempts }
}

impl ChatModel for LlamaServer {
    fn identity(&self) -> ModelIdentity {
        ModelIdentity { backend: "llama-server".into(), model: self.model.clone(), endpoint: Some(self.root.clone()) }
    }

    fn chat(&self, req: &ChatRequest) -> Result<Completion, CallFailure> {
        if req.decoding.choices.is_empty() {
            let url = format!("{}/v1/chat/completions", self.root);
            let body = super::openai::body(&self.model, req);
            return self.http.chat_call(&url, &self.http.bearer(), &body, req, &super::openai::parse);
        }
        self.choose(req)
    }

    fn supports_choices(&self) -> bool {
        true
    }
}
