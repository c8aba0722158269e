//! The text-to-SQL benchmark sources: the bundled mini benchmark (`data/mini`), a BIRD-layout
//! folder and a Spider-layout folder, with `per_db` (the first N questions of each database).

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::datasets::{self, Benchmark};
use crate::domains::{BenchmarkConfig, Source};
use crate::error::{Error, Result};
use crate::fingerprint::file_fingerprint;
use crate::pipeline::stage::StageContext;

/// The sources.
pub const SOURCES: &[Source] = &[
    Source {
        name: "bundled",
        doc: "the bundled mini benchmark (data/mini, or `path`: a folder in its layout)",
        options: &["path", "per_db"],
        needs_path: false,
    },
    Source {
        name: "bird",
        doc: "a BIRD-layout folder (`path`, with <split>.json and <split>_databases/)",
        options: &["path", "split", "per_db"],
        needs_path: true,
    },
    Source {
        name: "spider",
        doc: "a Spider-layout folder (`path`, with the `questions` file and database/)",
        options: &["path", "questions", "per_db"],
        needs_path: true,
    },
];

/// The text-to-SQL sources' own options.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SqlSourceOptions {
    /// BIRD split name (`dev` reads `dev.json` and `dev_databases/`).
    #[serde(default = "default_split")]
    pub split: String,
    /// Spider question file.
    #[serde(default = "default_questions")]
    pub questions: String,
    /// Keep only the first N questions of each database.
    #[serde(default)]
    pub per_db: Option<usize>,
}

impl Default for SqlSourceOptions {
    fn default() -> Self {
        SqlSourceOptions { split: default_split(), questions: default_questions(), per_db: None }
    }
}

fn default_split() -> String {
    "dev".into()
}
fn default_questions() -> String {
    "dev.json".into()
}

fn bundled_dir(b: &BenchmarkConfig, ctx: &StageContext) -> std::path::PathBuf {
    b.path.as_deref().map_or_else(datasets::bundled::default_dir, |p| ctx.resolve(p))
}

fn read(b: &BenchmarkConfig, o: &SqlSourceOptions, ctx: &StageContext) -> Result<Benchmark> {
    let mut bench = match b.source.as_str() {
        "bird" => datasets::bird::load(&b.source_path(ctx)?, &o.split)?,
        "spider" => datasets::spider::load(&b.source_path(ctx)?, &o.questions)?,
        _ => datasets::bundled::load(&bundled_dir(b, ctx), &ctx.cache_dir)?,
    };
    if let Some(n) = o.per_db {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        bench.tasks.retain(|t| {
            let c = seen.entry(t.db_id.clone()).or_default();
            *c += 1;
            *c <= n
        });
        let kept: std::collections::HashSet<i64> = bench.tasks.iter().map(|t| t.question_id).collect();
        bench.gold.retain(|g| kept.contains(&g.question_id));
    }
    if let Some(n) = b.limit {
        bench.tasks.truncate(n);
        bench.gold.truncate(n);
    }
    Ok(bench)
}

/// The `tasks` and `gold` tables.
pub fn load(b: &BenchmarkConfig, o: &SqlSourceOptions, ctx: &StageContext) -> Result<(RecordBatch, RecordBatch)> {
    let bench = read(b, o, ctx)?;
    ctx.progress.set_total(bench.tasks.len() as u64);
    ctx.progress.advance(bench.tasks.len() as u64);
    Ok((
        datasets::tables::tasks_batch(&bench.tasks, |p| crate::fingerprint::content_hash(p, &ctx.cache_dir))?,
        datasets::tables::gold_batch(&bench.gold)?,
    ))
}

/// The question files by content; databases by path, size and modification time, which is
/// enough to decide whether to look again: the output carries each database's content hash
/// (`tasks.db_hash`, remembered on disk by path, size and time), so downstream stages rerun
/// when a database's bytes change, and stay cached when only its time does.
pub fn fingerprint(b: &BenchmarkConfig, o: &SqlSourceOptions, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
    let files = match b.source.as_str() {
        "bird" => vec![ctx.resolve(b.path.as_deref().unwrap_or(".")).join(format!("{}.json", o.split))],
        "spider" => vec![ctx.resolve(b.path.as_deref().unwrap_or(".")).join(&o.questions)],
        _ => {
            let src = bundled_dir(b, ctx);
            let mut files = vec![src.join("questions.json")];
            if let Ok(rd) = std::fs::read_dir(src.join("databases")) {
                let mut dbs: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                dbs.sort();
                files.extend(dbs);
            }
            files
        }
    };
    let mut fp = BTreeMap::new();
    for f in files {
        fp.insert(f.to_string_lossy().into_owned(), file_fingerprint(&f)?);
    }
    if b.source != "bundled" {
        let bench = read(b, o, ctx)?;
        let mut dbs: Vec<_> = bench.tasks.iter().map(|t| t.db_path.clone()).collect();
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
