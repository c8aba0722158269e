//! The SQL engine: DataFusion sessions with lucid's functions, and the Parquet tables of run
//! folders (local, or in the shared store) registered by name; several runs are stacked with a
//! `run` column. It knows tables only as names and files: what a run's tables mean (the views the
//! paper's reports read, older runs' columns) is the `runs` module's (layer 2).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use datafusion::prelude::{ParquetReadOptions, SessionContext};

use crate::error::{Error, Result};

/// Run a future to completion on a small runtime (lucid is synchronous elsewhere).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime").block_on(f)
}

/// A DataFusion error with what it was doing.
pub fn df_err(context: &str, e: datafusion::error::DataFusionError) -> Error {
    Error::query_from(context, e)
}

/// A DataFusion session with lucid's statistics functions ([`crate::analysis::udf`]).
pub fn new() -> SessionContext {
    let ctx = SessionContext::new();
    crate::analysis::udf::register(&ctx);
    ctx
}

/// Execute `sql` in `ctx`, returning the rows as one batch (with the plan's schema when empty).
pub async fn collect(ctx: &SessionContext, sql: &str) -> Result<RecordBatch> {
    let df = ctx.sql(sql).await.map_err(|e| df_err("query", e))?;
    let schema = Arc::new(df.schema().as_arrow().clone());
    let batches = df.collect().await.map_err(|e| df_err("query", e))?;
    Ok(arrow::compute::concat_batches(&schema, &batches)?)
}

/// Register in-memory `tables` by name.
pub fn register_batches(ctx: &SessionContext, tables: &[(String, RecordBatch)]) -> Result<()> {
    for (name, batch) in tables {
        ctx.register_batch(name, batch.clone()).map_err(|e| df_err(name, e))?;
    }
    Ok(())
}

/// The tables of one run folder: subfolders holding `.parquet` files, and loose `.parquet` files.
pub fn run_tables(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let rd = std::fs::read_dir(dir).map_err(|source| Error::Read { path: dir.into(), source })?;
    let mut out = Vec::new();
    for e in rd.filter_map(|e| e.ok()) {
        let p = e.path();
        let name = p.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let has_parquet = |d: &Path| {
            std::fs::read_dir(d)
                .map(|rd| rd.filter_map(|e| e.ok()).any(|e| e.path().extension().is_some_and(|x| x == "parquet")))
                .unwrap_or(false)
        };
        if (p.is_dir() && has_parquet(&p)) || p.extension().is_some_and(|x| x == "parquet") {
            out.push((name, p));
        }
    }
    out.sort();
    Ok(out)
}

