//! The page's SQL box: one read-only query over the runs, their tables named as `lucid query`
//! names them. It runs on a thread of its own, so a slow query holds up no other request, while
//! the connection's thread waits for it and watches the page:
//!
//! - a statement that would create, change or set anything (DDL, DML, `COPY`, `SET`, ...) is
//!   refused before it runs, in words ("the SQL box only reads: COPY is refused"), and so is one
//!   DataFusion cannot run here (its internal error, without the request to file a bug);
//!   `EXPLAIN` and `EXPLAIN ANALYZE` run (a plan is a read);
//! - the query is stopped after [`TIMEOUT`] (its error names the limit) or as soon as its page
//!   goes away (the connection closed): its future is dropped, which ends DataFusion's work at
//!   the engine's next yield; every operator of the plan is made to yield (each batch it passes
//!   up spends the task's budget), so a stop is heard within a few batches however the query
//!   loops;
//! - its first [`ROWS`] rows are read from the stream of its results, and the stream dropped
//!   there, which stops the work (`more` says whether rows were left);
//! - at most [`AT_ONCE`] queries run at once in the process (a query's place is free when its
//!   work has ended, before its answer is sent);
//! - its memory is bounded ([`memory`]): [`memory::PER_QUERY`] a query inside
//!   [`memory::ALL_QUERIES`] for all of them, as DataFusion's memory pool, counting what its
//!   operators hold and every batch they pass up ([`metered`]); the functions that make values
//!   far larger than their arguments are bounded before they run ([`bounded`]); a query runs in
//!   batches of [`BATCH`] rows, its text is at most [`MAX_SQL`] bytes (a literal is copied into
//!   every row of a batch) and its answer at most [`MAX_ANSWER`] bytes of values. A query past
//!   a bound is stopped, and its error says which bound (answered 503).

use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::error::DataFusionError;
use datafusion::execution::context::SQLOptions;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::coop::CooperativeExec;
use datafusion::physical_plan::{ExecutionPlan, execute_stream};
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use serde_json::{Value, json};

use datafusion::execution::SessionStateBuilder;

use crate::error::{Error, Result};
use crate::loopback::Place;
use crate::report::rows_json;
use crate::session::block_on;

/// The most rows a query answers with.
pub const ROWS: usize = 5000;

/// How long a query may run.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The most queries running at once.
pub const AT_ONCE: usize = 4;

/// Rows in a batch of a query (DataFusion's default is 8,192): a literal or a bounded value is
/// copied into each row of a batch before any operator can count it.
pub const BATCH: usize = 1024;

/// The longest query text.
pub const MAX_SQL: usize = 64 << 10;

/// The most bytes of values a query answers with (past them, the rows read so far, `more` set).
pub const MAX_ANSWER: usize = 16 << 20;

pub mod bounded;
pub mod memory;
pub mod metered;

/// How often the waiting connection looks at its page and the clock.
const POLL: Duration = Duration::from_millis(100);

/// The queries running now.
static RUNNING: LazyLock<Arc<AtomicUsize>> = LazyLock::new(Arc::default);

/// Why the SQL box answered no rows.
#[derive(Debug)]
pub enum Unanswered {
    /// The query was refused or failed: the user's to change (answered 400 with the message).
    Failed(Error),
    /// A limit of the box: the time limit passed, or too many queries run (answered 503).
    Limit(String),
    /// The page went away: nobody to answer.
    Gone,
}

