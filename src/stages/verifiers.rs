//! The verifier ladder's shared parts (the paper's re-graders and its information verifier, as
//! pipeline stages): the memories of a bank as the verifiers read them, the one table every
//! verifier writes (`v_<stage id>`, which `lucid audit` and the audit stage read as verifier
//! `<stage id>`), prompt templates, models and what each verifier costs. The stages are
//! `judge`, `resample`, `selftest`, `panel` and `evidence` (one file each beside this one).
//!
//! Label-free by construction: a verifier reads the bank's `tasks` (question and its task
//! columns) and `episodes` (the stored answer), never `gold` or `evaluation` (the pipeline
//! refuses those inputs for these stages), and every request it sends holds only the question,
//! the stored answer and, for `evidence`, passages of a corpus from another source.

use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::DataType;

use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::error::{Error, Result};
use crate::llm::{ChatModel, ChatRequest, Completion};
use crate::pipeline::stage::{Inputs, StageContext};

/// The parts of [`crate::pipeline::stage::Stage`] the bank verifiers share (inside the impl): the
/// stage's `KIND`, version 1, inputs `tasks` and `episodes`, the output `v_<stage id>`, and the
/// config (operational fields are never serialized) as its cache key (`without_config`: the
/// stage writes its own `config_json`).
macro_rules! bank_stage {
    () => {
        $crate::stages::verifiers::bank_stage!(without_config);
        fn config_json(&self) -> serde_json::Value {
            serde_json::to_value(self).expect("config serializes")
        }
    };
    (without_config) => {
        fn kind(&self) -> &'static str {
            Self::KIND
        }
        fn version(&self) -> u32 {
            1
        }
        fn required_inputs(&self) -> &'static [&'static str] {
            &["tasks", "episodes"]
        }
        fn outputs(&self, stage_id: &str) -> Vec<String> {
            vec![$crate::stages::verifiers::table_name(stage_id)]
        }
    };
}
pub(crate) use bank_stage;

/// One memory of the bank, as a verifier reads it.
#[derive(Clone, Debug)]
pub struct Memory {
    /// Its step in the arm's stream.
    pub step: u64,
    /// Its task.
    pub question_id: i64,
    /// The question.
    pub question: String,
    /// The stored answer (the episode's artifact; None when it has none).
    pub answer: Option<String>,
    /// Every text column of the task (topic, answer_type, ...), for templates.
    pub fields: Vec<(String, String)>,
}

/// The memories of the instance's bank: `episodes` (step, question_id and the `answer_column`)
/// joined with `tasks` (question_id, question and the task's other text columns).
pub fn memories(ctx: &StageContext, inputs: &Inputs, answer_column: &str) -> Result<Vec<Memory>> {
    let (eps, tasks) = (inputs.get(ctx, "episodes")?, inputs.get(ctx, "tasks")?);
    let here = |t: &str| PathBuf::from(format!("stage {} input {t}", ctx.stage_id));
    let text = |b: &RecordBatch, t: &str, name: &str| -> Result<Vec<Option<String>>> {
        let c = b.column_by_name(name).ok_or_else(|| Error::input(here(t), format!("no column '{name}'")))?;
        let c = arrow::compute::cast(c, &DataType::Utf8)?;
        Ok(c.as_string::<i32>().iter().map(|s| s.map(str::to_string)).collect())
    };
    let int = |b: &RecordBatch, t: &str, name: &str| -> Result<Vec<i64>> {
        let c = b.column_by_name(name).ok_or_else(|| Error::input(here(t), format!("no column '{name}'")))?;
        let c = arrow::compute::cast(c, &DataType::Int64)?;
        let c = c.as_primitive::<arrow::datatypes::Int64Type>();
        (0..c.len())
            .map(|i| {
                c.is_valid(i).then(|| c.value(i)).ok_or_else(|| Error::input(here(t), format!("row {i}: no {name}")))
            })
            .collect()
    };
    let qids = int(tasks, "tasks", "question_id")?;
    let questions = text(tasks, "tasks", "question")?;
    let extra: Vec<(String, Vec<Option<String>>)> = tasks
        .schema()
        .fields()
        .iter()
        .filter(|f| f.data_type() == &DataType::Utf8 && f.name() != "question" && !f.name().starts_with("gold"))
        .map(|f| Ok((f.name().clone(), text(tasks, "tasks", f.name())?)))
        .collect::<Result<_>>()?;
    let row_of: std::collections::HashMap<i64, usize> = qids.iter().enumerate().map(|(i, &q)| (q, i)).collect();
    let (steps, eq, answers) =
        (int(eps, "episodes", "step")?, int(eps, "episodes", "question_id")?, text(eps, "episodes", answer_column)?);
    (0..eps.num_rows())
        .map(|i| {
            let t = *row_of.get(&eq[i]).ok_or_else(|| {
                Error::input(here("episodes"), format!("row {i}: question_id {} is not a task", eq[i]))
            })?;
            Ok(Memory {
                step: steps[i] as u64,
                question_id: eq[i],
                question: questions[t].clone().unwrap_or_default(),
                answer: answers[i].clone().filter(|a| !a.trim().is_empty()),
                fields: extra.iter().filter_map(|(n, c)| c[t].clone().map(|v| (n.clone(), v))).collect(),
            })
        })
        .collect()
}

