//! What the pipeline layer needs to know of stage kinds, without depending on them: the stages
//! layer implements [`Registry`] (`stages::registry::Stages`) and parsing is generic over it.

use std::sync::Arc;

use super::stage::Stage;

/// The shape of a pipeline file, for error messages.
pub const SHAPE: &str = "{name, description?, seeds?, arms?, runs_dir?, max_parallel?, report?, stages: [{id, kind, description?, inputs?, matrix?, arms?, config?}]}";

/// The stage kinds a pipeline may name, and how each reads its `config:`.
pub trait Registry: 'static {
    /// Every kind, in the order error messages list them.
    const KINDS: &[&str];

    /// Deserialize the `config:` of a stage of kind `kind` into its typed stage (errors keep the
    /// YAML positions of the deserializer).
    fn deserialize_config<'de, D: serde::Deserializer<'de>>(kind: &str, d: D) -> Result<Arc<dyn Stage>, D::Error>;

    /// The stage with every config field at its default (a stage written without `config:`).
    fn default_config(kind: &str) -> Result<Arc<dyn Stage>, serde_norway::Error> {
        Self::deserialize_config(kind, serde_norway::Value::Mapping(Default::default()))
    }
}
