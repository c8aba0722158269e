//! `kind: flag` — the domain's answer-free channels run over recorded episodes, after the fact
//! (`flags`). The memory loop runs the same channels live (LUCID's demotion needs them at write
//! time); this stage lets a user try other channels or thresholds on a finished run without a
//! single model call, e.g. to measure each channel's precision. It never reads gold. The domain
//! is the tasks' (`domain:` names it when the config is to be checked before the run); its config
//! is the domain's: text-to-SQL's detector options (channels, thresholds) at the top level, as
//! before domains existed; in another domain `channels:` and the domain's `options:`.

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::domains::registry as domains;
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Misplanned, Planned, Stage, StageContext};

/// Config of the flag stage: the domain (default: the tasks'), and the domain's flag options.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct FlagStage {
    /// The domain whose channels run (absent: the `tasks` input's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The domain's flag options.
    #[serde(flatten)]
    pub options: Map<String, Value>,
}

impl FlagStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "flag";

    /// The options with their defaults, in `entry`'s domain.
    fn options(&self, entry: &domains::Entry) -> std::result::Result<Value, Misplanned> {
        (entry.flag_options)(&self.options).map_err(|e| {
            let at = crate::pipeline::spec::unknown_field(&e.0)
                .map(str::to_string)
                .or_else(|| self.options.keys().next().cloned());
            let hint =
                if self.domain.is_none() { " (for another domain's channels, name it: `domain: <kind>`)" } else { "" };
            Misplanned::new(at.unwrap_or_else(|| "kind".into()), format!("{} domain: {}{hint}", entry.name, e.0))
        })
    }
}

impl Stage for FlagStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        1
    }

    /// The detector after the fact: it may flag the oracle arm's (gold-informed) episodes.
    fn post_hoc(&self) -> bool {
        true
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &["tasks", "episodes"]
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["flags".into()]
    }

    /// The domain's flag options with their defaults (text-to-SQL's: the detector's, as before).
    fn config_json(&self) -> Value {
        let entry = domains::get(self.domain.as_deref().unwrap_or(domains::DEFAULT));
        let mut json = match entry.map(|e| self.options(&e)) {
            Some(Ok(v)) => v,
            _ => Value::Object(self.options.clone()),
        };
        if let (Some(d), Value::Object(m)) = (&self.domain, &mut json) {
            m.insert("domain".into(), d.clone().into());
        }
        json
    }

    fn check(&self, _: &Planned<'_>) -> std::result::Result<(), Misplanned> {
        let Some(name) = &self.domain else {
            // Without a domain named the options are read when the tasks arrive; text-to-SQL's
            // detector options (the default) are checked now.
            return match domains::get(domains::DEFAULT) {
                Some(e) if self.options.keys().all(|k| k != "options") => self.options(&e).map(|_| ()),
                _ => Ok(()),
            };
        };
        let entry = domains::kind(name).map_err(|e| Misplanned::new(name.as_str(), e.0))?;
        self.options(&entry).map(|_| ())
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let tasks = domains::of_tasks(inputs.get(ctx, "tasks")?).map_err(|e| Error::stage(&ctx.stage_id, e))?;
        if let Some(name) = self.domain.as_deref().filter(|n| *n != tasks.name) {
            return Err(Error::stage(
                &ctx.stage_id,
                format!("the config names the {name} domain, the tasks are {}", tasks.name),
            ));
        }
        let options = self.options(&tasks).map_err(|e| Error::stage(&ctx.stage_id, e.message))?;
        Ok(vec![("flags".into(), (tasks.flags)(&options, ctx, inputs)?)])
    }
}