/// Run `sql` on `ctx` (see the module documentation); `gone` says whether the page that asked
/// has gone away. Its columns, its first [`ROWS`] rows, the limit and whether rows were left.
pub fn run(ctx: &SessionContext, sql: &str, gone: &dyn Fn() -> bool) -> std::result::Result<Value, Unanswered> {
    if sql.len() > MAX_SQL {
        return Err(Unanswered::Limit(format!(
            "the query is {} bytes long: the SQL box takes at most {} KiB (`lucid query` has no such bound)",
            sql.len(),
            MAX_SQL >> 10
        )));
    }
    let ctx = match bounded_context(ctx) {
        Ok(c) => c,
        Err(e) => return Err(Unanswered::Failed(Error::query_from("the SQL box's session", e))),
    };
    let Some(place) = Place::take(&RUNNING, AT_ONCE) else {
        return Err(Unanswered::Limit(format!(
            "{AT_ONCE} queries of the SQL box are running: try again when one of them has ended"
        )));
    };
    let (sent, answer) = mpsc::channel();
    // Dropping `stop` (when this function returns without the answer) wakes the query's task at
    // once: no timer has to fire on a runtime that the query keeps busy.
    let (stop, halt) = tokio::sync::oneshot::channel::<()>();
    let (ctx, sql) = (ctx.clone(), sql.to_string());
    let spawned = std::thread::Builder::new().name("lucid view sql".into()).spawn(move || {
        let out = block_on(async {
            tokio::select! {
                out = read(&ctx, &sql) => Some(out),
                _ = halt => None,
            }
        });
        // The place is free before the answer is sent: whoever reads the answer and asks again
        // finds it free (a place held past the answer made back-to-back queries see "4 queries
        // are running" on a loaded machine).
        drop(place);
        let _ = sent.send(out);
    });
    if let Err(e) = spawned {
        return Err(Unanswered::Failed(Error::environment_from("cannot start the query's thread", e)));
    }
    let deadline = Instant::now() + TIMEOUT;
    loop {
        match answer.recv_timeout(POLL) {
            Ok(Some(Err(Refusal::Memory(why)))) => return Err(Unanswered::Limit(why)),
            Ok(Some(read)) => return read.map_err(|r| Unanswered::Failed(r.into_error())),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                return Err(Unanswered::Failed(Error::query("the query stopped before it answered")));
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if gone() {
            drop(stop);
            return Err(Unanswered::Gone);
        }
        if Instant::now() >= deadline {
            drop(stop);
            return Err(Unanswered::Limit(format!(
                "the query ran past the SQL box's {} s limit and was stopped (`lucid query` has no limit)",
                TIMEOUT.as_secs()
            )));
        }
    }
}

/// The SQL box's session over `ctx`: `ctx`'s tables and functions, its own runtime (a memory
/// pool of this query's own, no disk), batches of [`BATCH`] rows.
fn bounded_context(ctx: &SessionContext) -> datafusion::error::Result<SessionContext> {
    let runtime = memory::runtime(ctx.runtime_env().as_ref())?;
    // The runs' tables are in the default catalog: keep it (a config that asks for a new one replaces it).
    let config = ctx.copied_config().with_batch_size(BATCH).with_create_default_catalog_and_schema(false);
    let state =
        SessionStateBuilder::new_from_existing(ctx.state()).with_runtime_env(runtime).with_config(config).build();
    Ok(SessionContext::new_with_state(state))
}

/// Prepare `ctx` (the runs' `lucid query` session) for the SQL box: its growing functions
/// bounded ([`bounded`]).
pub fn prepare(ctx: &SessionContext) {
    bounded::register(ctx);
}

/// Why [`read`] answered no rows: the user's error, or a memory bound of the box.
#[derive(Debug)]
enum Refusal {
    Query(Error),
    Memory(String),
}

impl Refusal {
    fn into_error(self) -> Error {
        match self {
            Refusal::Query(e) => e,
            Refusal::Memory(why) => Error::query(why),
        }
    }
}

impl From<Error> for Refusal {
    fn from(e: Error) -> Refusal {
        Refusal::Query(e)
    }
}

impl From<DataFusionError> for Refusal {
    fn from(e: DataFusionError) -> Refusal {
        match memory::exhausted(&e) {
            Some(why) => Refusal::Memory(why),
            None => Refusal::Query(plain(e)),
        }
    }
}

/// Plan `sql`, refuse it if it writes, and read its first [`ROWS`] rows (at most
/// [`MAX_ANSWER`] bytes of them).
async fn read(ctx: &SessionContext, sql: &str) -> std::result::Result<Value, Refusal> {
    let plan = ctx.state().create_logical_plan(sql).await?;
    if let Some(what) = writes(&plan) {
        return Err(Error::query(format!(
            "the SQL box only reads: {what} is refused (it would create, change or set something)"
        ))
        .into());
    }
    // What the box refuses, as DataFusion itself checks it: a second guard.
    let options = SQLOptions::new().with_allow_ddl(false).with_allow_dml(false).with_allow_statements(false);
    options.verify_plan(&plan).map_err(|e| Error::query(format!("the SQL box only reads: {e}")))?;
    let df = ctx.execute_logical_plan(plan).await?;
    let schema = Arc::new(df.schema().as_arrow().clone());
    let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let physical = yielding(df.create_physical_plan().await?)?;
    let mut stream = execute_stream(physical, ctx.task_ctx())?;
    let (mut batches, mut n, mut bytes, mut more) = (Vec::new(), 0usize, 0usize, false);
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        bytes += batch.get_array_memory_size();
        if bytes > MAX_ANSWER {
            more = true;
            break;
        }
        if batch.num_rows() > ROWS - n {
            batches.push(batch.slice(0, ROWS - n));
            more = true;
            break;
        }
        n += batch.num_rows();
        batches.push(batch);
    }
    drop(stream);
    let schema = batches.first().map_or(schema, |b| b.schema());
    let batch = arrow::compute::concat_batches(&schema, &batches).map_err(Error::from)?;
    Ok(json!({"columns": columns, "rows": rows_json(&batch)?, "limit": ROWS, "more": more,
              "answer_limit": MAX_ANSWER}))
}

