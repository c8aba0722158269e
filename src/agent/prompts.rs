//! Prompt templates: one Jinja file per role in a prompts folder (`system.txt`, `planner.txt`,
//! `executor.txt`, `grader.txt`), rendered with minijinja. The files' contents are part of the
//! memory loop's cache key, so editing a prompt reruns exactly the episodes it changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::Environment;
use serde::Serialize;

use crate::error::{Error, Result};

/// The template files of a prompts folder.
pub const FILES: &[&str] = &["system.txt", "planner.txt", "executor.txt", "grader.txt"];

/// A loaded prompts folder.
pub struct Prompts {
    env: Environment<'static>,
    dir: PathBuf,
    system: String,
}

/// A retrieved memory as the planner sees it.
#[derive(Clone, Debug, Serialize)]
pub struct ShownMemory {
    /// The earlier task's question.
    pub question: String,
    /// Its plan.
    pub plan: String,
    /// Its SQL.
    pub sql: String,
    /// Stored label Q (1 trusted, 0 untrusted).
    pub q: u8,
    /// Same database as the current task.
    pub same_db: bool,
    /// Cosine similarity to the current question.
    pub similarity: f32,
}

/// What a template can use.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PromptVars<'a> {
    /// The question.
    pub question: &'a str,
    /// BIRD's evidence (hint), possibly empty.
    pub evidence: &'a str,
    /// The database schema.
    pub schema: &'a str,
    /// Retrieved memories (planner and executor; empty for the no-memory arm).
    pub memories: &'a [ShownMemory],
    /// The plan (executor).
    pub plan: &'a str,
    /// The SQL (grader).
    pub sql: &'a str,
    /// Execution status word (grader).
    pub status: &'a str,
    /// Result preview or error message (grader).
    pub result: &'a str,
}

impl Prompts {
    /// Load every template of `dir`; errors name the file and the template error.
    pub fn load(dir: &Path) -> Result<Prompts> {
        let mut env = Environment::new();
        env.set_keep_trailing_newline(false);
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        for f in FILES {
            let path = dir.join(f);
            let text = std::fs::read_to_string(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
            env.add_template_owned(f.to_string(), text).map_err(|e| Error::input(&path, e.to_string()))?;
        }
        let mut prompts = Prompts { env, dir: dir.to_path_buf(), system: String::new() };
        prompts.system = prompts.render("system.txt", &PromptVars::default())?;
        Ok(prompts)
    }

    /// The system prompt (it takes no variables: rendered once at load).
    pub fn system(&self) -> &str {
        &self.system
    }

    /// Render template `file` with `vars`.
    pub fn render(&self, file: &str, vars: &PromptVars<'_>) -> Result<String> {
        let t = self.env.get_template(file).map_err(|e| Error::input(self.dir.join(file), e.to_string()))?;
        let out = t.render(vars).map_err(|e| Error::input(self.dir.join(file), e.to_string()))?;
        Ok(out.trim().to_string())
    }

    /// Content hashes of the template files, for the cache key.
    pub fn fingerprint(dir: &Path) -> Result<BTreeMap<String, String>> {
        FILES
            .iter()
            .map(|f| Ok((format!("prompts/{f}"), crate::fingerprint::file_fingerprint(&dir.join(f))?)))
            .collect()
    }
}
