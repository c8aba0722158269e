//! `lucid models smoke`: one text-to-SQL answer from each fetched chat model, one embedding pair
//! from MiniLM, and each domain's line on its fetched data (the code domain: HumanEval/0's
//! reference scored by the gold check in the Python sandbox), to show the offline models and the
//! sandbox load and answer (CI runs it after fetching them).

use std::io::Write;
use std::path::Path;

use super::werr;
use crate::error::{Error, Result};

/// Load the offline models in `dir` (SmolLM2 and MiniLM, and each Qwen2.5-Coder when fetched)
/// and print what they answer.
pub fn run(dir: &Path, out: &mut impl Write) -> Result<()> {
    use crate::llm::ChatModel;
    // SmolLM2 is required (the default fetch); the opt-in chat models answer when fetched.
    crate::model_files::smollm2_path(dir)?;
    let models = crate::model_files::chat_models()
        .filter_map(|name| Some((name, crate::model_files::chat_model_path(dir, name).ok()?)));
    for (name, path) in models {
        let model = crate::llm::local::LocalModel::load_as(&path, Some(crate::llm::local::Requantize::Q8_0))?;
        let c = model.chat(&crate::model_files::smoke_request(48)).map_err(|f| Error::model(f.to_string()))?;
        writeln!(
            out,
            "{name} ({} -> {} tokens, {:.2} s): {}",
            c.tokens_in,
            c.tokens_out,
            c.latency.as_secs_f64(),
            c.text.trim()
        )
        .map_err(werr)?;
    }
    let emb = crate::embed::Embedder::load(&crate::model_files::minilm_path(dir)?, crate::embed::Pooling::Mean, 256)?;
    let v = emb.embed(&["How many singers are there?", "Count the singers.", "What is the capital of France?"], 8)?;
    let cos = |i: usize, j: usize| crate::embed::bert::cosine(&v[i], &v[j]);
    writeln!(out, "minilm ({}): cos(paraphrase) = {:.3}, cos(unrelated) = {:.3}", emb.name, cos(0, 1), cos(0, 2))
        .map_err(werr)?;
    // Each domain's offline data at work, where it is fetched (code: a reference in the sandbox).
    let cache = dir.parent().unwrap_or(dir);
    for e in crate::domains::registry::all() {
        if let Some(line) = (e.smoke)(dir, cache) {
            writeln!(out, "{}", line?).map_err(werr)?;
        }
    }
    Ok(())
}
