//! Durable progress for long stages: work is cut into chunks, each written as its own Parquet
//! part(s) (temp file + rename) in the instance's work folder, named by the items it holds
//! (`part-<start>-<end>.<table>.parquet`, end exclusive). A run killed at any point resumes with
//! the parts on disk, whatever chunk size it resumes with: a part is reused exactly where its own
//! range starts, new chunks stop where the next finished part begins, so the output is every item
//! once, in order: no lost and no duplicated row, identical to an uninterrupted run when each
//! chunk is deterministic.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::RecordBatch;

use super::stage::StageContext;
use crate::error::Result;
use crate::table::{read_parquet, write_parquet};

/// Compute `0..total` in chunks of `chunk`, reusing parts already on disk. `f` gets the chunk's
/// range and the parts before it (for stages whose state carries over, such as a memory bank).
pub fn run_chunks(
    ctx: &StageContext,
    total: usize,
    chunk: usize,
    mut f: impl FnMut(Range<usize>, &[RecordBatch]) -> Result<RecordBatch>,
) -> Result<Vec<RecordBatch>> {
    let mut earlier: Vec<RecordBatch> = Vec::new();
    let parts = run_chunks_tables(ctx, total, chunk, &["rows"], |range, before| {
        earlier.clear();
        earlier.extend(before.iter().map(|p| p[0].clone()));
        Ok(vec![f(range, &earlier)?])
    })?;
    Ok(parts.into_iter().map(|mut p| p.remove(0)).collect())
}

/// [`run_chunks`] for chunks that produce several tables (`names`, in the order `f` returns
/// them). A chunk counts as done only when every one of its tables is on disk.
pub fn run_chunks_tables(
    ctx: &StageContext,
    total: usize,
    chunk: usize,
    names: &[&str],
    mut f: impl FnMut(Range<usize>, &[Vec<RecordBatch>]) -> Result<Vec<RecordBatch>>,
) -> Result<Vec<Vec<RecordBatch>>> {
    let chunk = chunk.max(1);
    ctx.progress.set_total(total as u64);
    let finished = finished_parts(&ctx.work_dir, names);
    let mut parts: Vec<Vec<RecordBatch>> = Vec::new();
    let mut start = 0;
    while start < total {
        let reuse = finished.get(&start).copied().filter(|&end| end > start && end <= total);
        let end = reuse.unwrap_or_else(|| {
            let next_part = finished.range(start + 1..).next().map_or(total, |(&s, _)| s);
            (start + chunk).min(total).min(next_part)
        });
        let paths: Vec<_> = names.iter().map(|n| ctx.work_dir.join(part_name(start, end, n))).collect();
        // A part listed at the start may be gone by now (another process running the same
        // instance finished it and cleared the work folder): then it is computed again.
        let reused = reuse.and_then(|_| paths.iter().map(|p| read_parquet(p)).collect::<Result<Vec<_>>>().ok());
        let part = if let Some(part) = reused {
            part
        } else {
            let part = f(start..end, &parts)?;
            save_part(ctx, start..end, names, &part);
            part
        };
        ctx.progress.advance((end - start) as u64);
        parts.push(part);
        start = end;
    }
    Ok(parts)
}

/// Write one finished part: the tables `names` of the items `range`. Another process finishing
/// the same instance clears the work folder; the part is then written again, and if that fails
/// too only resumability is lost (the rows are in memory, and the other process stored the
/// instance's output).
pub fn save_part(ctx: &StageContext, range: Range<usize>, names: &[&str], part: &[RecordBatch]) {
    assert_eq!(part.len(), names.len(), "one batch per named table");
    for (n, b) in names.iter().zip(part) {
        let p = ctx.work_dir.join(part_name(range.start, range.end, n));
        match write_parquet(&p, b).or_else(|_| write_parquet(&p, b)) {
            Ok(()) => super::shared::part_saved(&ctx.work_dir, &p),
            Err(e) => ctx.progress.warn(&format!("checkpoint not saved ({e}); a kill now would redo these items")),
        }
    }
    kill_point();
}

/// The test hook behind deterministic kill tests: with `LUCID_TEST_KILL_AFTER_PARTS=N` in the
/// environment, the process exits at once with status 137 (as after `kill -9`: no cleanup, no
/// stage output stored) right after saving its N-th checkpoint part, so a test stops a run at a
/// known point of its work instead of after a measured delay. Unset (outside tests), it does
/// nothing.
fn kill_point() {
    static SAVED: AtomicUsize = AtomicUsize::new(0);
    static LIMIT: OnceLock<Option<usize>> = OnceLock::new();
    let limit = LIMIT.get_or_init(|| std::env::var(KILL_AFTER_PARTS).ok().and_then(|v| v.trim().parse().ok()));
    if limit.is_some_and(|n| SAVED.fetch_add(1, Ordering::SeqCst) + 1 >= n) {
        std::process::exit(137);
    }
}

