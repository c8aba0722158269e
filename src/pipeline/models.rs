//! The chat model a stage calls: its backend built from the config (paths resolved against the
//! run), behind the response cache when asked, the files that decide its answers (for a stage's
//! key), and the check that a forced choice is one the backend can score.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::llm::cache::CachedModel;
use crate::llm::{ChatModel, Decoding, ModelConfig};
use crate::pipeline::stage::StageContext;

/// The response cache's file under a cache folder (shared by every stage and every run there).
pub fn responses_path(cache_dir: &Path) -> PathBuf {
    cache_dir.join("responses.sqlite")
}

/// The chat model of `config` (paths resolved against the run), behind the response cache
/// (`responses_path`) when `cached`: what every stage that calls a model uses.
pub fn chat_model(config: &ModelConfig, ctx: &StageContext, cached: bool) -> Result<Arc<dyn ChatModel>> {
    let inner = config.resolved(|p| ctx.resolve(p)).build(&crate::model_files::models_dir(&ctx.cache_dir))?;
    Ok(if cached {
        let model = CachedModel::new(inner, &responses_path(&ctx.cache_dir))?;
        Arc::new(model.with_shared_tier(ctx.shared_responses.clone()))
    } else {
        inner
    })
}

/// The content hashes of the files that decide the answers of `config`'s model, keyed
/// `model/<file name>` (for a stage's cache key).
pub fn model_fingerprint(config: &ModelConfig, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
    let files = config.resolved(|p| ctx.resolve(p)).files(&crate::model_files::models_dir(&ctx.cache_dir))?;
    files
        .iter()
        .map(|f| {
            let name = format!("model/{}", f.file_name().unwrap_or_default().to_string_lossy());
            Ok((name, crate::fingerprint::file_fingerprint(f)?))
        })
        .collect()
}

/// An error naming the stage and the config field (`field`: e.g. `roles.grader.choices`) when
/// `decoding` asks `model` for a forced choice it cannot score: before any call, never a silent
/// generation, never a column of failures.
pub fn check_choices(ctx: &StageContext, model: &dyn ChatModel, decoding: &Decoding, field: &str) -> Result<()> {
    if decoding.choices.is_empty() || model.supports_choices() {
        return Ok(());
    }
    Err(Error::stage(
        &ctx.stage_id,
        format!(
            "{field} asks for forced choice, which needs a backend that scores continuations (local, or an \
             OpenAI-compatible server that returns logprobs); the {} backend generates",
            model.identity().backend
        ),
    ))
}
