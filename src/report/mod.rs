//! `lucid report`: every table of the paper from one or more runs — the SQL files of
//! `pipelines/reports/paper/` (compiled in, so the report needs no checkout, and readable and
//! rerunnable with `lucid query`) plus the generation-free k-sweep — each with the paper's figure
//! beside it, written as `report.md`, `report.json` (`{"tables": {name: [row, ...]}}`, documented
//! in `schemas/report.json`) and a self-contained `report.html` with inline SVG plots. Several
//! runs go side by side: every table has a leading `run` column.

pub mod html;
pub mod ksweep;
pub mod markdown;
pub mod svg;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::error::{Error, Result};

/// One report table: name, what it needs, its SQL (None: computed in Rust), the paper's figure.
pub struct TableSpec {
    /// Table name (report.json key, `pipelines/reports/paper/<name>.sql`).
    pub name: &'static str,
    /// Run tables it reads.
    pub needs: &'static [&'static str],
    /// The SQL, compiled in from `pipelines/reports/paper/`.
    pub sql: Option<&'static str>,
    /// What the paper reports for it.
    pub paper: &'static str,
}

macro_rules! sql {
    ($name:literal) => {
        Some(include_str!(concat!("../../pipelines/reports/paper/", $name, ".sql")))
    };
}

const EV: &[&str] = &["evaluation"];
const EP: &[&str] = &["episodes", "evaluation"];

/// Every table of the report, in order.
pub const SPECS: &[TableSpec] = &[
    TableSpec {
        name: "headline",
        needs: EP,
        sql: sql!("headline"),
        paper: "BIRD dev: EX no-memory 52.4 %, memento 53.8 / 54.2 %, LUCID 55.7 / 58.1 %; leniency 0.76, sensitivity \
                0.90; trusted-bank corruption 0.42; detector precision 0.90; kappa 0.38.",
    },
    TableSpec {
        name: "ex",
        needs: EV,
        sql: sql!("ex"),
        paper: "BIRD dev, 1,534 questions: no-memory 52.4 %, memento 53.8 / 54.2 %, LUCID 55.7 / 58.1 % (seeds 0 / 1).",
    },
    TableSpec {
        name: "paired_difference",
        needs: EV,
        sql: sql!("paired_difference"),
        paper: "LUCID - memento: +1.9 [+0.2, +3.6] (seed 0), +3.9 [+2.1, +5.6] (seed 1), EX points, 95 % bootstrap.",
    },
    TableSpec {
        name: "grader",
        needs: EP,
        sql: sql!("grader"),
        paper: "BIRD: leniency l = 0.76, sensitivity s = 0.90 (factual banks: l = 0.31 to 0.54).",
    },
    TableSpec {
        name: "coupling",
        needs: EP,
        sql: sql!("coupling"),
        paper: "kappa 0.38 overall (simple 0.32, moderate 0.40, challenging 0.34), e0 0.32; error 0.32 at clean \
                retrieval, 0.61 fully corrupted. kappa is the paper's single slope, which also absorbs the help of \
                trusted-correct memories; kappa_two and gamma_two separate the harm of trusted-wrong and the help of \
                trusted-correct memories.",
    },
    TableSpec {
        name: "coupling_bins",
        needs: EP,
        sql: sql!("coupling_bins"),
        paper: "The observed error at each level of retrieved corruption (points of the coupling plot).",
    },
    TableSpec {
        name: "trajectory",
        needs: EP,
        sql: sql!("trajectory"),
        paper: "Observed trusted-bank corruption (share of r = 1 memories that are wrong): 0.42, rising then settling.",
    },
    TableSpec {
        name: "detector",
        needs: EP,
        sql: sql!("detector"),
        paper: "Precision rho = 0.90 [0.875, 0.920] pooled over 649 flags, wrong-memory base rate about 0.46, recall \
                low; a flag helps iff rho > rho* = 0.5.",
    },
    TableSpec {
        name: "echo_gap",
        needs: EP,
        sql: sql!("echo_gap"),
        paper: "The Echo Gap opens when E[b | U=0] > 0 and Cov(b, n | U=0) > 0.",
    },
    TableSpec {
        name: "attractor",
        needs: EP,
        sql: sql!("attractor"),
        paper: "Theorem 2 at kappa 0.38, l 0.76, s 0.90, e0 0.32: p* = 0.448 (paper 0.45), p0 = 0.284, ratio 1.58, \
                q'(p*) = 0.376 (stable); observed 0.42.",
    },
    TableSpec {
        name: "k_sweep",
        needs: &["episodes", "evaluation", "embeddings"],
        sql: None,
        paper: "k = 1 / 2 / 4 / 8: corruption 0.36 / 0.34 / 0.34 / 0.34, kappa 0.15 / 0.22 / 0.38 / 0.44, e0 0.41 / \
                0.39 / 0.33 / 0.31.",
    },
];