/// The environment variable of [`kill_point`].
pub const KILL_AFTER_PARTS: &str = "LUCID_TEST_KILL_AFTER_PARTS";

/// The finished parts on disk within `0..total` that do not overlap (by start; of two that
/// overlap the earlier-starting one is kept), with their tables; a part that cannot be read
/// is left out (its items are computed again).
pub fn load_parts(ctx: &StageContext, total: usize, names: &[&str]) -> Vec<(Range<usize>, Vec<RecordBatch>)> {
    let mut out = Vec::new();
    let mut covered = 0;
    for (start, end) in finished_parts(&ctx.work_dir, names) {
        if start < covered || end > total || end <= start {
            continue;
        }
        let paths = names.iter().map(|n| ctx.work_dir.join(part_name(start, end, n)));
        if let Ok(part) = paths.map(|p| read_parquet(&p)).collect::<Result<Vec<_>>>() {
            out.push((start..end, part));
            covered = end;
        }
    }
    out
}

/// The file of one chunk's table.
fn part_name(start: usize, end: usize, table: &str) -> String {
    format!("part-{start:09}-{end:09}.{table}.parquet")
}

/// Finished chunks in `dir` (every table of `names` on disk), start -> end.
fn finished_parts(dir: &Path, names: &[&str]) -> BTreeMap<usize, usize> {
    let Ok(entries) = std::fs::read_dir(dir) else { return BTreeMap::new() };
    let mut found: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("part-")) else { continue };
        let Some((range, table)) = rest.strip_suffix(".parquet").and_then(|r| r.split_once('.')) else { continue };
        let Some((s, t)) = range.split_once('-') else { continue };
        if let (Ok(s), Ok(t), true) = (s.parse(), t.parse(), names.contains(&table)) {
            *found.entry((s, t)).or_default() += 1;
        }
    }
    let mut out = BTreeMap::new();
    for ((s, t), n) in found {
        // Two finished ranges with one start (never written by one run) resolve to the longer.
        if n == names.len() {
            out.insert(s, t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Array, UInt64Array};

    use super::*;
    use crate::error::Error;
    use crate::pipeline::progress::Progress;

    fn ctx(dir: &Path) -> StageContext {
        StageContext {
            stage_id: "t".into(),
            label: "all".into(),
            matrix: BTreeMap::new(),
            work_dir: dir.into(),
            cache_dir: dir.into(),
            base_dir: dir.into(),
            progress: Progress::hidden(),
            shared_responses: None,
        }
    }

    fn rows(range: Range<usize>) -> RecordBatch {
        let steps = UInt64Array::from_iter_values(range.map(|s| s as u64));
        RecordBatch::try_from_iter(vec![("step", Arc::new(steps) as Arc<dyn Array>)]).unwrap()
    }

    /// Run `total` items in chunks of `chunk`, "killed" (an error) once `kill_after` chunks ran.
    fn run(dir: &Path, total: usize, chunk: usize, kill_after: usize) -> Result<Vec<u64>> {
        let mut ran = 0;
        let parts = run_chunks(&ctx(dir), total, chunk, |range, before| {
            assert_eq!(before.iter().map(RecordBatch::num_rows).sum::<usize>(), range.start, "earlier parts");
            if ran == kill_after {
                return Err(Error::stage("t", "killed"));
            }
            ran += 1;
            Ok(rows(range))
        })?;
        Ok(parts
            .iter()
            .flat_map(|b| b.column(0).as_any().downcast_ref::<UInt64Array>().unwrap().values().to_vec())
            .collect())
    }

    #[test]
    fn resume_with_another_chunk_size_loses_and_duplicates_nothing() {
        let all: Vec<u64> = (0..200).collect();
        for (first, kill_after, then) in [(16, 3, 7), (7, 5, 16), (16, 1, 16), (5, 9, 3), (3, 20, 64)] {
            let dir = tempfile::tempdir().unwrap();
            assert!(run(dir.path(), 200, first, kill_after).is_err());
            // A second kill with a third chunk size, then a resume with yet another.
            assert!(run(dir.path(), 200, first + then, 2).is_err());
            assert_eq!(run(dir.path(), 200, then, usize::MAX).unwrap(), all, "{first} -> {then}");
            // Everything is on disk now: a rerun reads it back whatever the chunk size.
            assert_eq!(run(dir.path(), 200, 11, 0).unwrap(), all);
        }
    }
}
