//! The stage registry: YAML `kind:` -> typed config -> stage implementation.

use std::sync::Arc;

use serde::Deserialize;

use super::stage::Stage;
use crate::stages::{
    benchmark::BenchmarkStage, embed::EmbedStage, evaluate::EvaluateStage, flag::FlagStage,
    memory_loop::MemoryLoopStage, permutation::PermutationStage, predictions::PredictionsStage, report::ReportStage,
    retrieve::RetrieveStage,
};

/// Every stage kind a pipeline may name.
pub const KINDS: &[&str] =
    &["benchmark", "permutation", "predictions", "embed", "retrieve", "memory_loop", "flag", "evaluate", "report"];

/// The shape of a pipeline file, for error messages.
pub const SHAPE: &str = "{name, description?, seeds?, arms?, runs_dir?, max_parallel?, stages: [{id, kind, description?, inputs?, matrix?, arms?, config?}]}";

/// Deserialize the `config:` of a stage of kind `kind` into its typed stage.
pub fn deserialize_config<'de, D: serde::Deserializer<'de>>(kind: &str, d: D) -> Result<Arc<dyn Stage>, D::Error> {
    Ok(match kind {
        "benchmark" => Arc::new(BenchmarkStage::deserialize(d)?),
        "permutation" => Arc::new(PermutationStage::deserialize(d)?),
        "predictions" => Arc::new(PredictionsStage::deserialize(d)?),
        "embed" => Arc::new(EmbedStage::deserialize(d)?),
        "retrieve" => Arc::new(RetrieveStage::deserialize(d)?),
        "memory_loop" => Arc::new(MemoryLoopStage::deserialize(d)?),
        "flag" => Arc::new(FlagStage::deserialize(d)?),
        "evaluate" => Arc::new(EvaluateStage::deserialize(d)?),
        "report" => Arc::new(ReportStage::deserialize(d)?),
        other => return Err(serde::de::Error::custom(format!("unknown stage kind `{other}`"))),
    })
}

/// The stage with every config field at its default (a stage written without `config:`).
pub fn default_config(kind: &str) -> Result<Arc<dyn Stage>, String> {
    deserialize_config(kind, serde_norway::Value::Mapping(Default::default())).map_err(|e| e.to_string())
}
