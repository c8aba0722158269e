//! `kind: import` — another agent's memory bank (and, when given, its results log, a gold file
//! or a truth file) as `tasks`, `episodes`, and with truth `gold` and `evaluation`
//! ([`crate::import`]). Keyed by the content of every file it reads and the mapping, so an
//! edited bank imports again and an unchanged one comes from the stage store (or a shared one).
//! Counts it cannot turn into rows (memories without truth, gold answered by aliases only, gold
//! given with conflicting answers) are printed and noted in the manifest. It expands over
//! `[seed, arm]` (one seed, the arm the memories are written under), so the verifier stages, the
//! audit and the reports bind to it as they bind to a memory loop.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::import::evallog::{self, EvalMapping};
use crate::import::{ImportConfig, import, presets, tables};
use crate::pipeline::stage::{Inputs, Misplanned, Planned, Stage, StageContext};
use crate::stages::verifiers::Scored;

/// Config of the import stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub struct ImportStage(pub ImportConfig);

impl ImportStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "import";

    /// Whether the config gives any truth (then `gold` and `evaluation` are written).
    fn has_truth(&self) -> bool {
        match &self.0.eval {
            Some(m) => m.truth.is_some(),
            None => self.0.gold.is_some() || self.0.truth.is_some() || self.0.log.is_some(),
        }
    }

    fn files(&self) -> Vec<&str> {
        let c = &self.0;
        let mut files = vec![c.bank.as_str()];
        files.extend(c.log.as_deref());
        files.extend(c.gold.as_ref().map(|g| g.path.as_str()));
        files.extend(c.truth.as_deref());
        files
    }
}

/// The keys of `ambiguous` with their lines, for a message (the first five, then how many more).
fn conflicting(ambiguous: &BTreeMap<String, Vec<usize>>) -> String {
    let lines = |l: &[usize]| l.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
    let mut named: Vec<String> = ambiguous.iter().take(5).map(|(k, l)| format!("`{k}` (lines {})", lines(l))).collect();
    if ambiguous.len() > 5 {
        named.push(format!("and {} more", ambiguous.len() - 5));
    }
    named.join(", ")
}

impl Stage for ImportStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        // 2: an answer call's argument or no answer (ReasoningBank: no `send_msg_to_user`, no
        // answer; escapes read); gold written twice counts once, conflicting gold is unscored.
        2
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &[]
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        let mut out = vec!["tasks".to_string(), "episodes".into()];
        if self.has_truth() {
            out.extend(["gold".into(), "evaluation".into()]);
        }
        if let Some(m) = &self.0.eval {
            out.extend(["samples".into(), "scores".into(), "eval_log".into()]);
            out.extend(m.verifiers.iter().map(|v| evallog::bank::table_name(v)));
        }
        out
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn check(&self, planned: &Planned<'_>) -> std::result::Result<(), Misplanned> {
        match (&self.0.eval, evallog::is_eval_preset(&self.0.preset)) {
            (Some(_), true) => {}
            (None, false) => {
                presets::preset(&self.0.preset).map_err(|e| Misplanned::new(self.0.preset.as_str(), e))?;
            }
            (Some(_), false) => return Err(Misplanned::new("eval", "an `eval:` mapping needs an eval-log preset")),
            (None, true) => return Err(Misplanned::new("eval", "an eval-log preset needs an `eval:` mapping")),
        }
        for f in self.files() {
            if !planned.resolve(f).is_file() {
                return Err(Misplanned::new(f, format!("no file {}", planned.resolve(f).display())));
            }
        }
        Ok(())
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        self.files()
            .into_iter()
            .map(|f| Ok((f.to_string(), crate::fingerprint::file_fingerprint(&ctx.resolve(f))?)))
            .collect()
    }

    fn run(&self, ctx: &StageContext, _: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        if let Some(m) = &self.0.eval {
            return eval_log(&self.0, m, ctx);
        }
        let got = import(&self.0, |p| ctx.resolve(p)).map_err(|e| match e {
            Error::Usage { .. } => Error::stage(&ctx.stage_id, e.to_string()),
            other => other,
        })?;
        ctx.progress.set_total(got.memories.len() as u64);
        ctx.progress.advance(got.memories.len() as u64);
        ctx.progress.note("memories", got.memories.len().into());
        if got.without_truth > 0 {
            ctx.progress.warn(&format!(
                "{}: {} of {} memories have no truth (no answer to score against gold, no verdict of the source, no truth-file row): they are left out of `evaluation` and of the audit",
                ctx.stage_id,
                got.without_truth,
                got.memories.len()
            ));
            ctx.progress.note("without_truth", got.without_truth.into());
        }
        if got.alias_only > 0 {
            ctx.progress.note("answers_scored_by_aliases", got.alias_only.into());
        }
        if !got.ambiguous_gold.is_empty() {
            ctx.progress.warn(&format!(
                "{}: the gold file {} answers {} in conflicting ways: {} of {} memories are left unscored (out of `evaluation` and of the audit)",
                ctx.stage_id,
                self.0.gold.as_ref().map_or("", |g| g.path.as_str()),
                conflicting(&got.ambiguous_gold),
                got.ambiguous,
                got.memories.len()
            ));
            ctx.progress.note("ambiguous_gold", serde_json::json!(got.ambiguous_gold));
            ctx.progress.note("unscored_by_ambiguous_gold", got.ambiguous.into());
        }
        let mut out = vec![
            ("tasks".to_string(), crate::datasets::qa::tables::tasks_table().batch(&got.tasks)?),
            ("episodes".to_string(), tables::episodes_table().batch(&got.memories)?),
        ];
        if self.has_truth() {
            out.push(("gold".into(), crate::datasets::qa::tables::gold_table().batch(&got.gold)?));
            out.push(("evaluation".into(), tables::evaluation_table().batch(&got.truth)?));
        }
        Ok(out)
    }
}

