//! `kind: benchmark` — loads a benchmark and writes `tasks` (what the agent may see) and `gold`
//! (reference SQL, for evaluation only).

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::datasets::factual::FactBench;
use crate::datasets::{self, Benchmark};
use crate::error::{Error, Result};
use crate::fingerprint::file_fingerprint;
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Where the benchmark comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The bundled mini benchmark (`data/mini`).
    #[default]
    Bundled,
    /// A BIRD-layout folder (`path`, with `<split>.json` and `<split>_databases/`).
    Bird,
    /// A Spider-layout folder (`path`, with `questions` and `database/`).
    Spider,
    /// Factual QA: the bundled offline set, built from pinned PyPI data packages (`lucid models
    /// fetch facts`).
    Facts,
    /// Factual QA: a JSON Lines file (`path`) of `{id, question, answer, aliases?, topic?, answer_type?}`.
    Jsonl,
    /// Factual QA: a SimpleQA-layout CSV file (`path`: `metadata,problem,answer`).
    Simpleqa,
}

impl Source {
    /// Whether the source is factual QA (else text-to-SQL).
    fn factual(self) -> bool {
        matches!(self, Source::Facts | Source::Jsonl | Source::Simpleqa)
    }
}

/// Config of the benchmark stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkStage {
    /// bundled (default) | bird | spider (text-to-SQL); facts | jsonl | simpleqa (factual QA).
    #[serde(default)]
    pub source: Source,
    /// Folder of a bird/spider benchmark (relative to where `lucid run` runs).
    #[serde(default)]
    pub path: Option<String>,
    /// BIRD split name (`dev` reads `dev.json` and `dev_databases/`).
    #[serde(default = "default_split")]
    pub split: String,
    /// Spider question file.
    #[serde(default = "default_questions")]
    pub questions: String,
    /// Keep only the first N questions (a quick subset).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Keep only the first N questions of each database (a subset that covers every database).
    #[serde(default)]
    pub per_db: Option<usize>,
    /// Factual sources: keep only the first N questions of each topic.
    #[serde(default)]
    pub per_topic: Option<usize>,
}

fn default_split() -> String {
    "dev".into()
}

fn default_questions() -> String {
    "dev.json".into()
}

impl BenchmarkStage {
    /// `path`, resolved against the run's folder; an error for a source that needs it.
    fn source_path(&self, ctx: &StageContext) -> Result<std::path::PathBuf> {
        self.path
            .as_deref()
            .map(|p| ctx.resolve(p))
            .ok_or_else(|| Error::stage(&ctx.stage_id, format!("source {:?} needs `path`", self.source)))
    }

    /// The factual benchmark this stage names (`source` facts, jsonl or simpleqa).
    fn load_facts(&self, ctx: &StageContext) -> Result<FactBench> {
        use crate::datasets::factual;
        if self.per_db.is_some() {
            return Err(Error::stage(&ctx.stage_id, "per_db applies to text-to-SQL sources; use per_topic"));
        }
        let mut b = match self.source {
            Source::Jsonl => factual::jsonl::load(&self.source_path(ctx)?)?,
            Source::Simpleqa => factual::simpleqa::load(&self.source_path(ctx)?)?,
            _ => factual::bundled::build(&facts_dir(ctx))?,
        };
        if let Some(n) = self.per_topic {
            b.per_topic(n);
        }
        if let Some(n) = self.limit {
            b.truncate(n);
        }
        Ok(b)
    }

    fn load(&self, ctx: &StageContext) -> Result<Benchmark> {
        if self.per_topic.is_some() {
            return Err(Error::stage(&ctx.stage_id, "per_topic applies to factual sources; use per_db"));
        }
        let mut b = match self.source {
            Source::Bundled => {
                let src = self.path.as_deref().map_or_else(datasets::bundled::default_dir, |p| ctx.resolve(p));
                datasets::bundled::load(&src, &ctx.cache_dir)?
            }
            Source::Bird => datasets::bird::load(&self.source_path(ctx)?, &self.split)?,
            Source::Spider => datasets::spider::load(&self.source_path(ctx)?, &self.questions)?,
            Source::Facts | Source::Jsonl | Source::Simpleqa => unreachable!("factual sources load as facts"),
        };
        if let Some(n) = self.per_db {
            let mut seen: BTreeMap<String, usize> = BTreeMap::new();
            b.tasks.retain(|t| {
                let c = seen.entry(t.db_id.clone()).or_default();
                *c += 1;
                *c <= n
            });
            let kept: std::collections::HashSet<i64> = b.tasks.iter().map(|t| t.question_id).collect();
            b.gold.retain(|g| kept.contains(&g.question_id));
        }
        if let Some(n) = self.limit {
            b.tasks.truncate(n);
            b.gold.truncate(n);
        }
        Ok(b)
    }

