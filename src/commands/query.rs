//! `lucid query`: SQL (text or a `.sql` report file) over the tables of one or more runs.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use arrow::array::RecordBatch;
use clap::Args;

use super::werr;
use crate::error::{Error, Result};

/// `lucid query`.
pub fn run(a: &QueryArgs) -> Result<()> {
    let (paths, sql): (Vec<_>, Option<String>) = {
        let last = a.args.last().expect("clap requires one");
        let path = Path::new(last);
        let all = || a.args[..a.args.len() - 1].iter().map(Into::into).collect();
        if a.args.len() > 1 && path.extension().is_some_and(|e| e == "sql") && path.is_file() {
            // A report file: `lucid query runs/demo pipelines/reports/study.sql` (its leading `--`
            // comments would read as flags if passed as text).
            let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.into(), source })?;
            (all(), Some(text))
        } else if a.args.len() > 1 && !path.exists() {
            (all(), Some(last.clone()))
        } else {
            (a.args.iter().map(Into::into).collect(), None)
        }
    };
    let runs = crate::session::expand_runs(&paths)?;
    crate::session::block_on(async {
        let (ctx, names) = match a.engine {
            Engine::Datafusion => crate::runs::session_for(&runs).await?,
            Engine::Ballista => crate::runs::session_in(ballista_context(a).await?, &runs).await?,
        };
        let Some(sql) = sql else {
            let mut out = std::io::stdout().lock();
            for n in names {
                let df = ctx.table(n.as_str()).await.map_err(|e| Error::query_from("", e))?;
                let cols: Vec<String> =
                    df.schema().fields().iter().map(|f| format!("{} {}", f.name(), f.data_type())).collect();
                writeln!(out, "{n}: {}", cols.join(", ")).map_err(werr)?;
            }
            return Ok(());
        };
        let batch = crate::session::collect(&ctx, &sql).await?;
        emit(&batch, a.format, a.out.as_deref())
    })
}

fn emit(batch: &RecordBatch, format: Format, out: Option<&Path>) -> Result<()> {
    if format == Format::Parquet {
        let out = out.ok_or_else(|| Error::usage("--format parquet needs --out FILE"))?;
        return crate::table::write_parquet(out, batch);
    }
    let mut buf: Vec<u8> = Vec::new();
    match format {
        Format::Table => writeln!(buf, "{}", arrow::util::pretty::pretty_format_batches(std::slice::from_ref(batch))?)
            .map_err(werr)?,
        Format::Csv => arrow::csv::Writer::new(&mut buf).write(batch)?,
        Format::Json => {
            // One object a line with every column, a null written as null (as a JSON reader
            // expects a row's keys to be the query's columns).
            let mut w = arrow::json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow::json::writer::LineDelimited>(&mut buf);
            w.write(batch)?;
            w.finish()?;
        }
        Format::Parquet => unreachable!("handled above"),
    }
    match out {
        Some(p) => std::fs::write(p, buf).map_err(|source| Error::Write { path: p.into(), source }),
        None => std::io::stdout().lock().write_all(&buf).map_err(werr),
    }
}

/// The Ballista client of `--engine ballista`.
#[cfg(feature = "ballista")]
async fn ballista_context(a: &QueryArgs) -> Result<datafusion::prelude::SessionContext> {
    crate::ballista::context(a.ballista.as_deref()).await
}

/// `--engine ballista` in a build without the feature.
#[cfg(not(feature = "ballista"))]
async fn ballista_context(a: &QueryArgs) -> Result<datafusion::prelude::SessionContext> {
    let _ = &a.ballista;
    Err(super::ballista::not_built())
}

/// Output formats of `lucid query`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A readable table.
    Table,
    /// CSV with a header.
    Csv,
    /// One JSON object per line.
    Json,
    /// A Parquet file (needs --out).
    Parquet,
}

/// `lucid query`.
#[derive(Args, Debug)]
pub struct QueryArgs {
    /// Runs (`runs/<name>`), a runs folder, or Parquet table folders; then the SQL, as text or a
    /// `.sql` file such as `pipelines/reports/study.sql` (none: list the tables).
    #[arg(required = true, num_args = 1..)]
    pub args: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The query engine: DataFusion in this process, or a Ballista cluster (cargo feature
    /// `ballista`).
    #[arg(long, value_enum, default_value_t = Engine::Datafusion)]
    pub engine: Engine,
    /// With `--engine ballista`: the scheduler (`df://host:port`); none starts a standalone
    /// scheduler and executor in this process.
    #[arg(long, value_name = "URL")]
    pub ballista: Option<String>,
}

/// Where `lucid query` runs its SQL.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// DataFusion in this process.
    Datafusion,
    /// A Ballista cluster.
    Ballista,
}
