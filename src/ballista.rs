//! Ballista for SQL over many runs (cargo feature `ballista`, off by default: it builds
//! DataFusion with its default features plus tonic, prost, arrow-flight and axum). lucid's SQL
//! functions (Wilson, bootstrap, OLS, theory) travel in plans by name, so the scheduler (which
//! plans) and every executor (which runs) must know them: the stock Ballista binaries cannot, so
//! `lucid ballista scheduler|executor` start Ballista's own scheduler and executor with lucid's
//! function registry, and `lucid query --engine ballista` plans against them (`--ballista
//! df://host:port`) or against an in-process standalone cluster.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::utils::default_session_builder;
use datafusion::execution::{FunctionRegistry, SessionState, SessionStateBuilder};
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::error::{Error, Result};

fn err(what: &str) -> impl FnOnce(String) -> Error + '_ {
    move |e| Error::query_from(format!("ballista {what}"), e)
}

/// lucid's own SQL functions: those [`crate::analysis::udf::register`] adds to a plain session.
fn lucid_functions() -> (Vec<Arc<ScalarUDF>>, Vec<Arc<AggregateUDF>>) {
    fn added<T>(ours: &HashMap<String, Arc<T>>, plain: &HashMap<String, Arc<T>>) -> Vec<Arc<T>> {
        ours.iter().filter(|(n, _)| !plain.contains_key(*n)).map(|(_, f)| f.clone()).collect()
    }
    let plain = SessionContext::new().state();
    let ours = crate::session::new().state();
    (
        added(ours.scalar_functions(), plain.scalar_functions()),
        added(ours.aggregate_functions(), plain.aggregate_functions()),
    )
}

/// Add lucid's functions to `state` (appending: Ballista's own stay).
fn with_lucid_functions(mut state: SessionState) -> datafusion::common::Result<SessionState> {
    let (scalar, aggregate) = lucid_functions();
    for f in scalar {
        state.register_udf(f)?;
    }
    for f in aggregate {
        state.register_udaf(f)?;
    }
    Ok(state)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::environment_from("cannot start a tokio runtime", e))
}

/// Run a Ballista scheduler on `bind` whose sessions know lucid's functions, until killed.
pub fn scheduler(bind: SocketAddr) -> Result<()> {
    use ballista_scheduler::cluster::BallistaCluster;
    use ballista_scheduler::config::SchedulerConfig;
    let builder: ballista_scheduler::SessionBuilder =
        Arc::new(|cfg: SessionConfig| with_lucid_functions(default_session_builder(cfg)?));
    let config = SchedulerConfig {
        bind_host: bind.ip().to_string(),
        external_host: bind.ip().to_string(),
        bind_port: bind.port(),
        override_session_builder: Some(builder),
        ..Default::default()
    };
    runtime()?.block_on(async {
        let cluster = BallistaCluster::new_from_config(&config).await.map_err(|e| err("scheduler")(e.to_string()))?;
        ballista_scheduler::scheduler_process::start_server(cluster, bind, Arc::new(config))
            .await
            .map_err(|e| err("scheduler")(e.to_string()))
    })
}

/// Where an executor listens and which scheduler it serves.
#[derive(Clone, Debug)]
pub struct ExecutorPlace {
    /// The scheduler, `host:port`.
    pub scheduler: SocketAddr,
    /// The address it binds and advertises.
    pub host: String,
    /// Arrow Flight port (results).
    pub port: u16,
    /// gRPC port (tasks pushed by the scheduler).
    pub grpc_port: u16,
    /// Shuffle files.
    pub work_dir: Option<String>,
    /// Concurrent tasks.
    pub vcores: usize,
}

/// Run a Ballista executor with lucid's function registry, until the scheduler stops it.
pub fn executor(place: &ExecutorPlace) -> Result<()> {
    use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
    let state = default_session_builder(SessionConfig::new_with_ballista())
        .and_then(with_lucid_functions)
        .map_err(|e| err("executor")(e.to_string()))?;
    let config = ExecutorProcessConfig {
        bind_host: place.host.clone(),
        external_host: Some(place.host.clone()),
        port: place.port,
        grpc_port: place.grpc_port,
        scheduler_host: place.scheduler.ip().to_string(),
        scheduler_port: place.scheduler.port(),
        scheduler_connect_timeout_seconds: 30,
        vcores: place.vcores.max(1),
        work_dir: place.work_dir.clone(),
        override_function_registry: Some(Arc::new(BallistaFunctionRegistry::from(&state))),
        ..Default::default()
    };
    runtime()?.block_on(start_executor_process(Arc::new(config))).map_err(|e| err("executor")(e.to_string()))
}

/// A client session that runs its SQL on Ballista: the cluster at `url` (`df://host:port`), or
/// an in-process standalone scheduler and executor when None; lucid's functions registered.
pub async fn context(url: Option<&str>) -> Result<SessionContext> {
    let state =
        SessionStateBuilder::new().with_config(SessionConfig::new_with_ballista()).with_default_features().build();
    let ctx = match url {
        Some(url) => SessionContext::remote_with_state(url, state).await,
        None => {
            let state = with_lucid_functions(state).map_err(|e| err("standalone")(e.to_string()))?;
            SessionContext::standalone_with_state(state).await
        }
    }
    .map_err(|e| err(url.unwrap_or("standalone"))(e.to_string()))?;
    // After the context exists: Ballista replaces the state's scalar functions when it sets up.
    crate::analysis::udf::register(&ctx);
    Ok(ctx)
}
