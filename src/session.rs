//! DataFusion over run folders: every table of a run (a folder of Parquet files) registered by
//! name; several runs are stacked with a `run` column. Used by `lucid query` and report stages.
//! Over one run with `episodes` and `evaluation`, the views the paper's reports read are defined
//! too ([`VIEWS`], SQL in `pipelines/reports/paper/views/`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use datafusion::prelude::{ParquetReadOptions, SessionContext};

use crate::error::{Error, Result};

/// Run a future to completion on a small runtime (lucid is synchronous elsewhere).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime").block_on(f)
}

fn df_err(context: &str, e: datafusion::error::DataFusionError) -> Error {
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

/// Run `sql` over in-memory tables.
pub fn sql_over(tables: &[(String, RecordBatch)], sql: &str) -> Result<RecordBatch> {
    block_on(async {
        let ctx = new();
        for (name, batch) in tables {
            ctx.register_batch(name, batch.clone()).map_err(|e| df_err(name, e))?;
        }
        let names: Vec<String> = tables.iter().map(|t| t.0.clone()).collect();
        define_views(&ctx, &names, false).await?;
        collect(&ctx, sql).await
    })
}

/// A derived view of a run.
pub struct View {
    /// Its name.
    pub name: &'static str,
    /// The tables it reads.
    pub needs: &'static [&'static str],
    /// Its SQL.
    pub sql: &'static str,
    /// Whether many queries over one run are faster with it computed once (an expensive join)
    /// than recomputed (a cheap one, whose rows would only take memory).
    pub materialize: bool,
}

/// The derived views of a run.
pub const VIEWS: &[View] = &[
    View {
        name: "episode_outcomes",
        needs: &["episodes", "evaluation"],
        sql: include_str!("../pipelines/reports/paper/views/episode_outcomes.sql"),
        materialize: false,
    },
    View {
        name: "retrieved_sets",
        needs: &["episodes", "evaluation"],
        sql: include_str!("../pipelines/reports/paper/views/retrieved_sets.sql"),
        materialize: true,
    },
    View {
        name: "trusted_bank",
        needs: &["episodes", "evaluation"],
        sql: include_str!("../pipelines/reports/paper/views/trusted_bank.sql"),
        materialize: true,
    },
];

/// Define every [`VIEWS`] entry whose tables are among `tables` (and whose name is not taken):
/// as a view, or, with `materialize`, those marked so computed once and held in memory in
/// partitions (several queries then share the work: `lucid report`). Returns the names defined.
pub async fn define_views(ctx: &SessionContext, tables: &[String], materialize: bool) -> Result<Vec<String>> {
    let mut defined = Vec::new();
    for v in VIEWS {
        if tables.iter().any(|t| t == v.name) || !v.needs.iter().all(|n| tables.iter().any(|t| t == n)) {
            continue;
        }
        if materialize && v.materialize {
            let df = ctx.sql(v.sql).await.map_err(|e| df_err(v.name, e))?;
            let schema = Arc::new(df.schema().as_arrow().clone());
            let batches = df.collect().await.map_err(|e| df_err(v.name, e))?;
            // Batches dealt round-robin into one partition per core, so later scans run in parallel.
            let parts = crate::par::default_jobs().max(1);
            let mut partitions = vec![Vec::new(); parts];
            for (i, b) in batches.into_iter().enumerate() {
                partitions[i % parts].push(b);
            }
            let table = datafusion::datasource::MemTable::try_new(schema, partitions).map_err(|e| df_err(v.name, e))?;
            ctx.register_table(v.name, Arc::new(table)).map_err(|e| df_err(v.name, e))?;
        } else {
            ctx.sql(&format!("CREATE VIEW \"{}\" AS {}", v.name, v.sql)).await.map_err(|e| df_err(v.name, e))?;
        }
        defined.push(v.name.to_string());
    }
    Ok(defined)
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

/// The channels of a text-to-SQL run written before domains (#21), by name, and the `flag_*`
/// column each was stored in.
const CHANNELS_OF_FLAGS: &[(&str, &str)] =
    &[("execution", "flag_exec"), ("degeneracy", "flag_degenerate"), ("literal", "flag_literal")];

/// Register the `episodes` table `name` of an older text-to-SQL run, one with `flag_*` columns
/// and no `channels`, as a view that adds `channels` built from them (the literal channel's
/// detail from `literals` when present), so today's reports read old runs and `lucid report OLD
/// NEW` compares across versions. The file itself is never rewritten.
async fn upgrade_episodes(ctx: &SessionContext, name: &str) -> datafusion::error::Result<()> {
    let schema = ctx.table(name).await?.schema().clone();
    let has = |c: &str| schema.field_with_unqualified_name(c).is_ok();
    let present: Vec<&(&str, &str)> = CHANNELS_OF_FLAGS.iter().filter(|(_, col)| has(col)).collect();
    if has("channels") || present.is_empty() {
        return Ok(());
    }
    let structs: Vec<String> = present
        .iter()
        .map(|(channel, col)| {
            let detail = if *channel == "literal" && has("literals") { "literals" } else { "NULL" };
            format!("named_struct('name', '{channel}', 'fired', {col}, 'detail', CAST({detail} AS VARCHAR))")
        })
        .collect();
    let raw = format!("__{name}_before_channels");
    let table = ctx.deregister_table(name)?.expect("just registered");
    ctx.register_table(&raw, table)?;
    let sql =
        format!("CREATE VIEW \"{name}\" AS SELECT *, make_array({}) AS channels FROM \"{raw}\"", structs.join(", "));
    ctx.sql(&sql).await?;
    Ok(())
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
        if table == "episodes" {
            upgrade_episodes(ctx, &registered(table)).await.map_err(|e| df_err(table, e))?;
        }
        names.push(table.clone());
    }
    Ok(names)
}