/// `plan` with every operator's output counted in the query's pool ([`metered`]) and made
/// cooperative: each batch it passes up spends the task's budget, so the query's future yields
/// every so often however its operators loop. Without
/// it an operator that makes many batches from one input batch (a cross join: one probe batch
/// times every build row) held the thread for tens of seconds after its page had gone, its place
/// and a core with it; DataFusion wraps only the leaves.
fn yielding(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    let wrapped = plan.transform_up(|node| {
        if node.name() == CooperativeExec::static_name() || node.name() == metered::MeteredExec::static_name() {
            return Ok(Transformed::no(node));
        }
        let counted = Arc::new(metered::MeteredExec::new(node));
        Ok(Transformed::yes(Arc::new(CooperativeExec::new(counted)) as Arc<dyn ExecutionPlan>))
    });
    Ok(wrapped.map_err(plain)?.data)
}

/// What in `plan` would create, change or set something, as SQL words (`COPY`, `CREATE EXTERNAL
/// TABLE`, `INSERT INTO`, `SET VARIABLE`, ...), in it or in any of its subqueries.
fn writes(plan: &LogicalPlan) -> Option<String> {
    let mut what = None;
    let walked = plan.apply_with_subqueries(|p| {
        what = match p {
            LogicalPlan::Ddl(d) => Some(words(d.name()).replace("MEMORY ", "")),
            LogicalPlan::Dml(d) => Some(words(d.op.name()).replace("CTAS", "CREATE TABLE AS")),
            LogicalPlan::Copy(_) => Some("COPY".to_string()),
            LogicalPlan::Statement(s) => Some(words(s.name())),
            _ => None,
        };
        Ok(if what.is_some() { TreeNodeRecursion::Stop } else { TreeNodeRecursion::Continue })
    });
    match walked {
        Ok(_) => what,
        Err(_) => Some("a statement it cannot check".to_string()),
    }
}

