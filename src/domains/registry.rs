//! The registry of domain kinds: the one place a domain is named. Each entry is a [`DomainKind`] seen
//! through plain functions, so every stage asks the registry and none matches on a domain's name
//! or imports a domain's folder. lucid's binary registers text-to-SQL, factual QA and code; a domain
//! written elsewhere (a test, a program built on the library) adds one line, [`register`].

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{LazyLock, Mutex, PoisonError};

use arrow::array::RecordBatch;
use serde_json::{Map, Value};

use crate::datasets::wheels::DataPackage;
use crate::domains::code::CodeDomain;
use crate::domains::factual::FactualDomain;
use crate::domains::math::MathDomain;
use crate::domains::sql::SqlDomain;
use crate::domains::tools::ToolsDomain;
use crate::domains::tools::multiturn::MultiTurnDomain;
use crate::domains::{
    Agreement, BenchmarkConfig, DomainKind, Evaluate, Evidence, Source, TestRunner, typed_options as typed,
};
use crate::error::{Error, Invalid, Result};
use crate::memory_loop::MemoryLoopStage;
use crate::memory_loop::kinds::{KindsHandle, LoopKind, LoopKinds, Tables};
use crate::pipeline::stage::{Inputs, StageContext};

/// The domain of a memory loop whose `domain:` block names none, and of a `tasks` table without
/// a `domain` column (text-to-SQL tables written before domains said their name).
pub const DEFAULT: &str = "sql";

/// A domain's evidence corpus, if it has one.
type Corpus = Result<Option<Box<dyn Evidence>>>;
/// File fingerprints, for a cache key.
type Fingerprint = Result<BTreeMap<String, String>>;