/// What a verifier made of one memory, and what it cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scored {
    /// The memory's step.
    pub step: u64,
    /// Its task.
    pub question_id: i64,
    /// V in [0, 1]; None when the verifier could not score it (a failed call, an unparseable
    /// verdict, a missing vote, no evidence on the topic).
    pub v: Option<f64>,
    /// Self-consistency (resample only).
    pub sc: Option<f64>,
    /// What the verifier saw or said, as JSON (verdicts, samples, votes, passages).
    pub detail: String,
    /// Model calls made (cache hits included).
    pub calls: u32,
    /// Calls that failed after their retries.
    pub failed: u32,
    /// Prompt + generated tokens.
    pub tokens: u64,
    /// Seconds of model time (0 for cache hits).
    pub seconds: f64,
}

impl Scored {
    /// A memory with nothing spent on it yet.
    pub fn of(m: &Memory) -> Scored {
        Scored { step: m.step, question_id: m.question_id, ..Scored::default() }
    }

    /// Count one call's cost; the completion, or None when it failed.
    pub fn spend(&mut self, call: std::result::Result<Completion, crate::llm::CallFailure>) -> Option<Completion> {
        self.calls += 1;
        match call {
            Ok(c) => {
                self.tokens += u64::from(c.tokens_in + c.tokens_out);
                self.seconds += c.latency.as_secs_f64();
                Some(c)
            }
            Err(_) => {
                self.failed += 1;
                None
            }
        }
    }
}

/// The table every verifier stage writes, as `v_<stage id>`.
pub fn verifier_table() -> Table<Scored> {
    type V = Getter<Scored>;
    Table {
        name: "verifier",
        description: "One verifier's score of every memory of an arm's bank (a table named v_<stage id>: the audit reads it as verifier <stage id>), with what it saw and what it cost.",
        written_by: "the judge, resample, selftest, panel and evidence stages",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", V::U64(|s| s.step), "The memory's step in the arm's stream."),
            Column::new("question_id", V::I64(|s| s.question_id), "Its task."),
            Column::new(
                "v",
                V::OptF64(|s| s.v),
                "V in [0, 1] (below 0.5 flags the memory as wrong); null when the verifier could not score it.",
            ),
            Column::new(
                "sc",
                V::OptF64(|s| s.sc),
                "Self-consistency: share of resampled answers agreeing with the stored one (resample only).",
            ),
            Column::new(
                "detail",
                V::Str(|s| &s.detail),
                "What it saw or said, as JSON (verdicts, samples, votes or passage ids).",
            ),
            Column::new("calls", V::U32(|s| s.calls), "Model calls made for this memory (cache hits included)."),
            Column::new("failed_calls", V::U32(|s| s.failed), "Calls that failed after their retries."),
            Column::new("tokens", V::U64(|s| s.tokens), "Prompt and generated tokens of those calls."),
            Column::varying(
                "seconds",
                V::F64(|s| s.seconds),
                "machine load and the response cache",
                "Model seconds (0 for cache hits).",
            ),
        ],
    }
}

