//! An audit as tables laid out like the paper's Tables 2-6 (grader and EIA, error
//! correlations, payoff, controls, Proposition 2, calibration, leave-one-seed-out), written as
//! JSON (`{"memories": .., "tables": {name: [row, ...]}}`, as in the report), Markdown, a
//! self-contained HTML page with the verifiers placed on the two EIA axes beside the threshold
//! box, and Arrow batches (the `audit` pipeline stage's outputs).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use serde_json::Value;

use super::Audit;
use crate::error::{Error, Result};
use crate::report::svg::{Chart, PALETTE, esc};

/// One table of an audit.
pub struct Section {
    /// JSON key and table name.
    pub name: &'static str,
    /// Heading.
    pub title: &'static str,
    /// What the paper reports for it.
    pub paper: &'static str,
    /// Its rows.
    pub rows: Vec<Value>,
}

/// Every table's name, in order.
pub const NAMES: &[&str] = &[
    "label_sanity",
    "grader",
    "echo_gap",
    "eia",
    "error_correlations",
    "payoff",
    "controls",
    "proposition2",
    "calibration",
    "leave_one_seed_out",
    "cost",
];

fn rows<T: serde::Serialize>(x: &[T]) -> Vec<Value> {
    x.iter().map(|r| serde_json::to_value(r).expect("rows serialize")).collect()
}

/// The tables of `a`, in [`NAMES`] order.
pub fn sections(a: &Audit) -> Vec<Section> {
    vec![
        Section {
            name: "label_sanity",
            title: "Label sanity: where the labels came from, the share trusted, and whether they point the right way (Corr(r, U) has the sign of s - l; 95 % Newcombe interval; inverted when it lies below 0)",
            paper: "A gold-informed label measures its judge, not a self-grade; ReasoningBank's released code stored every judged failure as a success.",
            rows: rows(&a.label_sanity),
        },
        Section {
            name: "grader",
            title: "Table 2a: the self-grade (leniency l = P(trusted | U = 0), sensitivity s = P(trusted | U = 1), 95 % Wilson, clustered on the question when it repeats): over graded episodes, and over the stored labels (an ungraded episode is stored untrusted)",
            paper: "BIRD l = 0.76, s = 0.90; factual banks l = 0.31 to 0.54.",
            rows: rows(&a.grader),
        },
        Section {
            name: "echo_gap",
            title: "The Echo Gap among graded wrong memories (U = 0): E[b | U=0] > 0 and Cov(b, n | U=0) > 0, n = reuse",
            paper: "Wrong memories the grader passed are retrieved more: both conditions hold on every lenient bank.",
            rows: rows(&a.echo_gap),
        },
        Section {
            name: "eia",
            title: "Table 2: the Error-Independence Assumption (EIA; pass: |Corr(nu, b)| < tau_dec and Corr(V, U) > tau_tru, over the memories each verifier scored)",
            paper: "Haiku bank (n = 300): retrieval verifier +0.05 / +0.76, the only PASS; GPT-5.4 re-grade +0.31 / +0.29; \
                    mean ensemble +0.33 / +0.20; gold-fit optimal aggregator +0.30 / +0.42.",
            rows: rows(&a.eia),
        },
        Section {
            name: "error_correlations",
            title: "Correlations of verifier errors nu = V - U (judges that err together cannot check each other)",
            paper: "The two strongest judges' errors correlate +0.69.",
            rows: rows(&a.error_correlations),
        },
        Section {
            name: "payoff",
            title: "Table 3: de-inflation payoff of demotion-only correction over the whole bank (Delta Corr(Q, U), 95 % bootstrap over memories, or questions when they repeat, P(Delta > 0); an unscored memory is not flagged)",
            paper: "Retrieval verifier +0.22 -> +0.81 (+0.59); oracle +0.75; GPT-5.4 +0.10; nano -0.16; label-blind \
                    calibration +0.00.",
            rows: rows(&a.payoff),
        },
        Section {
            name: "controls",
            title: "Table 4: generic filtering controls at the selected verifier's budget K",
            paper: "Confidence threshold: no-op; budget-matched random prune -0.16 (13 of 15 correct memories demoted) \
                    vs LUCID +0.59 with 0; budget sweep at 25/50/75/100 % of K.",
            rows: rows(&a.controls),
        },
        Section {
            name: "proposition2",
            title: "Proposition 2: Var(b) the best pull toward each verifier removes (closed form; the value on the bank at alpha* equals it by algebra, a check of the arithmetic, not of the theory)",
            paper: "Removed = (1-beta)^2 Var(b)^2 / ((1-beta)^2 Var(b) + Var(eta)) at alpha*; nothing when beta = 1.",
            rows: rows(&a.proposition2),
        },
        Section {
            name: "calibration",
            title: "Table 5: global calibration of r (Lemma 1: label-blind maps leave every rank statistic unchanged)",
            paper: "Mean-subtract, z-score, min-max, temperature, sigmoid: unchanged; gold-fit Platt and isotonic improve \
                    only slightly; oracle is the ceiling.",
            rows: rows(&a.calibration),
        },
        Section {
            name: "leave_one_seed_out",
            title: "Table 6: leave-one-seed-out EIA (select on the other seeds, measure the payoff and its rank on the held-out one; last row: the means over folds)",
            paper: "The verifier selected on two seeds pays on the third; PASS - FAIL gap positive on every fold.",
            rows: rows(&a.leave_one_seed_out),
        },
        Section {
            name: "cost",
            title: "What each verifier stage spent: memories scored and skipped, model calls, failures, tokens, seconds",
            paper: "The paper's verifiers range from free (retrieval over a corpus) to one frontier-model call per memory.",
            rows: rows(&a.cost),
        },
    ]
}