/// A computed table.
pub struct ReportTable {
    /// Its spec.
    pub spec: &'static TableSpec,
    /// Rows of every run, with a leading `run` column (None: no run had what it needs).
    pub batch: Option<RecordBatch>,
}

/// The report of some runs.
pub struct Report {
    /// Run names, in the order given.
    pub runs: Vec<String>,
    /// Every table of [`SPECS`].
    pub tables: Vec<ReportTable>,
}

impl Report {
    /// A table by name.
    pub fn table(&self, name: &str) -> Option<&RecordBatch> {
        self.tables.iter().find(|t| t.spec.name == name).and_then(|t| t.batch.as_ref())
    }

    /// The headline table (the study on one screen), when the runs had what it needs.
    pub fn headline(&self) -> Option<&RecordBatch> {
        self.table(SPECS[0].name)
    }
}

/// The folder of a run the study's report is written into (`<run>/report/`).
pub const FOLDER: &str = "report";

/// A report written to a folder.
#[derive(Debug)]
pub struct Written {
    /// The HTML page (`report.md` and `report.json` lie beside it).
    pub html: PathBuf,
    /// The headline table.
    pub headline: Option<RecordBatch>,
}

/// Build the report of the run folders `runs` and write it into `out`.
pub fn build_and_write(runs: &[PathBuf], out: &Path) -> Result<Written> {
    let report = build(runs)?;
    let html = write(&report, out)?;
    Ok(Written { html, headline: report.headline().cloned() })
}

/// Compute every table for the run folders `runs`.
pub fn build(runs: &[PathBuf]) -> Result<Report> {
    let runs = crate::session::expand_runs(runs)?;
    let mut per_table: Vec<Vec<RecordBatch>> = vec![Vec::new(); SPECS.len()];
    for (name, dir) in &runs {
        crate::session::block_on(async {
            let (ctx, tables) = crate::runs::materialized_session(&(name.clone(), dir.clone())).await?;
            for (i, spec) in SPECS.iter().enumerate() {
                if !spec.needs.iter().all(|n| tables.iter().any(|t| t == n)) {
                    continue;
                }
                let batch = match spec.sql {
                    Some(sql) => crate::session::collect(&ctx, sql).await,
                    None => ksweep::k_sweep(&ctx).await,
                }
                .map_err(|e| Error::query_from(format!("report table {} of run {name}", spec.name), e))?;
                per_table[i].push(with_run(name, &batch)?);
            }
            Ok::<(), Error>(())
        })?;
    }
    let tables = SPECS
        .iter()
        .zip(per_table)
        .map(|(spec, batches)| {
            let batch = match batches.first() {
                None => None,
                Some(first) => Some(arrow::compute::concat_batches(&first.schema(), &batches)?),
            };
            Ok(ReportTable { spec, batch })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Report { runs: runs.into_iter().map(|r| r.0).collect(), tables })
}

fn with_run(run: &str, batch: &RecordBatch) -> Result<RecordBatch> {
    let mut fields = vec![Arc::new(Field::new("run", DataType::Utf8, false))];
    fields.extend(batch.schema().fields().iter().cloned());
    let mut cols: Vec<ArrayRef> = vec![Arc::new(StringArray::from(vec![run; batch.num_rows()]))];
    cols.extend(batch.columns().iter().cloned());
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
}

/// The rows of `batch` as JSON objects, nulls explicit.
pub fn rows_json(batch: &RecordBatch) -> Result<Vec<serde_json::Value>> {
    let mut buf = Vec::new();
    let mut w = arrow::json::WriterBuilder::new()
        .with_explicit_nulls(true)
        .build::<_, arrow::json::writer::JsonArray>(&mut buf);
    w.write(batch)?;
    w.finish()?;
    drop(w);
    if buf.is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_slice(&buf).map_err(|e| Error::query_from("report json", e))
}

/// Write `report.md`, `report.json` and `report.html` into `out`; returns the HTML path.
pub fn write(report: &Report, out: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(out).map_err(|source| Error::Write { path: out.into(), source })?;
    let put = |name: &str, text: String| {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(|source| Error::Write { path: p.clone(), source })?;
        Ok::<PathBuf, Error>(p)
    };
    let mut tables = serde_json::Map::new();
    for t in &report.tables {
        let rows = match &t.batch {
            Some(b) => rows_json(b)?,
            None => Vec::new(),
        };
        tables.insert(t.spec.name.into(), rows.into());
    }
    let json = serde_json::json!({ "tables": tables });
    put("report.json", serde_json::to_string_pretty(&json).expect("json"))?;
    put("report.md", markdown::render(report)?)?;
    put("report.html", html::render(report)?)
}
