//! The stage registry: YAML `kind:` -> typed config -> stage implementation. The pipeline layer
//! parses with any [`Registry`]; this one names every stage kind of lucid.

use std::sync::Arc;

use serde::Deserialize;

use super::{
    audit::AuditStage, benchmark::BenchmarkStage, embed::EmbedStage, evaluate::EvaluateStage, evidence::EvidenceStage,
    flag::FlagStage, import::ImportStage, judge::JudgeStage, panel::PanelStage, permutation::PermutationStage,
    predictions::PredictionsStage, report::ReportStage, resample::ResampleStage, retrieve::RetrieveStage,
    selftest::SelftestStage,
};
use crate::memory_loop::MemoryLoopStage;
use crate::pipeline::registry::Registry;
use crate::pipeline::stage::Stage;

/// lucid's stage kinds.
pub struct Stages;

impl Registry for Stages {
    const KINDS: &[&str] = &[
        BenchmarkStage::KIND,
        PermutationStage::KIND,
        PredictionsStage::KIND,
        EmbedStage::KIND,
        RetrieveStage::KIND,
        MemoryLoopStage::KIND,
        FlagStage::KIND,
        EvaluateStage::KIND,
        ReportStage::KIND,
        AuditStage::KIND,
        ResampleStage::KIND,
        JudgeStage::KIND,
        PanelStage::KIND,
        EvidenceStage::KIND,
        SelftestStage::KIND,
        ImportStage::KIND,
    ];

    fn deserialize_config<'de, D: serde::Deserializer<'de>>(kind: &str, d: D) -> Result<Arc<dyn Stage>, D::Error> {
        Ok(match kind {
            BenchmarkStage::KIND => Arc::new(BenchmarkStage::deserialize(d)?),
            PermutationStage::KIND => Arc::new(PermutationStage::deserialize(d)?),
            PredictionsStage::KIND => Arc::new(PredictionsStage::deserialize(d)?),
            EmbedStage::KIND => Arc::new(EmbedStage::deserialize(d)?),
            RetrieveStage::KIND => Arc::new(RetrieveStage::deserialize(d)?),
            MemoryLoopStage::KIND => {
                let mut stage = MemoryLoopStage::deserialize(d)?;
                stage.kinds = crate::domains::registry::loop_kinds();
                Arc::new(stage)
            }
            FlagStage::KIND => Arc::new(FlagStage::deserialize(d)?),
            EvaluateStage::KIND => Arc::new(EvaluateStage::deserialize(d)?),
            ReportStage::KIND => Arc::new(ReportStage::deserialize(d)?),
            AuditStage::KIND => Arc::new(AuditStage::deserialize(d)?),
            ResampleStage::KIND => Arc::new(ResampleStage::deserialize(d)?),
            JudgeStage::KIND => Arc::new(JudgeStage::deserialize(d)?),
            PanelStage::KIND => Arc::new(PanelStage::deserialize(d)?),
            EvidenceStage::KIND => Arc::new(EvidenceStage::deserialize(d)?),
            SelftestStage::KIND => Arc::new(SelftestStage::deserialize(d)?),
            ImportStage::KIND => Arc::new(ImportStage::deserialize(d)?),
            other => return Err(serde::de::Error::custom(format!("unknown stage kind `{other}`"))),
        })
    }
}
