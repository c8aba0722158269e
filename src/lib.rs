//! lucid: run, cache, rerun and audit experiments on self-improving LLM memory agents.
//!
//! The library behind the `lucid` binary: benchmark loaders, sandboxed SQL, BIRD-exact
//! execution accuracy, the memory agent, the pipeline runner and its stages.
//!
//! # Layers
//!
//! Lowest first. A module may use modules of its own layer and of the layers below it, never of
//! a layer above (`tests/architecture.rs` reads every `crate::` path in `src/` and fails on an
//! upward one):
//!
//! 0. foundations — `error`, `table`, `columns` (one definition per table column),
//!    `fingerprint`, `sqlite`, `rng`, `par`, `cache_dir`, `loopback` (the HTTP/1.1 of lucid's
//!    small local servers), `notices` (where library code's progress lines and warnings go)
//! 1. engines — `sql` (sandbox), `python` (the sandbox for model-written Python: CPython for
//!    WASI under wasmtime's fuel), `datasets` (benchmark loaders: BIRD, Spider, factual QA),
//!    `embed` (encoder, retrieval), `llm` (chat backends), `model_files` (offline model files:
//!    where they are, fetching them), `analysis` (statistics, closed-form theory, their SQL
//!    functions), `session` (DataFusion sessions over run tables, with those functions),
//!    `remote` (the shared run store on object storage: create-only objects, claims and leases),
//!    `ballista` (cargo feature: SQL on a Ballista cluster with lucid's functions)
//! 2. the domain seam — `seam` (what the loop asks of any domain: [`seam::Domain`],
//!    [`seam::Judge`], and the episode records and tables every domain shares), `eval` (BIRD-exact
//!    execution accuracy, the SQL engine's scorer)
//! 3. the agent-program box, the report and audits — `agent` (a user's agent program in its
//!    sandbox, and the loopback proxy of its model calls), `runs` (a run's tables as SQL: the paper's views,
//!    older runs upgraded), `report` (the paper's tables and plots of runs), `audit` (EIA and
//!    de-inflation payoff of any memory bank), `import` (other agents' banks in their tools' own
//!    layouts, as lucid's tables)
//! 4. `pipeline` — spec, plan, store, runner; it knows stages only through its `Stage` and
//!    `Registry` traits; `memory_loop` — the Memento-style loop in any [`seam::Judge`] domain
//!    (config, episode, retrieval, bank, arms, prompts, verdicts, the episode scheduler), below
//!    the registry that runs it in each
//! 5. `domains` — one folder per domain, each a [`domains::DomainKind`]: its data, options,
//!    sources, prompts' default, evaluation, channels after the fact; nothing outside its folder
//!    imports it. `domains::registry` is the one place a domain is named.
//! 6. `stages` — one file per stage kind and the registry of kinds
//! 7. the command line — `cli`, `commands` (one file per subcommand), `view` (the browser page
//!    over runs), `dispatch` (from arguments to a command and an exit code)

pub mod agent;
pub mod analysis;
pub mod audit;
#[cfg(feature = "ballista")]
pub mod ballista;
pub mod cache_dir;
pub mod cli;
pub mod columns;
mod commands;
pub mod datasets;
mod dispatch;
pub mod domains;
pub mod embed;
pub mod error;
pub mod eval;
pub mod fingerprint;
pub mod import;
pub mod llm;
pub mod loopback;
pub mod memory_loop;
pub mod model_files;
pub mod notices;
pub mod par;
pub mod pipeline;
pub mod python;
pub mod remote;
pub mod report;
pub mod rng;
pub mod runs;
pub mod seam;
pub mod session;
pub mod sql;
pub mod sqlite;
pub mod stages;
pub mod table;
pub mod view;

pub use dispatch::run;
pub use error::{Error, Result};
