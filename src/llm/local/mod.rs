//! The local backend: a GGUF chat model (llama: the default SmolLM2-135M-Instruct; qwen2:
//! Qwen2.5-Coder) run on the CPU, offline, by [`Transformer`]. Greedy or seeded sampling,
//! max-tokens and stop sequences; optionally Q4_1/Q5_0 weights requantized to Q8_0 at load. The
//! weights are shared read-only by every call and each call has its own KV [`Cache`], so calls
//! from several threads do not interfere.
//!
//! The engine's own modules: [`transformer`] (the decoder), [`qlinear`] with [`kernels`],
//! [`tiles`] and [`q6k`] (quantized products), [`expf`], [`batch`] (calls decoding together),
//! [`sampling`] and [`gguf_tokenizer`].

pub mod batch;
pub mod expf;
pub mod gguf_tokenizer;
pub mod kernels;
pub mod q6k;
pub mod qlinear;
pub mod sampling;
pub mod tiles;
pub mod transformer;

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{Device, Tensor};
use serde::{Deserialize, Serialize};

use self::batch::Batcher;
use self::gguf_tokenizer::GgufChat;
use self::qlinear::Linear;
use self::sampling::{Sampler, Sampling};
use self::transformer::{Cache, Transformer};
use super::{CallFailure, ChatModel, ChatRequest, Completion, Decoding, ModelIdentity, cut_at_stop};
use crate::error::{Error, Fault, Result};

/// A weight format to convert Q4_1 tensors to at load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Requantize {
    /// 8-bit blocks of 32 (candle's SIMD kernels). Since lucid runs Q4_1 and Q5_0 with its own
    /// SIMD kernels this is no longer faster (tests/bench/results/models.md); it stays for runs
    /// that used it. Each weight moves by under 1/220 of its block's largest magnitude (half a
    /// Q8_0 step plus the f16 rounding of the scale), so answers can differ from llama.cpp's on
    /// the same file.
    #[serde(rename = "q8_0")]
    Q8_0,
}

/// Weight formats candle 0.11 has only scalar CPU kernels for (Q4_1: SmolLM2; Q5_0: most of
/// Qwen2.5-Coder's tensors); lucid runs them with its own kernels ([`self::qlinear`]).
pub const SLOW_FORMATS: &[GgmlDType] = &[GgmlDType::Q4_1, GgmlDType::Q5_0];

/// The GGUF in `file` (read as `ct`) rewritten in memory with its [`SLOW_FORMATS`] tensors
/// converted to `to`; metadata and every other tensor unchanged.
pub fn requantize<R: std::io::Read + std::io::Seek>(
    ct: gguf_file::Content,
    file: &mut R,
    to: GgmlDType,
) -> candle_core::Result<(gguf_file::Content, std::io::Cursor<Vec<u8>>)> {
    let mut tensors = Vec::new();
    for (name, info) in &ct.tensor_infos {
        let t = ct.tensor(file, name, &Device::Cpu)?;
        let t = if SLOW_FORMATS.contains(&info.ggml_dtype) {
            QTensor::quantize(&t.dequantize(&Device::Cpu)?, to)?
        } else {
            t
        };
        tensors.push((name.clone(), t));
    }
    let meta: Vec<(&str, &gguf_file::Value)> = ct.metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let mut buf = std::io::Cursor::new(Vec::new());
    gguf_file::write(&mut buf, &meta, &refs)?;
    buf.set_position(0);
    let ct = gguf_file::Content::read(&mut buf)?;
    Ok((ct, buf))
}

