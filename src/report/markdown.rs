//! The report as Markdown: one section per table, the paper's figure quoted above it.

use std::fmt::Write;

use arrow::array::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};

use super::Report;
use crate::error::Result;

/// Every cell of `batch` as display text (NULL as empty), row by row, with the header first.
pub fn cells(batch: &RecordBatch) -> Result<Vec<Vec<String>>> {
    let opts = FormatOptions::new().with_null("");
    let fmts =
        batch.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), &opts)).collect::<Result<Vec<_>, _>>()?;
    let mut rows = vec![batch.schema().fields().iter().map(|f| f.name().clone()).collect()];
    for i in 0..batch.num_rows() {
        rows.push(fmts.iter().map(|f| f.value(i).to_string()).collect());
    }
    Ok(rows)
}

/// A Markdown table of cell texts (the first row is the header).
pub fn table(rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    for (i, row) in rows.iter().enumerate() {
        let _ = writeln!(s, "| {} |", row.iter().map(|c| c.replace('|', "\\|")).collect::<Vec<_>>().join(" | "));
        if i == 0 {
            let _ = writeln!(s, "|{}", "---|".repeat(row.len()));
        }
    }
    s
}

/// `report.md`.
pub fn render(report: &Report) -> Result<String> {
    let mut s = String::new();
    let _ = writeln!(s, "# lucid report: {}\n", report.runs.join(", "));
    let _ = writeln!(
        s,
        "Every table is a SQL file in `pipelines/reports/paper/` (rerun one with `lucid query RUN FILE`), except \
         `k_sweep`, computed from the stored embeddings. Intervals are 95 %: Wilson for proportions, a seeded \
         bootstrap (2,000 resamples) for differences and fits. Rows with an empty `seed` pool the seeds, and their \
         intervals count a question once, its episodes under every seed one cluster (Wilson at the effective \
         sample size; questions resampled whole).\n"
    );
    for t in &report.tables {
        let _ = writeln!(s, "## {}\n\n> Paper: {}\n", t.spec.name, t.spec.paper);
        let Some(batch) = &t.batch else {
            let _ = writeln!(s, "_Not computed: the runs lack {}._\n", t.spec.needs.join(" / "));
            continue;
        };
        s.push_str(&table(&cells(batch)?));
        if batch.num_rows() == 0 {
            let _ = writeln!(
                s,
                "\n_No rows: nothing in these runs feeds this table (it needs episodes that were shown retrieved \
                 memories, with their truth; an imported bank records no retrievals, a no-memory arm shows none)._"
            );
        }
        s.push('\n');
    }
    Ok(s)
}