/// A registered domain kind.
#[derive(Clone, Copy)]
pub struct Entry {
    /// Its name (`domain: {kind: ...}`, `tasks.domain`).
    pub name: &'static str,
    /// What it is.
    pub doc: &'static str,
    /// Its benchmark sources.
    pub sources: &'static [Source],
    /// Its channels, in order.
    pub channels: &'static [&'static str],
    /// The prompt variables its tasks give.
    pub variables: &'static [&'static str],
    /// Its artifact's name (a prompt variable and an `episodes` column).
    pub artifact: &'static str,
    /// Whether its prompts may leave out the planner.
    pub planner_optional: bool,
    /// The prompt folder of a loop whose config names none.
    pub prompts: &'static str,
    /// The evaluate stage's keys it reads.
    pub evaluate_options: &'static [&'static str],
    /// The options it also takes at the top of a memory_loop config (as pipelines written before
    /// domains did).
    pub top_level_options: &'static [&'static str],
    /// Its options with their defaults filled in (what enters a cache key), checked.
    pub options: fn(&Map<String, Value>) -> std::result::Result<Value, Invalid>,
    /// A flag stage's config with its defaults filled in, checked.
    pub flag_options: fn(&Map<String, Value>) -> std::result::Result<Value, Invalid>,
    /// Files the configured domain reads.
    pub fingerprint: fn(&Value, &StageContext) -> Fingerprint,
    /// The memory loop in this domain.
    pub run_loop: fn(&MemoryLoopStage, &Value, &StageContext, &Inputs) -> Tables,
    /// Its sources' own options with their defaults filled in, checked.
    pub source_options: fn(&Map<String, Value>) -> std::result::Result<Value, Invalid>,
    /// A benchmark of one of its sources.
    pub load: fn(&BenchmarkConfig, &StageContext) -> Result<(RecordBatch, RecordBatch)>,
    /// What that benchmark's key depends on.
    pub source_fingerprint: fn(&BenchmarkConfig, &StageContext) -> Fingerprint,
    /// The evaluation.
    pub evaluate: fn(&Evaluate<'_>, &StageContext, &Inputs) -> Result<RecordBatch>,
    /// What the evaluate stage's key depends on.
    pub evaluate_fingerprint: fn(&Map<String, Value>, &StageContext) -> Fingerprint,
    /// One evaluate option with its defaults filled in.
    pub evaluate_option: fn(&str, &Value) -> std::result::Result<Value, Invalid>,
    /// The detector after the fact.
    pub flags: fn(&Value, &StageContext, &Inputs) -> Result<RecordBatch>,
    /// Self-consistency's comparison of two artifacts.
    pub agreement: fn(&StageContext) -> Result<Agreement>,
    /// How tests a model wrote run against an artifact, if the domain can run tests.
    pub test_runner: fn(&StageContext) -> Result<Option<TestRunner>>,
    /// Whether it has an evidence corpus.
    pub has_evidence: bool,
    /// The offline data it reads.
    pub packages: &'static [DataPackage],
    /// Its folder under `src/domains/`.
    pub folder: &'static str,
    /// The folder under `schemas/` documenting its tables, and their column definitions.
    pub schemas: (&'static str, fn() -> Vec<Value>),
    /// One line on its offline data at work, when fetched.
    pub smoke: fn(&Path, &Path) -> Option<Result<String>>,
    /// Its evidence corpus under options, for the retrieval verifier.
    pub evidence: fn(&Value, &StageContext) -> Corpus,
}

/// `D` as an entry.
fn entry<D: DomainKind>() -> Entry {
    Entry {
        name: D::NAME,
        doc: D::DOC,
        sources: D::SOURCES,
        channels: D::CHANNELS,
        variables: D::VARIABLES,
        artifact: D::ARTIFACT,
        planner_optional: D::PLANNER_OPTIONAL,
        prompts: D::PROMPTS,
        evaluate_options: D::EVALUATE_OPTIONS,
        top_level_options: D::TOP_LEVEL_OPTIONS,
        options: |o| {
            let t: D::Options = typed(o)?;
            D::check(&t)?;
            serde_json::to_value(t).map_err(|e| Invalid(e.to_string()))
        },
        flag_options: |o| {
            let t: D::FlagOptions = typed(o)?;
            serde_json::to_value(t).map_err(|e| Invalid(e.to_string()))
        },
        fingerprint: |o, ctx| D::fingerprint(&options_of::<D::Options>(o, ctx)?, ctx),
        run_loop: |stage, o, ctx, inputs| {
            let domain = D::configure(options_of(o, ctx)?, ctx)?;
            stage.run_in(&domain, ctx, inputs)
        },
        source_options: |o| {
            let t: D::SourceOptions = typed(o)?;
            serde_json::to_value(t).map_err(|e| Invalid(e.to_string()))
        },
        load: |b, ctx| D::load(b, &b.source_options(ctx)?, ctx),
        source_fingerprint: |b, ctx| D::source_fingerprint(b, &b.source_options(ctx)?, ctx),
        evaluate: D::evaluate,
        evaluate_fingerprint: D::evaluate_fingerprint,
        evaluate_option: D::evaluate_option,
        flags: |o, ctx, inputs| D::flags(&options_of(o, ctx)?, ctx, inputs),
        agreement: D::agreement,
        test_runner: D::test_runner,
        has_evidence: D::EVIDENCE,
        packages: D::PACKAGES,
        folder: D::FOLDER,
        schemas: (D::SCHEMAS, D::tables),
        smoke: D::smoke,
        evidence: |o, ctx| D::evidence(options_of(o, ctx)?, ctx),
    }
}

/// Options already normalised by an entry, typed again.
fn options_of<T: serde::de::DeserializeOwned>(o: &Value, ctx: &StageContext) -> Result<T> {
    serde_json::from_value(o.clone()).map_err(|e| Error::stage(&ctx.stage_id, format!("domain options: {e}")))
}

static REGISTRY: LazyLock<Mutex<Vec<Entry>>> = LazyLock::new(|| {
    Mutex::new(vec![
        entry::<SqlDomain>(),
        entry::<FactualDomain>(),
        entry::<CodeDomain>(),
        entry::<MathDomain>(),
        entry::<ToolsDomain>(),
        entry::<MultiTurnDomain>(),
    ])
});

/// Register domain `D` (under its [`crate::seam::Domain::NAME`]): the one line a new domain
/// adds besides its own folder. Registering a name again replaces the entry.
pub fn register<D: DomainKind>() {
    let mut all = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    all.retain(|e| e.name != D::NAME);
    all.push(entry::<D>());
}

impl Entry {
    /// The kind as the memory loop's stage sees it.
    pub fn as_loop(&self) -> LoopKind {
        LoopKind {
            name: self.name,
            channels: self.channels,
            variables: self.variables,
            artifact: self.artifact,
            planner_optional: self.planner_optional,
            prompts: self.prompts,
            top_level_options: self.top_level_options,
            options: self.options,
            fingerprint: self.fingerprint,
            run_loop: self.run_loop,
            packages: self.packages,
        }
    }
}

/// The registered kinds, as a memory loop's stage is handed them.
struct Registered;

impl LoopKinds for Registered {
    fn all(&self) -> Vec<LoopKind> {
        all().iter().map(Entry::as_loop).collect()
    }
    fn default_kind(&self) -> &'static str {
        DEFAULT
    }
}

