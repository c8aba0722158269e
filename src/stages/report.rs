//! `kind: report` — a SQL file run with DataFusion over the stage's input tables; the result is
//! a table named after the stage id. The same file reruns unchanged with `lucid query RUN`.

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fingerprint::file_fingerprint;
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of a report stage.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReportStage {
    /// The SQL file (relative to where `lucid run` runs).
    pub sql: String,
}

impl ReportStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "report";
}

impl Stage for ReportStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn prints_outputs(&self) -> bool {
        true
    }

    fn version(&self) -> u32 {
        1
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &[]
    }

    fn accepts_any_inputs(&self) -> bool {
        true
    }

    /// Reports are post-hoc analysis: they may join evaluation with gold.
    fn reads_gold(&self) -> bool {
        true
    }

    fn outputs(&self, stage_id: &str) -> Vec<String> {
        vec![stage_id.to_string()]
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<std::collections::BTreeMap<String, String>> {
        let p = ctx.resolve(&self.sql);
        Ok([(p.to_string_lossy().into_owned(), file_fingerprint(&p)?)].into())
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let path = ctx.resolve(&self.sql);
        let sql = std::fs::read_to_string(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
        let tables: Vec<(String, RecordBatch)> = inputs.tables.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let out = crate::runs::sql_over(&tables, &sql).map_err(|e| Error::input_from(&path, "", e))?;
        Ok(vec![(ctx.stage_id.clone(), out)])
    }
}