/// `CreateExternalTable` or `Insert Into` as SQL words: `CREATE EXTERNAL TABLE`, `INSERT INTO`.
fn words(name: &str) -> String {
    let mut out = String::new();
    let mut lower = false;
    for c in name.chars() {
        if c.is_uppercase() && lower {
            out.push(' ');
        }
        lower = c.is_lowercase();
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// DataFusion's error as the box shows it: an internal one (a statement the engine cannot run
/// here) said so, without its request to file a bug.
fn plain(e: DataFusionError) -> Error {
    let text = e.to_string();
    match text.find("This issue was likely caused by a bug") {
        Some(at) => Error::query(format!(
            "the SQL box cannot run this statement: {}",
            text[..at].trim_end().trim_end_matches('.')
        )),
        None => Error::query_from("query", e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_read_as_sql_words() {
        assert_eq!(words("CreateExternalTable"), "CREATE EXTERNAL TABLE");
        assert_eq!(words("Insert Into"), "INSERT INTO");
        assert_eq!(words("SetVariable"), "SET VARIABLE");
    }

    #[test]
    fn explain_runs_and_writes_are_refused_in_words() {
        let ctx = SessionContext::new();
        let never = || false;
        let plan = run(&ctx, "EXPLAIN SELECT 1", &never).unwrap();
        assert!(plan["rows"].to_string().contains("logical_plan"), "{plan}");
        for (sql, what) in [
            ("CREATE TABLE y AS SELECT 1", "CREATE TABLE"),
            ("SET datafusion.execution.batch_size = 1", "SET VARIABLE"),
            ("COPY (SELECT 1) TO '/nonexistent/x.csv'", "COPY"),
        ] {
            let outcome = run(&ctx, sql, &never);
            let Err(Unanswered::Failed(e)) = outcome else { panic!("{sql} was not refused: {outcome:?}") };
            assert!(e.to_string().contains(&format!("the SQL box only reads: {what} is refused")), "{e}");
        }
        let rows = run(&ctx, "SELECT * FROM generate_series(1, 12345)", &never).unwrap();
        assert_eq!((rows["rows"].as_array().unwrap().len(), &rows["more"]), (ROWS, &json!(true)));
    }

    #[test]
    fn back_to_back_queries_never_meet_the_limit_of_their_own_places() {
        // Each answered query has given its place back by the time its answer arrives, so more
        // than AT_ONCE queries one after another never read "queries are running". This test
        // takes no place of its own for long, so other tests running beside it cannot starve it
        // unless they hold all AT_ONCE places (none does).
        let ctx = SessionContext::new();
        for i in 0..(4 * AT_ONCE) {
            let outcome = run(&ctx, &format!("SELECT {i} AS n"), &|| false);
            assert!(outcome.is_ok(), "query {i}: {outcome:?}");
        }
    }

    #[test]
    fn heavy_queries_are_stopped_at_the_memory_bounds_in_words() {
        let ctx = SessionContext::new();
        prepare(&ctx);
        let memory = |sql: &str| match run(&ctx, sql, &|| false) {
            Err(Unanswered::Limit(why)) => why,
            other => panic!("{sql}: not stopped at a bound: {other:?}"),
        };
        // The query: a value of 200,000 bytes in every row, ordered, one row kept.
        let why = memory(
            "SELECT v FROM (SELECT repeat('x', 200000) AS s, v FROM generate_series(1, 60000) t(v)) ORDER BY s, v LIMIT 1",
        );
        assert!(why.contains("memory") && why.contains("repeat()"), "{why}");
        // A sort of 3.6 GB: held by the sort, counted, stopped.
        let why = memory("SELECT repeat('x', 60000) || v AS s FROM generate_series(1, 60000) t(v) ORDER BY s");
        assert!(why.contains("256 MiB a query"), "{why}");
        // Under the bounds the same shape answers: TopK keeps one row, each batch counted.
        let out = run(&ctx, "SELECT v FROM (SELECT repeat('x', 20000) || v AS s, v FROM generate_series(1, 20000) t(v)) ORDER BY s LIMIT 1", &|| false)
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(out["rows"][0]["v"], 1);
        // The answer: at most MAX_ANSWER bytes of values.
        let out = run(&ctx, "SELECT repeat('y', 60000) AS s FROM generate_series(1, 4000)", &|| false).unwrap();
        assert!(
            out["more"] == true && out["rows"].as_array().unwrap().len() < 4000,
            "{}",
            out["rows"].as_array().unwrap().len()
        );
        let long = format!("SELECT '{}'", "z".repeat(MAX_SQL));
        assert!(matches!(run(&ctx, &long, &|| false), Err(Unanswered::Limit(_))));
    }

    #[test]
    fn a_stop_is_heard_however_the_query_loops() {
        // A cross join counted: one probe batch makes a batch per build row without asking its
        // input again. Unwrapped, the query held its thread to the end (tens of seconds at the
        // SQL box's sizes), and a stop beside it waited; wrapped, the stop is heard first.
        let ctx = SessionContext::new();
        let sql = "SELECT count(*) FROM generate_series(1, 3000) a CROSS JOIN generate_series(1, 3000) b";
        let answered = block_on(async {
            tokio::select! {
                biased;
                out = read(&ctx, sql) => Some(out),
                () = async { for _ in 0..3 { tokio::task::yield_now().await } } => None,
            }
        });
        assert!(answered.is_none(), "the query ran to its end before a stop was heard: {answered:?}");
    }

    #[test]
    fn a_query_whose_page_went_away_is_stopped() {
        let ctx = SessionContext::new();
        let sql = "SELECT count(*) FROM generate_series(1, 200000) a CROSS JOIN generate_series(1, 200000) b";
        assert!(matches!(run(&ctx, sql, &|| true), Err(Unanswered::Gone)));
    }
}