/// Prompts are prefilled in chunks of this many tokens, and the state after every whole
/// chunk is kept, so a prompt that shares a prefix with an earlier one — the system prompt, a
/// database's schema, the grader's instructions — starts after it. Every prompt is computed in the
/// same chunks, hit or miss, so its logits are the same either way (and whatever ran before).
const CHUNK: usize = 64;
/// Prefix states kept (least recently used dropped first).
const SNAPSHOTS: usize = 64;
/// The bytes the kept prefix states may hold together (least recently used dropped first): a
/// state is a whole KV cache (Qwen2.5-0.5B: 24 KB a position), so 64 states of the 5-8K-token
/// conversations of BFCL's multi-turn tasks held 5-12 GB per model and a 2-core 24 GiB machine ran
/// out of memory; the demo's prompts (about 350 tokens) keep all 64 well under this.
const SNAPSHOT_BYTES: usize = 2 << 30;

/// A kept prefix state: the scope of the request that made it, the prefix's ids and the KV
/// cache after them.
type Snapshot = (Option<String>, Vec<u32>, Cache);

/// A loaded local model.
pub struct LocalModel {
    model: Transformer,
    /// Prefix states, most recently used last.
    snapshots: Mutex<std::collections::VecDeque<Snapshot>>,
    /// Tokenizer and chat template from the GGUF.
    pub chat: GgufChat,
    identity: ModelIdentity,
    /// Where the calls generating at the same time decode their steps together.
    batcher: Batcher,
}

impl LocalModel {
    /// Load a GGUF file as it is.
    pub fn load(path: &Path) -> Result<LocalModel> {
        LocalModel::load_as(path, None)
    }

    /// Load a GGUF file (llama or qwen2 architecture), its [`SLOW_FORMATS`] weights converted
    /// to `requant` if given.
    pub fn load_as(path: &Path, requant: Option<Requantize>) -> Result<LocalModel> {
        LocalModel::load_with(path, requant, Linear::new)
    }

    /// [`LocalModel::load_as`] with every weight matrix made by `linear` — [`Linear::candle`]
    /// runs candle's own kernels throughout (the benchmark's and the tests' reference).
    pub fn load_with(
        path: &Path,
        requant: Option<Requantize>,
        linear: fn(candle_core::quantized::QTensor) -> candle_core::Result<Linear>,
    ) -> Result<LocalModel> {
        let bad = |m: String| Error::input(path, m);
        let mut file = std::fs::File::open(path).map_err(|source| Error::Read { path: path.into(), source })?;
        let ct = gguf_file::Content::read(&mut file).map_err(|e| Error::input_from(path, "not a GGUF file", e))?;
        let chat = GgufChat::from_metadata(&ct.metadata).map_err(|f| bad(f.to_string()))?;
        let arch = ct.metadata.get("general.architecture").and_then(|v| v.to_string().ok()).cloned();
        let q4k = ct.tensor_infos.values().any(|t| t.ggml_dtype == GgmlDType::Q4K);
        let tier = kernel_tier().filter(|_| q4k).map(|t| format!("+{t}")).unwrap_or_default();
        let model = match requant {
            Some(Requantize::Q8_0) => {
                let (ct, mut buf) = requantize(ct, &mut file, GgmlDType::Q8_0)
                    .map_err(|e| Error::input_from(path, "cannot requantize", e))?;
                Transformer::from_gguf(&ct, &mut buf, linear)
            }
            None => Transformer::from_gguf(&ct, &mut file, linear),
        }
        .map_err(|e| {
            Error::input_from(path, format!("cannot load ({} architecture)", arch.as_deref().unwrap_or("llama")), e)
        })?;
        let hash = crate::fingerprint::hash_file(path)?.to_hex();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        // The chunked prefill decides the numbers (llama's results since prefix states came;
        // qwen2 was read whole before it had a copyable cache); the packed Q4_1/Q5_0 kernels
        // give candle's values bit for bit, so they leave the identity alone.
        let suffix = format!("{}+prefill{CHUNK}{tier}", if requant.is_some() { "+q8_0" } else { "" });
        let identity = ModelIdentity::new("local", format!("{name}@{}{suffix}", &hash[..16]));
        Ok(LocalModel { model, snapshots: Mutex::new(Default::default()), chat, identity, batcher: Batcher::default() })
    }