/// Warnings printed one by one before the rest are counted (all are in the `scores` table).
const SHOWN_WARNINGS: usize = 20;

/// The tables of an eval log (`c.bank`) mapped by `m`.
fn eval_log(c: &ImportConfig, m: &EvalMapping, ctx: &StageContext) -> Result<Vec<(String, RecordBatch)>> {
    let path = ctx.resolve(&c.bank);
    let log = evallog::read(&c.preset, &path)?;
    let got = evallog::bank::bank(&c.bank, log, m);
    let n = got.imported.memories.len();
    ctx.progress.set_total(n as u64);
    ctx.progress.advance(n as u64);
    ctx.progress.note("memories", n.into());
    for w in got.warnings.iter().take(SHOWN_WARNINGS) {
        ctx.progress.warn(w);
    }
    if got.warnings.len() > SHOWN_WARNINGS {
        ctx.progress.warn(&format!("{}: and {} more warnings like these", c.bank, got.warnings.len() - SHOWN_WARNINGS));
    }
    ctx.progress.note("warnings_total", got.warnings.len().into());
    if got.imported.without_truth > 0 {
        ctx.progress.note("without_truth", got.imported.without_truth.into());
    }
    let qa = crate::datasets::qa::tables::tasks_table;
    let mut out = vec![
        ("tasks".to_string(), qa().batch(&got.imported.tasks)?),
        ("episodes".to_string(), tables::episodes_table().batch(&got.imported.memories)?),
        ("samples".to_string(), evallog::tables::samples_table().batch(&got.samples)?),
        ("scores".to_string(), evallog::tables::scores_table().batch(&got.scores)?),
        ("eval_log".to_string(), evallog::tables::eval_log_table().batch(std::slice::from_ref(&got.log))?),
    ];
    if m.truth.is_some() {
        out.push(("gold".into(), crate::datasets::qa::tables::gold_table().batch(&got.imported.gold)?));
        out.push(("evaluation".into(), tables::evaluation_table().batch(&got.imported.truth)?));
    }
    for (name, rows) in &got.verifiers {
        let rows: Vec<Scored> = rows
            .iter()
            .map(|x| Scored {
                step: x.step,
                question_id: x.question_id,
                v: x.v,
                detail: x.detail.clone(),
                ..Scored::default()
            })
            .collect();
        out.push((evallog::bank::table_name(name), crate::stages::verifiers::verifier_table().batch(&rows)?));
    }
    Ok(out)
}