/// A prompt template file (Jinja), parsed once. Variables: `question`, `answer` (empty when the
/// memory has none), every text column of the task (`topic`, `answer_type`, ...), `plan` (empty)
/// and `memories` (none), so an answerer's template renders as the no-memory arm's prompt.
pub struct Template {
    env: minijinja::Environment<'static>,
    path: PathBuf,
}

impl Template {
    /// The template at `path`.
    pub fn load(path: &Path) -> Result<Template> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.add_template_owned("t", text).map_err(|e| Error::input_from(path, "", e))?;
        Ok(Template { env, path: path.to_path_buf() })
    }

    /// The prompt for memory `m`, with `extra` variables.
    pub fn render(&self, m: &Memory, extra: &[(&str, minijinja::Value)]) -> Result<String> {
        let mut vars: std::collections::BTreeMap<String, minijinja::Value> =
            m.fields.iter().map(|(k, v)| (k.clone(), minijinja::Value::from(v.as_str()))).collect();
        vars.insert("question".into(), m.question.as_str().into());
        vars.insert("answer".into(), m.answer.as_deref().unwrap_or("").into());
        vars.insert("plan".into(), "".into());
        vars.insert("memories".into(), minijinja::Value::from(Vec::<minijinja::Value>::new()));
        for (k, v) in extra {
            vars.insert(k.to_string(), v.clone());
        }
        let t = self.env.get_template("t").map_err(|e| Error::input_from(&self.path, "", e))?;
        Ok(t.render(vars).map_err(|e| Error::input_from(&self.path, "", e))?.trim().to_string())
    }
}

/// The request for `prompt` (after an optional system message) with `decoding`, sample `i`.
pub fn request(system: Option<&str>, prompt: String, decoding: &crate::llm::Decoding, i: u32) -> ChatRequest {
    let mut messages: Vec<crate::llm::Message> = system.map(crate::llm::Message::system).into_iter().collect();
    messages.push(crate::llm::Message::user(prompt));
    ChatRequest { messages, decoding: decoding.clone(), sample_index: i, scope: None }
}

/// Ask `model` for a verdict on `prompt` (its `VERDICT:` line; forced choice with
/// `decoding.choices`), counting the call on `s`: V (1 CORRECT, 0 INCORRECT, None when the call
/// failed or the verdict does not parse) and the verdict and text as JSON for `detail`.
pub fn verdict(
    model: &dyn ChatModel,
    prompt: String,
    decoding: &crate::llm::Decoding,
    s: &mut Scored,
) -> (Option<f64>, serde_json::Value) {
    let (verdict, text) = match s.spend(model.chat(&request(None, prompt, decoding, 0))) {
        Some(c) => (crate::memory_loop::parse::parse_verdict(&c.text).as_str(), Some(c.text)),
        None => ("failed", None),
    };
    let v = match verdict {
        "correct" => Some(1.0),
        "incorrect" => Some(0.0),
        _ => None,
    };
    (v, serde_json::json!({"verdict": verdict, "text": text}))
}

/// Score every memory with `f` on up to `jobs` threads, in bank order, advancing the progress.
pub fn score_all(
    ctx: &StageContext,
    memories: &[Memory],
    jobs: usize,
    f: impl Fn(&Memory) -> Result<Scored> + Sync,
) -> Result<Vec<Scored>> {
    ctx.progress.set_total(memories.len() as u64);
    crate::par::par_map_with(
        memories,
        jobs,
        || (),
        |_, m| {
            let s = f(m);
            ctx.progress.advance(1);
            s
        },
    )
    .into_iter()
    .collect()
}

/// The output of a verifier stage: its table under `v_<id>`.
pub fn output(ctx: &StageContext, rows: &[Scored]) -> Result<Vec<(String, RecordBatch)>> {
    Ok(vec![(table_name(&ctx.stage_id), verifier_table().batch(rows)?)])
}

/// `v_<id>`.
pub fn table_name(stage_id: &str) -> String {
    format!("v_{stage_id}")
}