/// `{"memories", "tau_dec", "tau_tru", "bootstrap", "rng_seed", "ensemble", "tables": {name: rows}}`.
pub fn json(a: &Audit) -> Value {
    let tables: serde_json::Map<String, Value> =
        sections(a).into_iter().map(|s| (s.name.into(), s.rows.into())).collect();
    let mut out = serde_json::json!({"memories": a.memories, "tau_dec": a.tau_dec, "tau_tru": a.tau_tru,
                       "bootstrap": a.bootstrap, "rng_seed": a.rng_seed, "ensemble": a.ensemble, "tables": tables});
    if let Some(n) = &a.eval_log {
        out["eval_log"] = serde_json::to_value(n).expect("the note serializes");
    }
    out
}

/// Cell `key` as text: numbers to 3 decimals (counts as whole numbers), null as `-`.
fn cell(key: &str, v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::Bool(b) if key == "pass" => if *b { "PASS" } else { "fail" }.into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if key.starts_with("demoted") && x.fract() == 0.0 {
                return format!("{x:.0}");
            }
            format!("{:.3}", if x.abs() < 5e-4 { 0.0 } else { x })
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Header and cell texts of one table.
fn grid(rows: &[Value]) -> Vec<Vec<String>> {
    let Some(Value::Object(first)) = rows.first() else { return Vec::new() };
    let keys: Vec<&String> = first.keys().collect();
    let mut out = vec![keys.iter().map(|k| k.to_string()).collect::<Vec<_>>()];
    out.extend(rows.iter().map(|r| keys.iter().map(|k| cell(k, &r[k.as_str()])).collect()));
    out
}

fn intro(a: &Audit, source: &str) -> String {
    let ensemble = if a.ensemble.is_empty() {
        "no ensemble (fewer than two judges)".to_string()
    } else {
        format!("ensembles and gold-fit over the judges {}", a.ensemble.join(", "))
    };
    format!(
        "{} memories of {source}; EIA thresholds tau_dec = {}, tau_tru = {}; {} bootstrap resamples (seed {}); {ensemble}. \
         The demotion-only operator: a trusted memory (r >= 0.5) that the verifier flags (V < 0.5) gets Q = 0; \
         nothing else changes, and a memory a verifier left unscored is not flagged (it keeps its label). \
         Rows marked \"reads U\" are upper bounds, not methods.",
        a.memories, a.tau_dec, a.tau_tru, a.bootstrap, a.rng_seed
    )
}

/// Why a table has no rows.
fn empty(name: &str) -> &'static str {
    match name {
        "echo_gap" => "No rows (the Echo Gap needs a reuse-count column n).",
        "leave_one_seed_out" => "No rows (leave-one-seed-out needs a seed column with two or more seeds).",
        "controls" => "No rows (no verifier to set the budget).",
        _ => "No rows.",
    }
}

/// The sections that apply to `a` (an eval log's audit leaves out what cannot apply to it).
fn applicable(a: &Audit) -> Vec<Section> {
    let skip = |name: &str| a.eval_log.as_ref().is_some_and(|n| n.not_applicable.iter().any(|x| x == name));
    sections(a).into_iter().filter(|s| !skip(s.name)).collect()
}

/// The audit as Markdown.
pub fn markdown(a: &Audit, source: &str) -> String {
    let mut s = format!("# lucid audit: {source}\n\n{}\n\n", intro(a, source));
    if let Some(n) = &a.eval_log {
        s.push_str(&super::eval_log::markdown(n));
    }
    for sec in applicable(a) {
        let _ = writeln!(s, "## {}\n\n> Paper: {}\n", sec.title, sec.paper);
        let g = grid(&sec.rows);
        if g.is_empty() {
            let _ = writeln!(s, "_{}_\n", empty(sec.name));
            continue;
        }
        s.push_str(&crate::report::markdown::table(&g));
        s.push('\n');
    }
    s
}

