//! A task's environments as a row of the `tasks` table holds them (JSON text), read once into
//! what the sandbox's runs take: the dialogue's steps, observing and the gold all start from it.

use serde_json::Value;

use super::data::long_context;
use super::env::Job;
use super::tables::DialogueTask;
use crate::error::{Error, Result};

/// A task's environments: its id, starting state, classes and whether they load their long context.
pub struct Setting {
    /// BFCL's test id (it names the environments' instances).
    pub test_id: String,
    /// The environments' starting state by class.
    pub initial_config: Value,
    /// The environment classes.
    pub involved_classes: Vec<String>,
    /// Whether the environments load their long context.
    pub long_context: bool,
}

/// A task field's JSON, or an error naming the task and field (the domain's `tasks` checked every
/// field's shape on reading the table, naming its row).
pub fn field<T: serde::de::DeserializeOwned>(task: &DialogueTask, name: &str, text: &str) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| Error::input("tasks", format!("question_id {} ({}): {name}: {e}", task.question_id, task.task_id)))
}

impl Setting {
    /// `task`'s environments.
    pub fn of(task: &DialogueTask) -> Result<Setting> {
        Ok(Setting {
            test_id: task.task_id.clone(),
            initial_config: field(task, "initial_config", &task.initial_config)?,
            involved_classes: field(task, "involved_classes", &task.involved_classes)?,
            long_context: long_context(&task.category),
        })
    }

    /// The run of `steps` from the starting state (`repeat`: each step also run again).
    pub fn job<'a>(&'a self, steps: &'a [Vec<String>], repeat: bool) -> Job<'a> {
        Job {
            test_id: &self.test_id,
            initial_config: &self.initial_config,
            involved_classes: &self.involved_classes,
            long_context: self.long_context,
            steps,
            repeat,
        }
    }
}
