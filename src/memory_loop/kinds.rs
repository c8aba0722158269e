//! The domain kinds a memory loop can run in, as its stage sees them: handed to the stage when
//! the pipeline is read (the stage registry puts the domains registry's here), so the loop names
//! no domain and reaches no registry of its own. A stage built without them says so when it is
//! planned.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::RecordBatch;
use serde_json::{Map, Value};

use super::MemoryLoopStage;
use crate::datasets::wheels::DataPackage;
use crate::error::{Invalid, Result};
use crate::pipeline::stage::{Inputs, StageContext};

/// The tables a run writes, by name.
pub type Tables = Result<Vec<(String, RecordBatch)>>;

/// A domain kind as the memory loop plans, keys and runs it.
#[derive(Clone, Copy)]
pub struct LoopKind {
    /// Its name (`domain: {kind: ...}`).
    pub name: &'static str,
    /// Its channels, in order.
    pub channels: &'static [&'static str],
    /// The prompt variables its tasks give.
    pub variables: &'static [&'static str],
    /// Its artifact's name (a prompt variable).
    pub artifact: &'static str,
    /// Whether its prompts may leave out the planner.
    pub planner_optional: bool,
    /// The prompt folder of a loop whose config names none.
    pub prompts: &'static str,
    /// The options it also takes at the top of a memory_loop config.
    pub top_level_options: &'static [&'static str],
    /// Its options with their defaults filled in, checked.
    pub options: fn(&Map<String, Value>) -> std::result::Result<Value, Invalid>,
    /// Files the configured domain reads.
    pub fingerprint: fn(&Value, &StageContext) -> Result<BTreeMap<String, String>>,
    /// The memory loop in this domain.
    pub run_loop: fn(&MemoryLoopStage, &Value, &StageContext, &Inputs) -> Tables,
    /// The offline data it reads.
    pub packages: &'static [DataPackage],
}

/// Every domain kind a loop may name, and the one a loop naming none runs in.
pub trait LoopKinds: Send + Sync {
    /// Every kind, in registration order.
    fn all(&self) -> Vec<LoopKind>;
    /// The kind of a loop whose `domain:` block names none.
    fn default_kind(&self) -> &'static str;
}

/// The kinds a stage was handed (none: it was built without them).
#[derive(Clone, Default)]
pub struct KindsHandle(pub Option<Arc<dyn LoopKinds>>);

impl std::fmt::Debug for KindsHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "KindsHandle(registry)" } else { "KindsHandle(none)" })
    }
}

impl KindsHandle {
    /// The kind named `name` (None: the default), or an error listing the kinds.
    pub fn kind(&self, name: Option<&str>) -> std::result::Result<LoopKind, Invalid> {
        let kinds = self.0.as_ref().ok_or_else(|| {
            Invalid::from("this memory_loop stage was built without the domains (read it through the stage registry)")
        })?;
        let name = name.unwrap_or(kinds.default_kind());
        let all = kinds.all();
        all.iter().find(|k| k.name == name).copied().ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|k| k.name).collect();
            Invalid(format!("unknown domain '{name}' (domains: {})", names.join(", ")))
        })
    }

    /// The kind that takes `key` at the top of a memory_loop config, if one does.
    pub fn owner_of(&self, key: &str) -> Option<LoopKind> {
        self.0.as_ref()?.all().into_iter().find(|k| k.top_level_options.contains(&key))
    }
}
