//! `kind: audit` — the bank-level audit (`lucid audit`) as a pipeline stage: of a bank file
//! (`config.bank`), or of the run's own bank (inputs `episodes` and `evaluation`, one `arm`).
//! Writes one table per audit table, named `<id>_<table>` (`audit_eia`, `audit_payoff`, ...).

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::audit::{Columns, Options, audit, read_bank, run_bank, tables};
use crate::error::{Error, Result};
use crate::fingerprint::file_fingerprint;
use crate::pipeline::stage::{Inputs, Stage, StageContext};

// Defaults: those of `lucid audit` ([`Options::default`]).
fn d_tau_dec() -> f64 {
    Options::default().tau_dec
}
fn d_tau_tru() -> f64 {
    Options::default().tau_tru
}
fn d_boot() -> usize {
    Options::default().bootstrap
}
fn d_draws() -> usize {
    Options::default().random_draws
}

/// Config of an audit stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AuditStage {
    /// A bank file (.parquet, .csv, .jsonl), relative to where `lucid run` runs; absent: the run's
    /// own bank from the inputs `episodes` and `evaluation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank: Option<String>,
    /// The arm whose bank to audit (run banks; default lucid, else memento).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    /// Verifier columns (default: every `v_<name>` column).
    #[serde(default)]
    pub verifiers: Vec<String>,
    /// The judges the ensembles and the gold-fit combine (default: every verifier of a bank file;
    /// for the run's bank, its judge stages without the detector's channels, the detector and
    /// panels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ensemble: Option<Vec<String>>,
    /// EIA decorrelation threshold.
    #[serde(default = "d_tau_dec")]
    pub tau_dec: f64,
    /// EIA truthfulness threshold.
    #[serde(default = "d_tau_tru")]
    pub tau_tru: f64,
    /// Bootstrap resamples.
    #[serde(default = "d_boot")]
    pub bootstrap: usize,
    /// Seed of the bootstrap and the random prunes.
    #[serde(default)]
    pub rng_seed: u64,
    /// Random prunes averaged.
    #[serde(default = "d_draws")]
    pub random_draws: usize,
}

impl AuditStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "audit";
}

impl Stage for AuditStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        // 2: verifier tables as inputs; the cost table. 3: whole-bank payoff, controls, ensembles
        // and leave-one-seed-out; the echo_gap table; graded and stored-label grader rows.
        3
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &[]
    }

    fn optional_inputs(&self) -> &'static [&'static str] {
        &["episodes", "evaluation"]
    }

    /// The run's verifier tables (`v_<name>`, from judge, resample, panel and evidence stages).
    fn accepts_any_inputs(&self) -> bool {
        true
    }

    /// Post-hoc analysis: it reads U (evaluation).
    fn reads_gold(&self) -> bool {
        true
    }

    fn outputs(&self, stage_id: &str) -> Vec<String> {
        tables::NAMES.iter().map(|t| format!("{stage_id}_{t}")).collect()
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<std::collections::BTreeMap<String, String>> {
        Ok(match &self.bank {
            Some(b) => {
                let p = ctx.resolve(b);
                [(p.to_string_lossy().into_owned(), file_fingerprint(&p)?)].into()
            }
            None => Default::default(),
        })
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let cols = Columns { verifiers: self.verifiers.clone(), ensemble: self.ensemble.clone(), ..Columns::default() };
        let bank = match &self.bank {
            Some(b) => read_bank(&ctx.resolve(b), &cols, None)?,
            None => {
                let tables: Vec<(String, RecordBatch)> = ["episodes", "evaluation"]
                    .iter()
                    .map(|n| Ok((n.to_string(), inputs.get(ctx, n)?.clone())))
                    .collect::<Result<_>>()?;
                let all = run_bank::banks(&tables).map_err(|e| Error::stage_from(&ctx.stage_id, "", e))?;
                let verifiers: Vec<(String, RecordBatch)> = inputs
                    .tables
                    .iter()
                    .filter(|(n, _)| n.starts_with("v_"))
                    .map(|(n, b)| (n.clone(), b.clone()))
                    .collect();
                let here = std::path::PathBuf::from(format!("stage {}", ctx.stage_id));
                let mut run = run_bank::from_tables(&here, &all, &verifiers, self.arm.as_deref())?;
                run.label_source = run_bank::label_source(&tables, &run.arm);
                run_bank::into_bank(&here, run, &cols)?
            }
        };
        let opts = Options {
            tau_dec: self.tau_dec,
            tau_tru: self.tau_tru,
            bootstrap: self.bootstrap.max(1),
            rng_seed: self.rng_seed,
            random_draws: self.random_draws,
        };
        tables::batches(&audit(&bank, &opts), &ctx.stage_id)
    }
}
