//! `lucid models bench`: the figures behind `just bench-models` — MiniLM embedding throughput on a
//! question file, the chat models' prompt reading and generation ([`super::llm_bench`]), and exact
//! top-k retrieval latency at bank sizes of 1k, 10k and 100k (one query at a time, 200 at once,
//! and a 100k-episode run's every query over its earlier episodes, as the retrieve stage does).
//! Timings live here, never in tests.

use std::path::Path;
use std::time::Instant;

use serde::Deserialize;
use serde_json::json;

use crate::embed::{Embedder, Pooling, VectorIndex};
use crate::error::Result;
use crate::rng::SplitMix64;

#[derive(Deserialize)]
struct Q {
    question: String,
}

fn unit(rng: &mut SplitMix64, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim).map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5).collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// Measure everything that is available; absent models are reported, not fatal.
pub fn run(models_dir: &Path, questions: Option<&Path>) -> Result<serde_json::Value> {
    let mut out = serde_json::Map::new();
    out.insert("threads".into(), json!(crate::par::default_jobs()));
    if let (Some(qpath), Ok(dir)) = (questions, crate::model_files::minilm_path(models_dir)) {
        let qs: Vec<Q> = crate::datasets::bird::read_json(qpath)?;
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
    out.insert("llm".into(), super::llm_bench::run(models_dir, None)?);
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
