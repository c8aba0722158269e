//! The stage kinds, one file each. A stage maps input tables to output tables and never decides
//! about caching, matrix columns or where files go: the pipeline runner does.

pub mod audit;
pub mod benchmark;
pub mod domains;
pub mod embed;
pub mod evaluate;
pub mod evidence;
pub mod flag;
pub mod import;
pub mod judge;
pub mod memory_loop;
pub mod panel;
pub mod permutation;
pub mod predictions;
pub mod registry;
pub mod report;
pub mod resample;
pub mod retrieve;
pub mod selftest;
pub mod verifiers;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::datasets::Task;
use crate::error::{Error, Result};
use crate::llm::cache::CachedModel;
use crate::llm::{ChatModel, Decoding, ModelConfig};
use crate::pipeline::stage::{Inputs, StageContext};

/// The `tasks` input of a stage, typed (the one reader of the table, `bench::tables`).
pub fn tasks(ctx: &StageContext, inputs: &Inputs) -> Result<Vec<Task>> {
    crate::datasets::tables::tasks_from_batch(inputs.get(ctx, "tasks")?, std::path::Path::new("tasks"))
}

/// The `question_id` and `question` of every task of the `tasks` input, in any domain (what the
/// embed and permutation stages read).
pub fn questions(ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(i64, String)>> {
    use arrow::array::{Int64Array, StringArray};
    let (b, path) = (inputs.get(ctx, "tasks")?, std::path::Path::new("tasks"));
    let qid = crate::table::column::<Int64Array>(b, path, "question_id")?;
    let q = crate::table::column::<StringArray>(b, path, "question")?;
    Ok((0..b.num_rows()).map(|i| (qid.value(i), q.value(i).to_string())).collect())
}

/// The chat model of `config` (paths resolved against the run), behind the response cache
/// (`memory_loop::responses_path`) when `cached`: what every stage that calls a model uses.
pub fn chat_model(config: &ModelConfig, ctx: &StageContext, cached: bool) -> Result<Arc<dyn ChatModel>> {
    let inner = config.resolved(|p| ctx.resolve(p)).build(&crate::model_files::models_dir(&ctx.cache_dir))?;
    Ok(if cached {
        let model = CachedModel::new(inner, &memory_loop::responses_path(&ctx.cache_dir))?;
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
