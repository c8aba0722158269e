//! An eval log as a bank, by its mapping: each sample and epoch a memory (its answer, its
//! grader's explanation as the plan, the grader's value as r: trusted when it reads >= 0.5,
//! the raw value kept), each distinct sample id a task (its epochs one question, so the audit's
//! intervals cluster them), the target as gold, the truth score as U (1 or 0; any other value is
//! a warning and no truth), and every other score a verifier table `v_<name>` as the verifier
//! stages write it. A sample the grader did not score (it errored) is imported ungraded; one
//! the truth did not score has no truth: both counted, each named in a warning.

use std::collections::HashMap;

use super::tables::{EvalLogRow, SampleRow, ScoreRow};
use super::{EvalLog, EvalMapping};
use crate::datasets::qa::{FactGold, FactTask};
use crate::import::presets::LabelSource;
use crate::import::{Imported, ImportedMemory, Truth};

/// What an eval log makes.
pub struct EvalBank {
    /// `tasks`, `episodes`, `gold`, `evaluation`.
    pub imported: Imported,
    /// One row per sample and epoch (`samples`).
    pub samples: Vec<SampleRow>,
    /// One row per score of every sample (`scores`).
    pub scores: Vec<ScoreRow>,
    /// One verifier table per candidate verifier, `v_<name>`, in the mapping's order.
    pub verifiers: Vec<(String, Vec<VerifierScore>)>,
    /// The log's one row (`eval_log`).
    pub log: EvalLogRow,
    /// Warnings: the reader's and the mapping's.
    pub warnings: Vec<String>,
}

/// A candidate verifier's score of one memory (the stage writes it as the verifier stages'
/// table, nothing spent).
#[derive(Clone, Debug, PartialEq)]
pub struct VerifierScore {
    /// The memory.
    pub step: u64,
    /// Its task.
    pub question_id: i64,
    /// V; None when the score is absent or unreadable.
    pub v: Option<f64>,
    /// The value as written, the explanation and the grading model, as JSON.
    pub detail: String,
}

/// The table name of verifier score `name`: `v_` and the name, anything but letters, digits and
/// `_` as `_` (`llm-rubric` -> `v_llm_rubric`).
pub fn table_name(name: &str) -> String {
    let clean: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    format!("v_{clean}")
}

/// Whether model `a` is model `b`, provider prefix aside (`openai/gpt-4o` is `gpt-4o`).
pub fn same_model(a: &str, b: &str) -> bool {
    let bare = |m: &str| m.split_once('/').map_or(m, |(_, rest)| rest).to_string();
    a == b || bare(a) == bare(b) || bare(a) == b || a == bare(b)
}

