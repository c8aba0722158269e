//! Durable progress for long stages: work is cut into fixed chunks, each written as its own
//! Parquet part(s) (temp file + rename) in the instance's work folder. A run killed at any point
//! resumes at the first chunk with a missing part, and the output is the parts in order: no lost
//! and no duplicated row, identical to an uninterrupted run when each chunk is deterministic.

use std::ops::Range;

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
    let mut parts: Vec<Vec<RecordBatch>> = Vec::new();
    let mut start = 0;
    let mut index = 0;
    while start < total {
        let end = (start + chunk).min(total);
        let paths: Vec<_> = names.iter().map(|n| ctx.work_dir.join(format!("part-{index:06}.{n}.parquet"))).collect();
        let part = if paths.iter().all(|p| p.is_file()) {
            paths.iter().map(|p| read_parquet(p)).collect::<Result<Vec<_>>>()?
        } else {
            let part = f(start..end, &parts)?;
            assert_eq!(part.len(), names.len(), "one batch per named table");
            for (p, b) in paths.iter().zip(&part) {
                write_parquet(p, b)?;
            }
            part
        };
        ctx.progress.advance((end - start) as u64);
        parts.push(part);
        start = end;
        index += 1;
    }
    Ok(parts)
}
