//! The chat-model half of `lucid models bench` (`lucid models bench llm` runs it alone): for each
//! offline GGUF present, prompt reading (a 1,000-token prompt read from scratch in the loop's
//! 64-token chunks) and greedy generation of 64 tokens, with lucid's Q4_1/Q5_0 kernels and with
//! candle's own, and SmolLM2 requantized to Q8_0 as the demo ran it before. The same prompt text
//! is what `tests/bench/bench_models.py` gives llama-cpp-python. Timings live here, never in tests.

use std::path::Path;
use std::time::Instant;

use serde_json::json;

use crate::error::{Error, Result};
use crate::llm::local::LocalModel;
use crate::llm::local::Requantize;
use crate::llm::local::qlinear::Linear;
use crate::llm::{ChatModel, ChatRequest, Decoding, Message};

/// The prompt used for generation speed (also used by the Python peer).
pub const GEN_PROMPT: &str =
    "Write a SQLite query that lists the name and age of every singer older than 30, ordered by age.";
/// Tokens generated per run.
pub const GEN_TOKENS: u32 = 64;
/// Tokens of the prompt-reading prompt.
pub const PROMPT_TOKENS: usize = 1000;

/// The prompt-reading text (the Python peer builds the same string): more than
/// [`PROMPT_TOKENS`] tokens of schema-like lines; both sides keep its first 1,000 tokens.
pub fn long_prompt() -> String {
    (0..400).map(|i| format!("Row {i}: singer {i} from country {} is {} years old.\n", i % 17, 20 + i % 50)).collect()
}

/// Best of `runs` timings of `f` (seconds).
fn best(runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut secs = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        secs = secs.min(t.elapsed().as_secs_f64());
    }
    Ok(secs)
}

/// Prompt reading and generation of one loaded model.
fn measure(m: &LocalModel, label: &str, runs: usize) -> Result<serde_json::Value> {
    let merr = Error::from;
    let mut ids = m.chat.encode(&long_prompt()).map_err(merr)?;
    ids.truncate(PROMPT_TOKENS);
    let read = best(runs, || m.read_prompt(&ids).map(|_| ()).map_err(merr))?;
    let req = ChatRequest {
        messages: vec![Message::user(GEN_PROMPT)],
        decoding: Decoding { max_tokens: GEN_TOKENS, ..Decoding::default() },
        sample_index: 0,
        scope: None,
    };
    let mut out = (0, 0);
    let gen_secs = best(runs, || {
        let c = m.chat(&req).map_err(|f| Error::model(f.to_string()))?;
        out = (c.tokens_in, c.tokens_out);
        Ok(())
    })?;
    let together = decode_together(m, TOGETHER_RUNS)?;
    Ok(json!({"label": label, "model": m.identity().model, "prompt_tokens": ids.len(), "prompt_seconds": read,
        "prompt_tokens_per_s": ids.len() as f64 / read, "gen_prompt_tokens": out.0, "generated_tokens": out.1,
        "gen_seconds": gen_secs, "gen_tokens_per_s": out.1 as f64 / gen_secs, "together": together}))
}

/// Sequences decoded together: [`TOGETHER`] chat prompts decoded greedily for [`GEN_TOKENS`]
/// steps each, one at a time and then all in one batch per step; tokens per second both ways
/// (steps only, best of `runs` paired runs), each pair's ratio and their median (a slow spell
/// of a shared machine touches both sides of a pair), and whether every sequence's tokens are
/// the same both ways.
fn decode_together(m: &LocalModel, runs: usize) -> Result<serde_json::Value> {
    let merr = Error::from;
    let prompts: Vec<Vec<u32>> = (0..TOGETHER)
        .map(|i| {
            let text = format!("{GEN_PROMPT} Use table number {i}.");
            m.chat.render(&[Message::user(&text)]).and_then(|p| m.chat.encode(&p))
        })
        .collect::<std::result::Result<_, _>>()
        .map_err(merr)?;
    let steps = GEN_TOKENS as usize;
    let (mut alone_tokens, mut alone_secs) = (Vec::new(), f64::INFINITY);
    let (mut tokens, mut secs) = (Vec::new(), f64::INFINITY);
    let mut paired = Vec::with_capacity(runs);
    // Paired: each run times the sequences alone and then together, so that a slow spell of
    // the machine touches both sides.
    for _ in 0..runs {
        let mut one = 0.0;
        alone_tokens.clear();
        for p in &prompts {
            let (t, s) = m.decode_together(std::slice::from_ref(p), steps).map_err(merr)?;
            alone_tokens.extend(t);
            one += s;
        }
        alone_secs = alone_secs.min(one);
        let (t, s) = m.decode_together(&prompts, steps).map_err(merr)?;
        tokens = t;
        secs = secs.min(s);
        paired.push(one / s);
    }
    paired.sort_by(f64::total_cmp);
    // Steps after the first token: the first comes from reading the prompt.
    let n = (TOGETHER * (steps - 1)) as f64;
    Ok(json!({"sequences": TOGETHER, "steps": steps - 1, "alone_tokens_per_s": n / alone_secs,
        "together_tokens_per_s": n / secs, "speedup": alone_secs / secs, "same_tokens": tokens == alone_tokens,
        "paired_speedups": paired, "median_paired_speedup": paired[paired.len() / 2]}))
}

/// Sequences decoded together in the benchmark.
pub const TOGETHER: usize = 4;

/// Paired runs of the sequences decoded alone and together (best of each, and the pairs'
/// median ratio; a run is seconds).
pub const TOGETHER_RUNS: usize = 7;

/// Every variant of every chat model present (of the model named `only`, when given); absent
/// models are skipped.
pub fn run(models_dir: &Path, only: Option<&str>) -> Result<serde_json::Value> {
    type Variant = (
        &'static str,
        &'static str,
        Option<Requantize>,
        fn(candle_core::quantized::QTensor) -> candle_core::Result<Linear>,
    );
    let variants: [Variant; 6] = [
        ("smollm2", "SmolLM2 Q4_1, lucid kernels", None, Linear::new),
        ("smollm2", "SmolLM2 Q4_1, candle kernels", None, Linear::candle),
        ("smollm2", "SmolLM2 Q4_1 requantized to Q8_0", Some(Requantize::Q8_0), Linear::new),
        ("qwen2.5-coder", "Qwen2.5-Coder-0.5B Q4_K_M, lucid kernels", None, Linear::new),
        ("qwen2.5-coder", "Qwen2.5-Coder-0.5B Q4_K_M, candle kernels", None, Linear::candle),
        ("qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B Q4_K_M, lucid kernels", None, Linear::new),
    ];
    let mut rows = Vec::new();
    for (name, label, requant, linear) in variants {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let Ok(path) = crate::model_files::chat_model_path(models_dir, name) else { continue };
        let m = LocalModel::load_with(&path, requant, linear)?;
        // Warm-up (page in the weights), then the best of two.
        m.read_prompt(&m.chat.encode(GEN_PROMPT)?)?;
        rows.push(measure(&m, label, 2)?);
    }
    Ok(json!(rows))
}