    fn source_files(&self, ctx: &StageContext) -> Vec<std::path::PathBuf> {
        match self.source {
            Source::Bundled => {
                let src = self.path.as_deref().map_or_else(datasets::bundled::default_dir, |p| ctx.resolve(p));
                let mut files = vec![src.join("questions.json")];
                if let Ok(rd) = std::fs::read_dir(src.join("databases")) {
                    let mut dbs: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                    dbs.sort();
                    files.extend(dbs);
                }
                files
            }
            Source::Bird => {
                let d = ctx.resolve(self.path.as_deref().unwrap_or("."));
                vec![d.join(format!("{}.json", self.split))]
            }
            Source::Spider => vec![ctx.resolve(self.path.as_deref().unwrap_or(".")).join(&self.questions)],
            Source::Jsonl | Source::Simpleqa => vec![ctx.resolve(self.path.as_deref().unwrap_or("."))],
            Source::Facts => Vec::new(),
        }
    }
}

impl BenchmarkStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "benchmark";
}

impl Stage for BenchmarkStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn limited(&self, n: usize) -> Option<std::sync::Arc<dyn Stage>> {
        Some(std::sync::Arc::new(BenchmarkStage { limit: Some(n), ..self.clone() }))
    }

    fn version(&self) -> u32 {
        // 2: `tasks.db_hash`.
        2
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &[]
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["tasks".into(), "gold".into()]
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    /// The question files by content; databases by path, size and modification time, which is
    /// enough to decide whether to look again: the output carries each database's content hash
    /// (`tasks.db_hash`, remembered on disk by path, size and time), so downstream stages rerun
    /// when a database's bytes change, and stay cached when only its time does.
    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        let mut fp = BTreeMap::new();
        for f in self.source_files(ctx) {
            fp.insert(f.to_string_lossy().into_owned(), file_fingerprint(&f)?);
        }
        if self.source == Source::Facts {
            fp.insert("facts(pinned wheels)".into(), crate::datasets::factual::wheels::pinned());
        }
        if !self.source.factual() && self.source != Source::Bundled {
            let b = self.load(ctx)?;
            let mut dbs: Vec<_> = b.tasks.iter().map(|t| t.db_path.clone()).collect();
            dbs.sort();
            dbs.dedup();
            let mut h = blake3::Hasher::new();
            for p in dbs {
                let m = std::fs::metadata(&p).map_err(|source| Error::Read { path: p.clone(), source })?;
                let mtime = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                h.update(format!("{}\0{}\0{:?}\n", p.display(), m.len(), mtime).as_bytes());
            }
            fp.insert("databases(path,size,mtime)".into(), h.finalize().to_hex().to_string());
        }
        Ok(fp)
    }

    fn run(&self, ctx: &StageContext, _: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        if self.source.factual() {
            let b = self.load_facts(ctx)?;
            ctx.progress.set_total(b.tasks.len() as u64);
            ctx.progress.advance(b.tasks.len() as u64);
            let (tasks, gold) = crate::datasets::factual::tables::batches(&b)?;
            return Ok(vec![("tasks".into(), tasks), ("gold".into(), gold)]);
        }
        let b = self.load(ctx)?;
        ctx.progress.set_total(b.tasks.len() as u64);
        ctx.progress.advance(b.tasks.len() as u64);
        Ok(vec![
            (
                "tasks".into(),
                datasets::tables::tasks_batch(&b.tasks, |p| crate::fingerprint::content_hash(p, &ctx.cache_dir))?,
            ),
            ("gold".into(), datasets::tables::gold_batch(&b.gold)?),
        ])
    }
}

/// Where the factual data packages are unpacked under the run's cache.
fn facts_dir(ctx: &StageContext) -> std::path::PathBuf {
    crate::model_files::model_path(&crate::model_files::models_dir(&ctx.cache_dir), "facts")
}