    /// Generate for `req`: (prompt tokens, generated token ids, text), or an error message.
    pub fn generate(&self, req: &ChatRequest) -> Result<(u32, Vec<u32>, String), Fault> {
        let prompt = self.chat.render(&req.messages)?;
        let ids = self.chat.encode(&prompt)?;
        if !req.decoding.choices.is_empty() {
            return self.choose(&prompt, &ids, &req.decoding.choices, req.scope.as_deref());
        }
        let (out, text) = self.generate_ids(&ids, &req.decoding, req.sample_index, req.scope.as_deref())?;
        Ok((ids.len() as u32, out, text))
    }

    /// Forced choice: the log-likelihood of each continuation after the prompt (one pass over
    /// the prompt, then each continuation token by token on a copy of its KV cache); the answer is
    /// the likeliest continuation (the first on a tie), then a line with every score.
    fn choose(
        &self,
        prompt: &str,
        ids: &[u32],
        choices: &[String],
        scope: Option<&str>,
    ) -> Result<(u32, Vec<u32>, String), Fault> {
        let ce = |e: candle_core::Error| Fault::from("candle", e);
        let longest = choices.iter().map(|c| c.len()).max().unwrap_or(0);
        let window = self.model.window;
        if ids.len() + longest > window {
            return Err(Fault::new(format!(
                "prompt of {} tokens exceeds the model's {window}-token window",
                ids.len()
            )));
        }
        let (base, first) = self.prefill(ids, scope).map_err(ce)?;
        let mut scored: Vec<(f64, Vec<u32>)> = Vec::new();
        for choice in choices {
            // The continuation's tokens as they follow this prompt (BPE may merge across the
            // boundary; the prompt ends with the template's assistant opener, so it does not).
            let joint = self.chat.encode(&format!("{prompt}{choice}"))?;
            let cont: Vec<u32> =
                if joint.starts_with(ids) { joint[ids.len()..].to_vec() } else { self.chat.encode(choice)? };
            let mut fork = base.clone();
            let (mut logits, mut lp) = (first.clone(), 0.0f64);
            for (i, &tok) in cont.iter().enumerate() {
                lp += log_prob(&logits, tok).map_err(ce)?;
                if i + 1 < cont.len() {
                    logits = self.model.step(&[tok], std::slice::from_mut(&mut fork)).map_err(ce)?.remove(0);
                }
            }
            scored.push((lp, cont));
        }
        let scores: Vec<f64> = scored.iter().map(|s| s.0).collect();
        let best = super::forced_choice::first_best(&scores);
        let text = super::forced_choice::answer_text(choices, &scores, best);
        Ok((ids.len() as u32, scored[best].1.clone(), text))
    }

    /// Continue raw `text` (no chat template): the generated text.
    pub fn continue_text(&self, text: &str, decoding: &Decoding) -> Result<String, Fault> {
        Ok(self.generate_ids(&self.chat.encode(text)?, decoding, 0, None)?.1)
    }

