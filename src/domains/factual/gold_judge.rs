//! An LLM gold judge for factual answers, in SimpleQA's grading style (CORRECT / INCORRECT /
//! NOT_ATTEMPTED), an option of the evaluate stage beside the normalised match: its requests
//! carry the gold answer, so only the evaluate stage may make them (the loop's and verifiers'
//! requests never do). Its verdicts are recorded in their own columns; `u` stays the normalised
//! match, and `pipelines/reports/gold_judge.sql` reports how often the two agree.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::datasets::qa::FactGold;
use crate::error::{Error, Result};
use crate::llm::cache::CachedModel;
use crate::llm::{ChatModel, ChatRequest, Decoding, Message, ModelConfig};

/// The evaluate stage's `judge:` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeConfig {
    /// The judge model.
    pub model: ModelConfig,
    /// Its prompt template (Jinja; variables question, target, aliases, predicted).
    #[serde(default = "default_prompt")]
    pub prompt: String,
    /// Decoding (default: 8 tokens, greedy; `choices` for a forced choice on a local model).
    #[serde(default = "default_decoding")]
    pub decoding: Decoding,
    /// Use the response cache (operational).
    #[serde(default = "yes", skip_serializing)]
    pub response_cache: bool,
}

fn default_prompt() -> String {
    "pipelines/judges/simpleqa.txt".into()
}
fn default_decoding() -> Decoding {
    Decoding { max_tokens: 8, ..Decoding::default() }
}
fn yes() -> bool {
    true
}

/// A judge, ready.
pub struct GoldJudge {
    model: Arc<dyn ChatModel>,
    /// The prompt template, parsed once (template name: its path).
    env: minijinja::Environment<'static>,
    path: PathBuf,
    decoding: Decoding,
}

impl GoldJudge {
    /// The judge of `config`; `resolve` resolves paths against the run's folder.
    pub fn new(config: &JudgeConfig, resolve: impl Fn(&str) -> PathBuf, cache_dir: &Path) -> Result<GoldJudge> {
        let path = resolve(&config.prompt);
        let template = std::fs::read_to_string(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.add_template_owned(path.display().to_string(), template).map_err(|e| Error::input_from(&path, "", e))?;
        let inner = config.model.resolved(&resolve).build(&crate::model_files::models_dir(cache_dir))?;
        let model: Arc<dyn ChatModel> = if config.response_cache {
            Arc::new(CachedModel::new(inner, &cache_dir.join("responses.sqlite"))?)
        } else {
            inner
        };
        Ok(GoldJudge { model, env, path, decoding: config.decoding.clone() })
    }

    /// correct / incorrect / not_attempted / unparseable, or failed (the call failed after its
    /// retries).
    pub fn grade(&self, question: &str, gold: &FactGold, predicted: Option<&str>) -> Result<&'static str> {
        let vars = minijinja::context! {
            question => question, target => &gold.answer, aliases => &gold.aliases, predicted => predicted.unwrap_or(""),
        };
        let err = |e: minijinja::Error| Error::input_from(&self.path, "", e);
        let prompt =
            self.env.get_template(&self.path.display().to_string()).and_then(|t| t.render(vars)).map_err(err)?;
        let req = ChatRequest {
            messages: vec![Message::user(prompt.trim().to_string())],
            decoding: self.decoding.clone(),
            sample_index: 0,
            scope: None,
        };
        Ok(match self.model.chat(&req) {
            Ok(c) => verdict(&c.text),
            Err(_) => "failed",
        })
    }
}

/// The judge's verdict in its answer: the first of NOT_ATTEMPTED, INCORRECT, CORRECT it names
/// (as a word, any case; `NOT ATTEMPTED` too), else unparseable.
pub fn verdict(text: &str) -> &'static str {
    let upper = text.to_ascii_uppercase().replace("NOT ATTEMPTED", "NOT_ATTEMPTED");
    let words: Vec<&str> = upper.split(|c: char| !(c.is_ascii_alphabetic() || c == '_')).collect();
    match words.iter().find(|w| matches!(**w, "NOT_ATTEMPTED" | "INCORRECT" | "CORRECT")) {
        Some(&"NOT_ATTEMPTED") => "not_attempted",
        Some(&"INCORRECT") => "incorrect",
        Some(_) => "correct",
        None => "unparseable",
    }
}
