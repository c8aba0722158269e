//! `kind: embed` — sentence embeddings of every task's question (`embeddings`: question_id,
//! model, vector). Order-free and shared by every arm and seed. Default model: MiniLM from
//! `lucid models fetch`, mean pooling; point `model` at a SimCSE folder with `pooling: pooler` for
//! the paper's setting.

use std::path::PathBuf;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::embed::{Embedder, Pooling, table::embeddings_batch};
use crate::error::Result;
use crate::fingerprint::file_fingerprint;
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of the embed stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EmbedStage {
    /// Model folder (config.json, tokenizer.json, model.safetensors); default: MiniLM.
    #[serde(default)]
    pub model: Option<String>,
    /// mean (MiniLM) | cls | pooler (SimCSE, as Memento).
    #[serde(default)]
    pub pooling: Pooling,
    /// Sentences per forward pass.
    #[serde(default = "default_batch")]
    pub batch_size: usize,
    /// Truncation, in tokens.
    #[serde(default = "default_max_length")]
    pub max_length: usize,
}

fn default_batch() -> usize {
    64
}
fn default_max_length() -> usize {
    256
}

impl EmbedStage {
    fn folder(&self, ctx: &StageContext) -> Result<PathBuf> {
        match &self.model {
            Some(p) => Ok(ctx.resolve(p)),
            None => crate::model_files::minilm_path(&crate::model_files::models_dir(&ctx.cache_dir)),
        }
    }
}

impl EmbedStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "embed";
}

impl Stage for EmbedStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        1
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &["tasks"]
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["embeddings".into()]
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<std::collections::BTreeMap<String, String>> {
        let dir = self.folder(ctx)?;
        let mut fp = std::collections::BTreeMap::new();
        for f in ["config.json", "tokenizer.json", "model.safetensors"] {
            fp.insert(f.to_string(), file_fingerprint(&dir.join(f))?);
        }
        Ok(fp)
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let tasks = super::questions(ctx, inputs)?;
        let ids: Vec<i64> = tasks.iter().map(|t| t.0).collect();
        let embedder = Embedder::load(&self.folder(ctx)?, self.pooling, self.max_length)?;
        let texts: Vec<&str> = tasks.iter().map(|t| t.1.as_str()).collect();
        ctx.progress.set_total(texts.len() as u64);
        let mut vectors = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.batch_size.max(1) * 8) {
            vectors.extend(embedder.embed(chunk, self.batch_size)?);
            ctx.progress.advance(chunk.len() as u64);
        }
        let batch = embeddings_batch(&ids, &embedder.name, &vectors, embedder.dim)?;
        Ok(vec![("embeddings".into(), batch)])
    }
}
