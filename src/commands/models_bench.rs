//! `lucid models bench`: the figures behind `just bench-models` — MiniLM embedding throughput on a
//! question file, SmolLM2 generation speed (as the file is, and requantized to Q8_0), and exact
//! top-k retrieval latency at bank sizes of 1k, 10k and 100k (one query at a time, 200 at once,
//! and a 100k-episode run's every query over its earlier episodes, as the retrieve stage does).
//! Timings live here, never in tests.

use std::path::Path;
use std::time::Instant;

use serde::Deserialize;
use serde_json::json;

use crate::embed::{Embedder, Pooling, VectorIndex};
use crate::error::Result;
use crate::llm::config::Requantize;
use crate::llm::local::LocalModel;
use crate::llm::{ChatModel, ChatRequest, Decoding, Message};
use crate::rng::SplitMix64;

/// The prompt used for generation speed (also used by the Python peer).
pub const GEN_PROMPT: &str =
    "Write a SQLite query that lists the name and age of every singer older than 30, ordered by age.";
/// Tokens generated per run.
pub const GEN_TOKENS: u32 = 64;

#[derive(Deserialize)]
struct Q {
    question: String,
}

fn unit(rng: &mut SplitMix64, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim).map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5).collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// Generation speed: the median of three runs after a warm-up.
fn generation(m: &LocalModel) -> Result<serde_json::Value> {
    let req = ChatRequest {
        messages: vec![Message::user(GEN_PROMPT)],
        decoding: Decoding { max_tokens: GEN_TOKENS, ..Decoding::default() },
        sample_index: 0,
    };
    let _ = m.chat(&req);
    let mut runs = Vec::new();
    for _ in 0..3 {
        let c = m.chat(&req).map_err(|f| crate::error::Error::Model(f.to_string()))?;
        runs.push((c.tokens_in, c.tokens_out, c.latency.as_secs_f64()));
    }
    runs.sort_by(|a, b| a.2.total_cmp(&b.2));
    let (tin, tout, secs) = runs[1];
    Ok(json!({"model": m.identity().model, "prompt_tokens": tin, "generated_tokens": tout, "seconds": secs,
        "tokens_per_s": tout as f64 / secs}))
}

/// Measure everything that is available; absent models are reported, not fatal.
pub fn run(models_dir: &Path, questions: Option<&Path>) -> Result<serde_json::Value> {
    let mut out = serde_json::Map::new();
    out.insert("threads".into(), json!(crate::par::default_jobs()));
    if let (Some(qpath), Ok(dir)) = (questions, crate::models::minilm_path(models_dir)) {
        let qs: Vec<Q> = crate::bench::bird::read_json(qpath)?;
        let texts: Vec<&str> = qs.iter().map(|q| q.question.as_str()).collect();
        let e = Embedder::load(&dir, Pooling::Mean, 256)?;
        e.embed(&texts[..texts.len().min(64)], 64)?;
        let t = Instant::now();
        e.embed(&texts, 64)?;
        let secs = t.elapsed().as_secs_f64();
        out.insert(
            "embed".into(),
            json!({"model": e.name, "sentences": texts.len(), "seconds": secs, "sentences_per_s": texts.len() as f64 / secs, "batch": 64}),
        );
    }
    if let Ok(path) = crate::models::smollm2_path(models_dir) {
        out.insert("generate".into(), generation(&LocalModel::load(&path)?)?);
        out.insert("generate_q8_0".into(), generation(&LocalModel::load_as(&path, Some(Requantize::Q8_0))?)?);
    }
    let mut rng = SplitMix64(1);
    let mut retrieval = Vec::new();
    let dim = 384;
    let mut idx = VectorIndex::with_capacity(dim, 100_000);
    let queries: Vec<Vec<f32>> = (0..200).map(|_| unit(&mut rng, dim)).collect();
    for size in [1_000usize, 10_000, 100_000] {
        while idx.len() < size {
            idx.push(&unit(&mut rng, dim));
        }
        let t = Instant::now();
        let mut sink = 0.0f32;
        for q in &queries {
            sink += idx.search(q, 4)[0].1;
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / queries.len() as f64;
        let refs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
        let t = Instant::now();
        let many = idx.search_many(&refs, &vec![size; refs.len()], 4, crate::par::default_jobs());
        let batched_us = t.elapsed().as_secs_f64() * 1e6 / queries.len() as f64;
        let agree = many.iter().zip(&queries).all(|(m, q)| *m == idx.search(q, 4));
        retrieval
            .push(json!({"bank": size, "dim": dim, "k": 4, "us_per_query": us, "batched_us_per_query": batched_us,
            "batched_equals_single": agree, "checksum": sink}));
    }
    out.insert("retrieval".into(), json!(retrieval));
    // The retrieve stage's shape: every episode of a 100k-episode run queries the episodes
    // before it, all in one batched call.
    let refs: Vec<&[f32]> = (0..idx.len()).map(|i| idx.row(i)).collect();
    let prefixes: Vec<usize> = (0..idx.len()).collect();
    let t = Instant::now();
    let found = idx.search_many(&refs, &prefixes, 4, crate::par::default_jobs());
    let secs = t.elapsed().as_secs_f64();
    let agree =
        (0..100).map(|_| rng.next_u64() as usize % idx.len()).all(|i| found[i] == idx.search_prefix(refs[i], 4, i));
    out.insert(
        "loop_retrieval".into(),
        json!({"episodes": idx.len(), "k": 4, "seconds": secs, "us_per_query": secs * 1e6 / idx.len() as f64,
            "sample_equals_single": agree}),
    );
    Ok(serde_json::Value::Object(out))
}
