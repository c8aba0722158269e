//! `kind: benchmark` — loads a benchmark of any registered domain (its `source:` names it: `lucid
//! domains` lists them) and writes `tasks` (what the agent may see) and `gold` (the references,
//! for evaluation only).

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::domains::BenchmarkConfig;
use crate::domains::registry as domains;
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Misplanned, Planned, Stage, StageContext};

/// The benchmark key's fields, in order, as one shared config wrote them for every source before
/// each domain read its own options: a source's options fill their slots (or are added after
/// them), the slots no source of the domain has keep these values.
const KEY_FORM: &str = r#"{"source": null, "path": null, "split": "dev", "questions": "dev.json", "limit": null, "per_db": null, "per_topic": null}"#;

/// Config of the benchmark stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub struct BenchmarkStage(pub BenchmarkConfig);

impl BenchmarkStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "benchmark";

    /// The domain of the source, checked against the options set.
    fn domain(&self) -> std::result::Result<domains::Entry, Misplanned> {
        let (entry, source) =
            domains::source(&self.0.source).map_err(|e| Misplanned::new(self.0.source.as_str(), e.0))?;
        if let Some(o) = self.0.set_options().into_iter().find(|o| !source.options.contains(o)) {
            let takes = if source.options.is_empty() { "none".into() } else { source.options.join(", ") };
            return Err(Misplanned::new(
                o,
                format!("`{o}` does not apply to source '{}' ({} domain; it takes: {takes})", source.name, entry.name),
            ));
        }
        if source.needs_path && self.0.path.is_none() {
            return Err(Misplanned::new("source", format!("source '{}' needs `path`", source.name)));
        }
        (entry.source_options)(&self.0.options).map_err(|e| {
            let at = crate::pipeline::spec::unknown_field(&e.0).unwrap_or("source");
            Misplanned::new(at, format!("source '{}' ({} domain): {}", source.name, entry.name, e.0))
        })?;
        Ok(entry)
    }

    /// The cache key's config: `source`, `path`, `limit` and the source's options with their
    /// defaults as its domain reads them, laid over the form every key had before the options
    /// were typed per domain ([`KEY_FORM`]), so a stored benchmark keeps its key.
    fn key_config(&self) -> serde_json::Value {
        let mut key: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(KEY_FORM).expect("the key form is JSON");
        key["source"] = self.0.source.clone().into();
        key["path"] = serde_json::to_value(&self.0.path).expect("a path serializes");
        key["limit"] = serde_json::to_value(self.0.limit).expect("a limit serializes");
        if let Ok((entry, _)) = domains::source(&self.0.source)
            && let Ok(serde_json::Value::Object(typed)) = (entry.source_options)(&self.0.options)
        {
            key.extend(typed);
        }
        serde_json::Value::Object(key)
    }

    fn entry(&self, ctx: &StageContext) -> Result<domains::Entry> {
        self.domain().map_err(|e| Error::stage(&ctx.stage_id, e.message))
    }
}

impl Stage for BenchmarkStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn limited(&self, n: usize) -> Option<std::sync::Arc<dyn Stage>> {
        Some(std::sync::Arc::new(BenchmarkStage(BenchmarkConfig { limit: Some(n), ..self.0.clone() })))
    }

    fn version(&self) -> u32 {
        // 2: `tasks.db_hash`.
        2
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &[]
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["tasks".into(), "gold".into()]
    }

    fn config_json(&self) -> serde_json::Value {
        self.key_config()
    }

    fn check(&self, _: &Planned<'_>) -> std::result::Result<(), Misplanned> {
        self.domain().map(|_| ())
    }

    fn data(&self) -> Vec<crate::datasets::wheels::DataPackage> {
        self.domain().map(|e| e.packages.to_vec()).unwrap_or_default()
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        (self.entry(ctx)?.source_fingerprint)(&self.0, ctx)
    }

    fn run(&self, ctx: &StageContext, _: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let (tasks, gold) = (self.entry(ctx)?.load)(&self.0, ctx)?;
        Ok(vec![("tasks".into(), tasks), ("gold".into(), gold)])
    }
}
