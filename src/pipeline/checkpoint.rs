//! Durable progress for long stages: work is cut into fixed chunks, each written as its own
//! Parquet part (temp file + rename) in the instance's work folder. A run killed at any point
//! resumes at the first missing part, and the output is the parts in order: no lost and no
//! duplicated row, identical to an uninterrupted run when each chunk is deterministic.

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
    let chunk = chunk.max(1);
    ctx.progress.set_total(total as u64);
    let mut parts: Vec<RecordBatch> = Vec::new();
    let mut start = 0;
    let mut index = 0;
    while start < total {
        let end = (start + chunk).min(total);
        let path = ctx.work_dir.join(format!("part-{index:06}.parquet"));
        let part = if path.is_file() {
            read_parquet(&path)?
        } else {
            let part = f(start..end, &parts)?;
            write_parquet(&path, &part)?;
            part
        };
        ctx.progress.advance((end - start) as u64);
        parts.push(part);
        start = end;
        index += 1;
    }
    Ok(parts)
}