/// `log` (read from `file`) as a bank by `m`.
pub fn bank(file: &str, log: EvalLog, m: &EvalMapping) -> EvalBank {
    let mut warnings = log.warnings.clone();
    let mut out = Imported { has_truth: m.truth.is_some(), ..Imported::default() };
    let mut task_of: HashMap<String, i64> = HashMap::new();
    let mut verifiers: Vec<(String, Vec<VerifierScore>)> =
        m.verifiers.iter().map(|n| (n.clone(), Vec::new())).collect();
    let (mut scores, mut samples, mut grader_models, mut errored) = (Vec::new(), Vec::new(), Vec::<String>::new(), 0);
    let evaluated = log.model.clone().unwrap_or_default();
    let mut self_grade = false;
    // A log that ran each sample once names its memories by the sample alone.
    let epochs = log.samples.iter().any(|s| s.epoch != 1);
    for (step, s) in log.samples.iter().enumerate() {
        let step = step as u64;
        let next = task_of.len() as i64;
        let question_id = *task_of.entry(s.id.clone()).or_insert_with(|| {
            out.tasks.push(FactTask {
                question_id: next,
                task_id: s.id.clone(),
                question: s.input.clone(),
                topic: "general".into(),
                answer_type: "text".into(),
            });
            if let Some(t) = &s.target {
                out.gold.push(FactGold { question_id: next, answer: t.clone(), aliases: Vec::new() });
            }
            next
        });
        errored += usize::from(s.status != "ok");
        samples.push(SampleRow {
            step,
            sample_id: s.id.clone(),
            epoch: s.epoch,
            status: s.status.clone(),
            target: s.target.clone(),
            scores: s.scores.len() as u32,
        });
        let at = format!("{file}: sample {} epoch {}", s.id, s.epoch);
        let score = |name: &str| s.scores.iter().find(|x| x.name == name);
        let grade = score(&m.grader);
        let answerer = s.model.clone().unwrap_or_else(|| evaluated.clone());
        let self_graded = |g: Option<&str>| g.is_some_and(|g| same_model(g, &answerer));
        self_grade |= grade.and_then(|g| g.grader_model.as_deref()).is_some_and(|g| same_model(g, &answerer));
        if let Some(g) = grade.and_then(|g| g.grader_model.clone()).filter(|g| !grader_models.contains(g)) {
            grader_models.push(g);
        }
        let graded = grade.and_then(|g| g.value);
        if graded.is_none() && s.status == "ok" {
            warnings.push(format!("{at}: no value of the grader '{}': imported ungraded", m.grader));
        }
        let source = match grade.and_then(|g| g.grader_model.as_deref()) {
            g if self_graded(g) => LabelSource::SelfGraded,
            _ if s.target.is_some() => LabelSource::JudgeWithGold,
            _ => LabelSource::Judge,
        };
        out.memories.push(ImportedMemory {
            step,
            question_id,
            source_id: if epochs { format!("{} epoch {}", s.id, s.epoch) } else { s.id.clone() },
            line: step + 1,
            question: s.input.clone(),
            plan: grade.and_then(|g| g.explanation.clone()),
            answer: s.answer.clone().or_else(|| grade.and_then(|g| g.answer.clone())),
            raw_label: grade.map(|g| g.raw.clone()),
            r: u8::from(graded.is_some_and(|x| x >= 0.5)),
            graded: graded.is_some(),
            label_source: source,
        });
        if let Some(t) = &m.truth {
            match score(t).and_then(|x| x.value) {
                Some(u) if u == 0.0 || u == 1.0 => out.truth.push(Truth {
                    step,
                    question_id,
                    u: u as u8,
                    verdict: "truth score",
                    u_source: "the eval's exact score named by --truth",
                }),
                Some(u) => {
                    warnings.push(format!("{at}: the truth '{t}' reads {u}, not 0 or 1: no truth"));
                    out.without_truth += 1;
                }
                None => out.without_truth += 1,
            }
        }
        for (name, rows) in &mut verifiers {
            let x = score(name);
            let detail = serde_json::json!({
                "value": x.map(|x| x.raw.as_str()),
                "explanation": x.and_then(|x| x.explanation.as_deref()),
                "grader_model": x.and_then(|x| x.grader_model.as_deref()),
            });
            rows.push(VerifierScore { step, question_id, v: x.and_then(|x| x.value), detail: detail.to_string() });
        }
        for x in &s.scores {
            let role = if x.name == m.grader {
                "grader"
            } else if Some(&x.name) == m.truth.as_ref() {
                "truth"
            } else {
                "verifier"
            };
            scores.push(ScoreRow {
                step,
                sample_id: s.id.clone(),
                epoch: s.epoch,
                scorer: x.name.clone(),
                role,
                raw_value: x.raw.clone(),
                value: x.value,
                answer: x.answer.clone(),
                explanation: x.explanation.clone(),
                grader_model: x.grader_model.clone(),
                self_grade: self_graded(x.grader_model.as_deref()),
            });
        }
    }
    for (name, rows) in &verifiers {
        if rows.iter().flat_map(|r| r.v).any(|v| !(0.0..=1.0).contains(&v)) {
            warnings.push(format!(
                "{file}: the score '{name}' has values outside [0, 1]: as a verifier, below 0.5 flags a memory"
            ));
        }
    }
    let log_row = EvalLogRow {
        tool: log.tool,
        format: log.format,
        file: file.to_string(),
        status: log.status,
        task: log.task,
        model: log.model,
        grader: m.grader.clone(),
        grader_models: grader_models.join(", "),
        self_grade,
        truth: m.truth.clone(),
        verifiers: m.verifiers.join(", "),
        samples: log.samples.len() as u64,
        errored: errored as u64,
    };
    EvalBank { imported: out, samples, scores, verifiers, log: log_row, warnings }
}
