//! What an audit of an imported eval log says about the log (its `eval_log` table): the tool and
//! format read, the model under evaluation, the score playing the grader and the models that
//! graded it — and, in so many words, when the grader is the model under evaluation (a
//! self-grade) — and which of the audit's tables cannot apply to an eval log (a sample is never
//! retrieved: no reuse count, no Echo Gap, no retrieval channel; its scorers' costs are not
//! read), which the rendering names instead of printing them empty.

use std::path::Path;

use arrow::array::{Array, AsArray};
use arrow::datatypes::DataType;
use serde::Serialize;

use crate::error::{Error, Result};

/// The tables that cannot apply to an eval log, and why.
pub const NOT_APPLICABLE: &[(&str, &str)] = &[
    ("echo_gap", "the Echo Gap: no reuse counts (an eval's samples are never retrieved by later ones)"),
    ("leave_one_seed_out", "leave-one-seed-out: one log is one run (its epochs repeat samples, not seeds)"),
    ("cost", "the verifiers' cost: the scorers ran inside the eval, and what they spent is not read"),
];

/// The log an audited run was imported from.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EvalLogNote {
    /// The preset (`inspect`).
    pub tool: String,
    /// The format version read.
    pub format: String,
    /// The log file.
    pub file: String,
    /// The eval's status.
    pub status: String,
    /// The model under evaluation.
    pub model: Option<String>,
    /// The score playing r.
    pub grader: String,
    /// The models that graded it.
    pub grader_models: String,
    /// Whether the grader is the model under evaluation.
    pub self_grade: bool,
    /// The score standing for U.
    pub truth: Option<String>,
    /// Samples read, and how many errored.
    pub samples: u64,
    /// Of them, samples that errored.
    pub errored: u64,
    /// What cannot apply (the tables' names).
    pub not_applicable: Vec<String>,
    /// Also no retrieval channel and no detector (none ran).
    pub no_channels: bool,
}

/// The note of the run at `dir`, when it was imported from an eval log.
pub fn read(dir: &Path) -> Result<Option<EvalLogNote>> {
    if !dir.join("eval_log").exists() {
        return Ok(None);
    }
    let run = (dir.display().to_string(), dir.to_path_buf());
    let b = crate::session::block_on(async {
        let (ctx, _) = crate::runs::session_for(std::slice::from_ref(&run)).await?;
        crate::session::collect(&ctx, "SELECT * FROM eval_log LIMIT 1").await
    })
    .map_err(|e| Error::input_from(dir, "eval_log", e))?;
    if b.num_rows() == 0 {
        return Ok(None);
    }
    let text = |c: &str| -> Option<String> {
        let col = arrow::compute::cast(b.column_by_name(c)?, &DataType::Utf8).ok()?;
        col.is_valid(0).then(|| col.as_string::<i32>().value(0).to_string())
    };
    let number = |c: &str| text(c).and_then(|t| t.parse().ok()).unwrap_or(0);
    Ok(Some(EvalLogNote {
        tool: text("tool").unwrap_or_default(),
        format: text("format").unwrap_or_default(),
        file: text("file").unwrap_or_default(),
        status: text("status").unwrap_or_default(),
        model: text("model"),
        grader: text("grader").unwrap_or_default(),
        grader_models: text("grader_models").unwrap_or_default(),
        self_grade: text("self_grade").is_some_and(|t| t == "true"),
        truth: text("truth"),
        samples: number("samples"),
        errored: number("errored"),
        not_applicable: NOT_APPLICABLE.iter().map(|(n, _)| n.to_string()).collect(),
        no_channels: true,
    }))
}

/// The note as Markdown paragraphs.
pub fn markdown(n: &EvalLogNote) -> String {
    let model = n.model.as_deref().unwrap_or("not named in the log");
    let graders = if n.grader_models.is_empty() { "no model the log names" } else { &n.grader_models };
    let mut s = format!(
        "## The eval log\n\n{} log `{}` ({}, eval status {}): {} samples and epochs, {} errored. Model under evaluation: \
         {model}. The grader r is the score `{}`, graded by {graders}; the truth U is {}.\n\n",
        n.tool,
        n.file,
        n.format,
        n.status,
        n.samples,
        n.errored,
        n.grader,
        n.truth
            .as_deref()
            .map_or("not given (hand labels: `lucid audit RUN --sample N`)".into(), |t| format!("the score `{t}`")),
    );
    if n.grader_models.is_empty() {
        s.push_str(&format!(
            "The log names no model that graded `{}` (an exact scorer, or a metric whose grader the log does not \
             record): whether it is a self-grade, the log cannot say.\n\n",
            n.grader
        ));
    } else if n.self_grade {
        s.push_str(&format!(
            "**Self-grade: the grader `{}` is graded by the model under evaluation ({model})**: its errors can echo the \
             answers it grades, which is what the EIA axes below measure.\n\n",
            n.grader
        ));
    } else {
        s.push_str("The grader is not the model under evaluation.\n\n");
    }
    s.push_str("Not applicable to an eval log, so not printed: ");
    let why: Vec<&str> = NOT_APPLICABLE.iter().map(|(_, w)| *w).collect();
    s.push_str(&why.join("; "));
    s.push_str("; and no retrieval channel or detector among the verifiers (none ran).\n\n");
    s
}