/// A session with every table of `runs` registered; with several runs each table is the union
/// of theirs with a leading `run` column; over one run, its [`VIEWS`] too. Returns the names.
pub async fn session_for(runs: &[(String, PathBuf)]) -> Result<(SessionContext, Vec<String>)> {
    open_runs(runs, false).await
}

/// [`session_for`] one run, with its expensive views computed once (for many queries over it).
pub async fn materialized_session(run: &(String, PathBuf)) -> Result<(SessionContext, Vec<String>)> {
    open_runs(std::slice::from_ref(run), true).await
}

/// [`session_for`] in a session made elsewhere (a Ballista client, `crate::ballista::context`).
pub async fn session_in(ctx: SessionContext, runs: &[(String, PathBuf)]) -> Result<(SessionContext, Vec<String>)> {
    open_runs_in(ctx, runs, false).await
}

async fn open_runs(runs: &[(String, PathBuf)], materialize: bool) -> Result<(SessionContext, Vec<String>)> {
    open_runs_in(new(), runs, materialize).await
}

async fn open_runs_in(
    ctx: SessionContext,
    runs: &[(String, PathBuf)],
    materialize: bool,
) -> Result<(SessionContext, Vec<String>)> {
    let mut names: Vec<String> = Vec::new();
    let mut parts: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
    for (i, (run, dir)) in runs.iter().enumerate() {
        if let Some((url, run_name)) = dir.to_str().and_then(crate::remote::listing::split_run_url) {
            for name in
                register_remote(
                    &ctx,
                    &url,
                    &run_name,
                    |t| if runs.len() == 1 { t.into() } else { format!("__run{i}_{t}") },
                )
                .await?
            {
                let registered = if runs.len() == 1 { name.clone() } else { format!("__run{i}_{name}") };
                parts.entry(name).or_default().push((run.clone(), registered));
            }
            continue;
        }
        let tables =
            if dir.is_file() { vec![(label(dir).replace(".parquet", ""), dir.clone())] } else { run_tables(dir)? };
        for (name, path) in tables {
            let registered = if runs.len() == 1 { name.clone() } else { format!("__run{i}_{name}") };
            let loc = if path.is_dir() { format!("{}/", path.display()) } else { path.display().to_string() };
            let err = |e| df_err(&path.display().to_string(), e);
            ctx.register_parquet(&registered, &loc, ParquetReadOptions::default()).await.map_err(err)?;
            if name == "episodes" {
                upgrade_episodes(&ctx, &registered).await.map_err(err)?;
            }
            parts.entry(name).or_default().push((run.clone(), registered));
        }
    }
    for (name, members) in parts {
        if runs.len() > 1 {
            let union = members
                .iter()
                .map(|(run, t)| format!("SELECT '{}' AS run, * FROM \"{t}\"", run.replace('\'', "''")))
                .collect::<Vec<_>>()
                .join(" UNION ALL BY NAME ");
            ctx.sql(&format!("CREATE VIEW \"{name}\" AS {union}")).await.map_err(|e| df_err(&name, e))?;
        }
        names.push(name);
    }
    if runs.len() == 1 {
        let views = define_views(&ctx, &names, materialize).await?;
        names.extend(views);
    }
    Ok((ctx, names))
}
