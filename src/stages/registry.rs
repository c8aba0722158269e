//! The stage registry: YAML `kind:` -> typed config -> stage implementation. The pipeline layer
//! parses with any [`Registry`]; this one names every stage kind of lucid.

use std::sync::Arc;

use serde::Deserialize;

use super::{
    audit::AuditStage, benchmark::BenchmarkStage, embed::EmbedStage, evaluate::EvaluateStage, flag::FlagStage,
    memory_loop::MemoryLoopStage, permutation::PermutationStage, predictions::PredictionsStage, report::ReportStage,
    retrieve::RetrieveStage,
};
use crate::pipeline::registry::Registry;
use crate::pipeline::stage::Stage;

/// lucid's stage kinds.
pub struct Stages;

impl Registry for Stages {
    const KINDS: &[&str] = &[
        "benchmark",
        "permutation",
        "predictions",
        "embed",
        "retrieve",
        "memory_loop",
        "flag",
        "evaluate",
        "report",
        "audit",
    ];

    fn deserialize_config<'de, D: serde::Deserializer<'de>>(kind: &str, d: D) -> Result<Arc<dyn Stage>, D::Error> {
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
            "audit" => Arc::new(AuditStage::deserialize(d)?),
            other => return Err(serde::de::Error::custom(format!("unknown stage kind `{other}`"))),
        })
    }
}