    fn generate_ids(
        &self,
        ids: &[u32],
        d: &Decoding,
        sample_index: u32,
        scope: Option<&str>,
    ) -> Result<(Vec<u32>, String), Fault> {
        let window = self.model.window;
        if ids.len() + d.max_tokens as usize > window {
            return Err(Fault::new(format!(
                "prompt of {} tokens plus max_tokens {} exceeds the model's {window}-token window",
                ids.len(),
                d.max_tokens
            )));
        }
        let ce = |e: candle_core::Error| Fault::from("candle", e);
        let (mut cache, mut logits) = self.prefill(ids, scope).map_err(ce)?;
        let sampling = match (d.temperature, d.top_p) {
            (t, _) if t <= 0.0 => Sampling::ArgMax,
            (t, Some(p)) => Sampling::TopP { p, temperature: t },
            (t, None) => Sampling::All { temperature: t },
        };
        let seed = d.seed ^ (sample_index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut sampler = Sampler::new(seed, sampling);
        let member = self.batcher.join();
        let mut out: Vec<u32> = Vec::new();
        let mut text = String::new();
        while out.len() < d.max_tokens as usize {
            let next = sampler.sample(&logits).map_err(ce)?;
            if self.chat.stop_ids.contains(&next) {
                break;
            }
            out.push(next);
            text = self.chat.decode(&out)?;
            if d.stop.iter().any(|s| !s.is_empty() && text.contains(s.as_str())) {
                break;
            }
            logits = member.step(&self.model, next, &mut cache).map_err(ce)?;
        }
        Ok((out, cut_at_stop(&text, &d.stop)))
    }
}

impl LocalModel {
    /// A cache that has read the prompt `ids`, and the logits of the token after it. Prompts are
    /// read in chunks of [`CHUNK`] tokens, starting after the longest kept prefix of the same
    /// `scope` ([`ChatRequest::scope`]).
    fn prefill(&self, ids: &[u32], scope: Option<&str>) -> candle_core::Result<(Cache, Tensor)> {
        self.prefill_from(ids, Some(scope))
    }

    /// Read the prompt `ids` from scratch in [`CHUNK`]s, keeping no state (prompt-reading
    /// speed, as the benchmark measures it): the logits of the token after it.
    pub fn read_prompt(&self, ids: &[u32]) -> Result<Tensor, Fault> {
        self.prefill_from(ids, None).map(|(_, logits)| logits).map_err(|e| Fault::from("candle", e))
    }

    /// [`LocalModel::prefill`], using and keeping prefix states of the scope `keep` holds, or
    /// none.
    fn prefill_from(&self, ids: &[u32], keep: Option<Option<&str>>) -> candle_core::Result<(Cache, Tensor)> {
        if ids.is_empty() {
            return Err(candle_core::Error::Msg("empty prompt".into()));
        }
        let lock = || self.snapshots.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut cache = match keep {
            None => Cache::default(),
            Some(scope) => {
                let mut snaps = lock();
                let hit = (1..=(ids.len() - 1) / CHUNK).rev().find_map(|j| {
                    snaps.iter().position(|(s, k, _)| {
                        s.as_deref() == scope && k.len() == j * CHUNK && k[..] == ids[..j * CHUNK]
                    })
                });
                match hit.and_then(|i| snaps.remove(i)) {
                    Some((s, k, c)) => {
                        let cache = c.clone();
                        snaps.push_back((s, k, c));
                        cache
                    }
                    None => Cache::default(),
                }
            }
        };
        let mut logits = None;
        while cache.len() < ids.len() {
            let end = (cache.len() + CHUNK).min(ids.len());
            logits = Some(self.model.forward(&ids[cache.len()..end], &mut cache)?);
            if let Some(scope) = keep.filter(|_| end.is_multiple_of(CHUNK)) {
                let mut snaps = lock();
                if !snaps.iter().any(|(s, k, _)| s.as_deref() == scope && k[..] == ids[..end]) {
                    snaps.push_back((scope.map(str::to_string), ids[..end].to_vec(), cache.clone()));
                    let mut held: usize = snaps.iter().map(|(_, _, c)| c.bytes()).sum();
                    while snaps.len() > 1 && (snaps.len() > SNAPSHOTS || held > SNAPSHOT_BYTES) {
                        held -= snaps.pop_front().map_or(0, |(_, _, c)| c.bytes());
                    }
                }
            }
        }
        let logits = logits.ok_or_else(|| candle_core::Error::Msg("empty prompt".into()))?;
        Ok((cache, logits))
    }