/// The verifiers on the EIA axes, with the threshold box.
fn eia_chart(a: &Audit) -> String {
    let mut c = Chart::new(
        "EIA: verifiers on the two axes (box: admissible)",
        "Corr(nu, b): echo of the grader",
        "Corr(V, U): truthfulness",
        (-1.0, 1.0),
        (-1.0, 1.0),
    );
    let (d, t) = (a.tau_dec, a.tau_tru);
    c.line(&[(-d, t), (-d, 1.0), (d, 1.0), (d, t), (-d, t)], "#555", "admissible box", true);
    for (i, e) in a.eia.iter().enumerate() {
        if let (Some(x), Some(y)) = (e.corr_nu_b, e.corr_v_u) {
            let label = format!("{} ({})", e.verifier, if e.pass { "PASS" } else { "fail" });
            c.points(&[(x, y)], PALETTE[i % PALETTE.len()], &label);
            c.point_label(x, y, &e.verifier);
        }
    }
    c.finish(true)
}

/// The error correlations as a matrix: a row and a column per verifier, Corr(nu_a, nu_b) (and
/// over how many memories both scored) in each cell.
fn error_matrix(a: &Audit) -> Vec<Vec<String>> {
    let mut names: Vec<&str> = Vec::new();
    for p in &a.error_correlations {
        for n in [p.a.as_str(), p.b.as_str()] {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    let mut out =
        vec![std::iter::once("Corr(nu_a, nu_b)".to_string()).chain(names.iter().map(|n| n.to_string())).collect()];
    for &row in &names {
        let mut cells = vec![row.to_string()];
        for &col in &names {
            let pair = a.error_correlations.iter().find(|p| (p.a == row && p.b == col) || (p.a == col && p.b == row));
            cells.push(match pair {
                None => "1".into(),
                Some(p) => match p.corr_errors {
                    Some(c) => format!("{c:+.2} (n={})", p.memories),
                    None => format!("- (n={})", p.memories),
                },
            });
        }
        out.push(cells);
    }
    out
}

/// The audit as one self-contained HTML page.
pub fn html(a: &Audit, source: &str) -> String {
    let mut s = crate::report::html::head("lucid audit");
    let _ = write!(s, "<h1>lucid audit: {}</h1><p>{}</p>", esc(source), esc(&intro(a, source)));
    if let Some(n) = &a.eval_log {
        for para in super::eval_log::markdown(n).split("\n\n").filter(|p| !p.is_empty()) {
            let para = para.trim_start_matches("## ").replace("**", "").replace('`', "");
            let _ = write!(s, "<p>{}</p>", esc(&para));
        }
    }
    s.push_str(&eia_chart(a));
    for sec in applicable(a) {
        let _ = write!(
            s,
            "<h2 id=\"{}\">{}</h2><blockquote>Paper: {}</blockquote>",
            sec.name,
            esc(sec.title),
            esc(sec.paper)
        );
        let g = grid(&sec.rows);
        if g.is_empty() {
            let _ = write!(s, "<p><em>{}</em></p>", esc(empty(sec.name)));
            continue;
        }
        if sec.name == "error_correlations" {
            s.push_str(&crate::report::html::table(&error_matrix(a)));
            continue;
        }
        s.push_str(&crate::report::html::table(&g));
    }
    s.push_str("</body></html>\n");
    s
}

/// Every non-empty table as an Arrow batch, named `<prefix>_<table>` (schema inferred from the rows).
pub fn batches(a: &Audit, prefix: &str) -> Result<Vec<(String, RecordBatch)>> {
    let mut out = Vec::new();
    for sec in sections(a) {
        let name = format!("{prefix}_{}", sec.name);
        let batch = if sec.rows.is_empty() {
            RecordBatch::new_empty(std::sync::Arc::new(arrow::datatypes::Schema::empty()))
        } else {
            let schema = arrow::json::reader::infer_json_schema_from_iterator(sec.rows.iter().map(Ok))?;
            let mut dec = arrow::json::ReaderBuilder::new(std::sync::Arc::new(schema)).build_decoder()?;
            dec.serialize(&sec.rows)?;
            dec.flush()?.ok_or_else(|| Error::query(format!("audit table {name}: no rows")))?
        };
        out.push((name, batch));
    }
    Ok(out)
}

/// Write `audit.md`, `audit.json` and `audit.html` into `out`; returns the HTML path.
pub fn write(a: &Audit, source: &str, out: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(out).map_err(|source| Error::Write { path: out.into(), source })?;
    let put = |name: &str, text: String| {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(|source| Error::Write { path: p.clone(), source })?;
        Ok::<PathBuf, Error>(p)
    };
    put("audit.json", serde_json::to_string_pretty(&json(a)).expect("json"))?;
    put("audit.md", markdown(a, source))?;
    put("audit.html", html(a, source))
}