/// The registry, for a memory loop's stage (the stage registry hands it over when it reads one).
pub fn loop_kinds() -> KindsHandle {
    KindsHandle(Some(std::sync::Arc::new(Registered)))
}

/// Every registered kind, in registration order.
pub fn all() -> Vec<Entry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The kind named `name`.
pub fn get(name: &str) -> Option<Entry> {
    all().into_iter().find(|e| e.name == name)
}

/// The kind named `name`, or an error listing the registered ones.
pub fn kind(name: &str) -> std::result::Result<Entry, Invalid> {
    get(name).ok_or_else(|| Invalid(format!("unknown domain '{name}' (domains: {})", names().join(", "))))
}

/// The registered names.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|e| e.name).collect()
}

/// Every registered kind's offline data packages, in registration order, each once.
pub fn packages() -> Vec<DataPackage> {
    crate::datasets::wheels::each_with_needs(all().iter().flat_map(|e| e.packages).copied())
}

/// The kind with the benchmark source `source`, and the source.
pub fn source(source: &str) -> std::result::Result<(Entry, Source), Invalid> {
    all().into_iter().find_map(|e| e.sources.iter().find(|s| s.name == source).map(|s| (e, *s))).ok_or_else(|| {
        let known: Vec<String> =
            all().iter().flat_map(|e| e.sources.iter().map(move |s| format!("{} ({})", s.name, e.name))).collect();
        Invalid(format!("unknown source '{source}' (sources: {})", known.join(", ")))
    })
}

/// The kind of a `tasks` table: its `domain` column (the kind its loader wrote), else [`DEFAULT`]
/// (text-to-SQL tables written before domains said their name).
pub fn of_tasks(batch: &RecordBatch) -> std::result::Result<Entry, Invalid> {
    kind(&crate::table::domain_of(batch).unwrap_or_else(|| DEFAULT.to_string()))
}

/// Check a list of channel names against `entry`'s (`what` names the list in errors).
pub fn check_channels(entry: &Entry, names: &[String], what: &str) -> std::result::Result<(), Invalid> {
    crate::seam::check_channel_names(entry.name, entry.channels, names, what)
}

/// What `lucid domains` prints: every kind with its sources, channels, prompt variables and
/// options.
pub fn describe() -> String {
    let mut out = String::new();
    for e in all() {
        out.push_str(&format!("{}: {}\n", e.name, e.doc));
        for s in e.sources {
            let opts = if s.options.is_empty() { String::new() } else { format!(" [{}]", s.options.join(", ")) };
            out.push_str(&format!("  source {}{opts}: {}\n", s.name, s.doc));
        }
        out.push_str(&format!("  channels: {}\n", e.channels.join(", ")));
        out.push_str(&format!("  artifact: {}; prompt variables: {}\n", e.artifact, e.variables.join(", ")));
        if let Ok(Value::Object(defaults)) = (e.options)(&Map::new()) {
            let keys: Vec<&String> = defaults.keys().collect();
            let keys: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
            out.push_str(&format!("  options: {}\n", if keys.is_empty() { "none".into() } else { keys.join(", ") }));
        }
    }
    out
}
