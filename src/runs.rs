//! A run's tables as SQL: every table of one or more runs registered ([`crate::session`]),
//! an older text-to-SQL run's `episodes` upgraded to today's columns, and, over one run with
//! `episodes` and `evaluation`, the derived views the paper's reports read ([`VIEWS`], SQL in
//! `pipelines/reports/paper/views/`). Used by `lucid query`, `lucid report`, report stages and
//! the audit of a run.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::RecordBatch;
use datafusion::prelude::SessionContext;

use crate::error::Result;
use crate::session::{block_on, collect, df_err};

/// Run `sql` over in-memory run tables, with the [`VIEWS`] they allow.
pub fn sql_over(tables: &[(String, RecordBatch)], sql: &str) -> Result<RecordBatch> {
    block_on(async {
        let ctx = crate::session::new();
        crate::session::register_batches(&ctx, tables)?;
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
    open_runs_in(crate::session::new(), runs, materialize).await
}

async fn open_runs_in(
    ctx: SessionContext,
    runs: &[(String, PathBuf)],
    materialize: bool,
) -> Result<(SessionContext, Vec<String>)> {
    let parts = crate::session::register_runs(&ctx, runs).await?;
    for (_, registered) in parts.get("episodes").into_iter().flatten() {
        upgrade_episodes(&ctx, registered).await.map_err(|e| df_err(registered, e))?;
    }
    let mut names = crate::session::stack_runs(&ctx, parts, runs.len()).await?;
    if runs.len() == 1 {
        let views = define_views(&ctx, &names, materialize).await?;
        names.extend(views);
    }
    Ok((ctx, names))
}