/// The run folders named by `paths`: a run (has `manifest.json` or tables), or a folder of runs.
pub fn expand_runs(paths: &[PathBuf]) -> Result<Vec<(String, PathBuf)>> {
    let mut runs = Vec::new();
    for p in paths {
        if let Some((_, name)) = p.to_str().and_then(crate::remote::listing::split_run_url) {
            runs.push((name, p.clone()));
            continue;
        }
        if !p.exists() {
            return Err(Error::input(p, "no such run or folder"));
        }
        let is_run = p.join("manifest.json").is_file() || !run_tables(p)?.is_empty() || p.is_file();
        if is_run {
            runs.push((label(p), p.clone()));
            continue;
        }
        let mut sub: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|source| Error::Read { path: p.clone(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|d| d.join("manifest.json").is_file())
            .collect();
        sub.sort();
        if sub.is_empty() {
            return Err(Error::input(p, "holds no run (no manifest.json and no Parquet tables)"));
        }
        runs.extend(sub.into_iter().map(|d| (label(&d), d)));
    }
    Ok(runs)
}

fn label(p: &Path) -> String {
    p.file_name().unwrap_or(p.as_os_str()).to_string_lossy().into_owned()
}

/// Register the tables of run `name` in the shared store `url` where they lie (its newest
/// listing's objects, read through DataFusion's object store registry); returns the table names.
async fn register_remote(
    ctx: &SessionContext,
    url: &str,
    name: &str,
    registered: impl Fn(&str) -> String,
) -> Result<Vec<String>> {
    use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
    type Found = (Option<crate::remote::listing::RunListing>, String, Arc<dyn object_store::ObjectStore>, String);
    let (listing, base, store, root) = {
        let (store_url, name) = (url.to_string(), name.to_string());
        // The store client blocks on its own runtime: keep it off DataFusion's async threads.
        // A second client, never used here, is the one DataFusion reads through.
        tokio::task::spawn_blocking(move || -> Result<Found> {
            let listing = crate::remote::listing::newest(&crate::remote::Remote::open(&store_url)?, &name)?;
            let reader = crate::remote::Remote::open(&store_url)?;
            let (base, store) = reader.for_datafusion();
            Ok((listing, base, store, reader.object_url("")))
        })
        .await
        .map_err(|e| Error::environment_from(format!("store {url}"), e))??
    };
    let listing =
        listing.ok_or_else(|| Error::usage(format!("{url}/runs/{name}: no such run in the store (no listing)")))?;
    let base_url = url::Url::parse(&base).map_err(|e| Error::usage_from(url, e))?;
    ctx.register_object_store(&base_url, store);
    let mut names = Vec::new();
    for (table, objects) in &listing.tables {
        let urls = objects
            .values()
            .map(|h| ListingTableUrl::parse(format!("{root}{}", crate::remote::listing::object_key(h))))
            .collect::<datafusion::error::Result<Vec<_>>>()
            .map_err(|e| df_err(table, e))?;
        let options =
            ListingOptions::new(Arc::new(datafusion::datasource::file_format::parquet::ParquetFormat::default()))
                .with_file_extension(".parquet");
        let config = ListingTableConfig::new_with_multi_paths(urls)
            .with_listing_options(options)
            .infer_schema(&ctx.state())
            .await
            .map_err(|e| df_err(table, e))?;
        let provider = ListingTable::try_new(config).map_err(|e| df_err(table, e))?;
        ctx.register_table(registered(table), Arc::new(provider)).map_err(|e| df_err(table, e))?;
        names.push(table.clone());
    }
    Ok(names)
}

/// Register every table of `runs` in `ctx`: over one run under its own name, over several as
/// `__run<i>_<name>`. Returns, per table name, each run's name and the name it was registered as.
pub async fn register_runs(ctx: &SessionContext, runs: &[(String, PathBuf)]) -> Result<Members> {
    register_runs_as(ctx, runs, runs.len() > 1).await
}

/// Every table of `runs` stacked with a leading `run` column, even over one run (what a page over
/// several runs reads the same way whatever their number). Returns the table names.
pub async fn register_stacked(ctx: &SessionContext, runs: &[(String, PathBuf)]) -> Result<Vec<String>> {
    let parts = register_runs_as(ctx, runs, true).await?;
    stack_runs(ctx, parts, usize::MAX).await
}

async fn register_runs_as(ctx: &SessionContext, runs: &[(String, PathBuf)], aliased: bool) -> Result<Members> {
    let alias = |i: usize, t: &str| if aliased { format!("__run{i}_{t}") } else { t.to_string() };
    let mut parts = Members::new();
    for (i, (run, dir)) in runs.iter().enumerate() {
        if let Some((url, run_name)) = dir.to_str().and_then(crate::remote::listing::split_run_url) {
            for name in register_remote(ctx, &url, &run_name, |t| alias(i, t)).await? {
                let registered = alias(i, &name);
                parts.entry(name).or_default().push((run.clone(), registered));
            }
            continue;
        }
        let tables =
            if dir.is_file() { vec![(label(dir).replace(".parquet", ""), dir.clone())] } else { run_tables(dir)? };
        for (name, path) in tables {
            let registered = alias(i, &name);
            let loc = if path.is_dir() { format!("{}/", path.display()) } else { path.display().to_string() };
            let err = |e| df_err(&path.display().to_string(), e);
            ctx.register_parquet(&registered, &loc, ParquetReadOptions::default()).await.map_err(err)?;
            parts.entry(name).or_default().push((run.clone(), registered));
        }
    }
    Ok(parts)
}

/// Per table name, each run's name and the name its table is registered as.
pub type Members = std::collections::BTreeMap<String, Vec<(String, String)>>;

/// Stack the tables of several runs ([`register_runs`]): each name becomes the union of its
/// members with a leading `run` column (over one run, nothing to do). Returns the table names.
pub async fn stack_runs(ctx: &SessionContext, parts: Members, runs: usize) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for (name, members) in parts {
        if runs > 1 {
            let union = members
                .iter()
                .map(|(run, t)| format!("SELECT '{}' AS run, * FROM \"{t}\"", run.replace('\'', "''")))
                .collect::<Vec<_>>()
                .join(" UNION ALL BY NAME ");
            ctx.sql(&format!("CREATE VIEW \"{name}\" AS {union}")).await.map_err(|e| df_err(&name, e))?;
        }
        names.push(name);
    }
    Ok(names)
}