    /// Greedy decoding of `tokens` tokens after each prompt of `prompts`, every step of all of
    /// them computed together ([`Transformer::step`]; the prompts are read first, one by one,
    /// outside the timing): each prompt's tokens and the seconds the steps took (the
    /// benchmark's measure of sequences decoded together against one alone).
    pub fn decode_together(&self, prompts: &[Vec<u32>], tokens: usize) -> Result<(Vec<Vec<u32>>, f64), Fault> {
        let ce = |e: candle_core::Error| Fault::from("candle", e);
        let argmax = |t: &Tensor| t.argmax(0).and_then(|i| i.to_scalar::<u32>()).map_err(ce);
        let mut caches = Vec::new();
        let mut next = Vec::new();
        for p in prompts {
            let mut c = Cache::default();
            next.push(argmax(&self.model.forward(p, &mut c).map_err(ce)?)?);
            caches.push(c);
        }
        let mut out: Vec<Vec<u32>> = next.iter().map(|&t| vec![t]).collect();
        let start = Instant::now();
        for _ in 1..tokens {
            let logits = self.model.step(&next, &mut caches).map_err(ce)?;
            next = logits.iter().map(argmax).collect::<Result<_, _>>()?;
            out.iter_mut().zip(&next).for_each(|(o, &t)| o.push(t));
        }
        Ok((out, start.elapsed().as_secs_f64()))
    }

    /// log p(next token | `ids`) for every token, from one pass over `ids` with a fresh cache
    /// (the reference the forced choice's incremental scoring is tested against).
    pub fn next_log_probs(&self, ids: &[u32]) -> Result<Vec<f64>, Fault> {
        let ce = |e: candle_core::Error| Fault::from("candle", e);
        let logits = self.model.forward(ids, &mut Cache::default()).map_err(ce)?;
        let n = logits.dim(0).map_err(ce)?;
        (0..n as u32).map(|t| log_prob(&logits, t).map_err(ce)).collect()
    }
}

/// log p(`tok`) under `logits` (a log-softmax, in f64).
fn log_prob(logits: &Tensor, tok: u32) -> candle_core::Result<f64> {
    let v = logits.to_dtype(candle_core::DType::F32)?.to_vec1::<f32>()?;
    let max = v.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let lse = max + v.iter().map(|&x| (x as f64 - max).exp()).sum::<f64>().ln();
    Ok(v.get(tok as usize).map_or(f64::NEG_INFINITY, |&x| x as f64 - lse))
}

impl ChatModel for LocalModel {
    fn identity(&self) -> ModelIdentity {
        self.identity.clone()
    }

    fn supports_choices(&self) -> bool {
        true
    }

    fn chat(&self, req: &ChatRequest) -> std::result::Result<Completion, CallFailure> {
        let start = Instant::now();
        let _counted = self::qlinear::Caller::enter();
        let (tokens_in, out, text) =
            self.generate(req).map_err(|f| CallFailure { message: f.to_string(), attempts: 1 })?;
        Ok(Completion {
            text,
            tokens_in,
            tokens_out: out.len() as u32,
            latency: start.elapsed(),
            attempts: 1,
            cache_hit: false,
        })
    }
}

/// The kernel candle picks at run time that can change a model's numbers, named in its identity
/// so that answers cached on one kind of CPU are never served on another through a shared store.
/// candle repacks K-quant and Q8_0 weights for AVX2, AVX-VNNI or AVX-512 VNNI kernels chosen by
/// the CPU; measured on an AVX-512 VNNI machine against `MISTRALRS_FORCE_AVX2=1`, SmolLM2's and
/// Qwen2.5-Coder's logits are bit-identical (prompt and step), so those tiers leave the identity
/// alone. On CPUs with AMX tiles candle reads Q4_K prompts (32 rows and more) with an AMX kernel
/// instead, which could not be measured here: `amx` then. None everywhere else (identities as
/// before).
pub fn kernel_tier() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        let forced =
            ["MISTRALRS_FORCE_AVX2", "MISTRALRS_FORCE_AVXVNNI"].iter().any(|k| std::env::var(k).as_deref() == Ok("1"));
        if !forced && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vnni") {
            let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
            let has = |f: &str| flags.split_whitespace().any(|x| x == f);
            if has("amx_int8") && has("amx_tile") {
                return Some("amx".into());
            }
        }
    }
    None
}
