//! Prompt templates: one Jinja file per role in a prompts folder (`system.txt`, `planner.txt`,
//! `executor.txt`, `grader.txt`), rendered with minijinja (variables: [`Vars`]). The files' contents are part of the
//! memory loop's cache key, so editing a prompt reruns exactly the episodes it changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::Environment;
use serde::Serialize;

use crate::error::{Error, Result};

/// The template files of a prompts folder.
pub const FILES: &[&str] = &["system.txt", "planner.txt", "executor.txt", "grader.txt"];

/// The one template a prompts folder may leave out: without it, episodes have no planner call
/// (the executor sees an empty `plan`).
pub const OPTIONAL: &str = "planner.txt";

/// A loaded prompts folder.
pub struct Prompts {
    env: Environment<'static>,
    dir: PathBuf,
    system: String,
}

/// A retrieved memory as the planner sees it: `question`, `plan`, the artifact under its
/// domain's name (`sql`, `answer`), `q`, `same_db`, `similarity`.
#[derive(Clone, Debug)]
pub struct ShownMemory {
    /// The earlier task's question.
    pub question: String,
    /// Its plan.
    pub plan: String,
    /// The artifact's name (the template variable).
    pub artifact_name: &'static str,
    /// Its artifact.
    pub artifact: String,
    /// Stored label Q (1 trusted, 0 untrusted).
    pub q: u8,
    /// Same group as the current task (SQL: database; factual: topic).
    pub same_db: bool,
    /// Cosine similarity to the current question.
    pub similarity: f32,
}

impl Serialize for ShownMemory {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry("question", &self.question)?;
        m.serialize_entry("plan", &self.plan)?;
        m.serialize_entry(self.artifact_name, &self.artifact)?;
        m.serialize_entry("q", &self.q)?;
        m.serialize_entry("same_db", &self.same_db)?;
        m.serialize_entry("similarity", &self.similarity)?;
        m.end()
    }
}

/// What a template can use: `question`, `memories` (planner and executor; empty for the
/// no-memory arm), `plan` (executor), the artifact under its domain's name, `status` and
/// `result` (grader) — each defined in every template, empty where it does not apply — and the
/// domain's task variables (text-to-SQL: `evidence`, `schema`).
pub type Vars = BTreeMap<&'static str, minijinja::Value>;

impl Prompts {
    /// Load every template of `dir`; errors name the file and the template error.
    pub fn load(dir: &Path) -> Result<Prompts> {
        let mut env = Environment::new();
        env.set_keep_trailing_newline(false);
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        for f in FILES {
            let path = dir.join(f);
            if *f == OPTIONAL && !path.exists() {
                continue;
            }
            let text = std::fs::read_to_string(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
            env.add_template_owned(f.to_string(), text).map_err(|e| Error::input_from(&path, "", e))?;
        }
        let mut prompts = Prompts { env, dir: dir.to_path_buf(), system: String::new() };
        prompts.system = prompts.render("system.txt", &Vars::new())?;
        Ok(prompts)
    }

    /// Whether the folder has a planner template.
    pub fn has_planner(&self) -> bool {
        self.env.get_template(OPTIONAL).is_ok()
    }

    /// The system prompt (it takes no variables: rendered once at load).
    pub fn system(&self) -> &str {
        &self.system
    }

    /// Render template `file` with `vars`.
    pub fn render(&self, file: &str, vars: &Vars) -> Result<String> {
        let t = self.env.get_template(file).map_err(|e| Error::input_from(self.dir.join(file), "", e))?;
        let out = t.render(vars).map_err(|e| Error::input_from(self.dir.join(file), "", e))?;
        Ok(out.trim().to_string())
    }

    /// The variables the templates use that none of `given` names, as (file, variable), in file
    /// order: what a domain does not provide (checked when the pipeline is planned).
    pub fn unknown_variables(&self, given: &[&str]) -> Vec<(String, String)> {
        // minijinja's own globals are not variables a domain gives.
        const GLOBALS: &[&str] = &["range", "dict", "namespace", "debug", "loop", "caller", "varargs", "kwargs"];
        let mut out = Vec::new();
        for f in FILES {
            let Ok(t) = self.env.get_template(f) else { continue };
            let mut names: Vec<String> = t
                .undeclared_variables(false)
                .into_iter()
                .filter(|v| !given.contains(&v.as_str()) && !GLOBALS.contains(&v.as_str()))
                .collect();
            names.sort();
            out.extend(names.into_iter().map(|v| (f.to_string(), v)));
        }
        out
    }

    /// The variables every domain gives every template besides its artifact and its own.
    pub const COMMON: &'static [&'static str] = &["question", "memories", "plan", "status", "result"];

    /// Content hashes of the template files, for the cache key.
    pub fn fingerprint(dir: &Path) -> Result<BTreeMap<String, String>> {
        FILES
            .iter()
            .filter(|f| **f != OPTIONAL || dir.join(f).exists())
            .map(|f| Ok((format!("prompts/{f}"), crate::fingerprint::file_fingerprint(&dir.join(f))?)))
            .collect()
    }
}
