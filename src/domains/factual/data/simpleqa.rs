//! SimpleQA's CSV layout: a header `metadata,problem,answer` (RFC 4180 quoting). `metadata` (the
//! source URLs, a Python dict literal) never reaches a table: only its `topic`, when present,
//! becomes the task's topic; every task's answer type is `text` (SimpleQA's own answer types do
//! not map onto the format channel's). Ids are the row numbers.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::datasets::qa::{FactBench, SourceRow};
use crate::error::{Error, Result};

/// Load a SimpleQA-layout CSV file.
pub fn load(path: &Path) -> Result<FactBench> {
    let file = std::fs::File::open(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let header = {
        use std::io::BufRead;
        let mut first = String::new();
        std::io::BufReader::new(std::fs::File::open(path).map_err(|source| Error::Read { path: path.into(), source })?)
            .read_line(&mut first)
            .map_err(|source| Error::Read { path: path.into(), source })?;
        first.trim_end().split(',').map(|s| s.trim_matches('"').to_string()).collect::<Vec<_>>()
    };
    for want in ["metadata", "problem", "answer"] {
        if !header.iter().any(|h| h == want) {
            return Err(Error::input(path, format!("row 1: no column '{want}' (header: {})", header.join(","))));
        }
    }
    let schema = Arc::new(Schema::new(header.iter().map(|h| Field::new(h, DataType::Utf8, true)).collect::<Vec<_>>()));
    let reader = arrow::csv::ReaderBuilder::new(schema)
        .with_header(true)
        .build(file)
        .map_err(|e| Error::input_from(path, "", e))?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| Error::input_from(path, "", e))?;
        let col = |n: &str| batch.column_by_name(n).expect("in the header").as_string::<i32>().clone();
        let (meta, problem, answer) = (col("metadata"), col("problem"), col("answer"));
        for i in 0..batch.num_rows() {
            let line = rows.len() + 2;
            let text =
                |a: &arrow::array::StringArray| if a.is_valid(i) { a.value(i).to_string() } else { String::new() };
            rows.push(SourceRow {
                line,
                id: (line - 2).to_string(),
                question: text(&problem),
                answer: text(&answer),
                aliases: Vec::new(),
                topic: topic(&text(&meta)),
                answer_type: None,
            });
        }
    }
    FactBench::from_rows(path, rows)
}

/// The `topic` of SimpleQA's metadata (`{'topic': 'Science and technology', ...}`), lower case
/// with spaces as underscores; nothing else of it is kept.
fn topic(meta: &str) -> Option<String> {
    let at = meta.find("'topic'")? + "'topic'".len();
    let rest = meta[at..].trim_start().strip_prefix(':')?.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let value = &rest[1..rest[1..].find(quote)? + 1];
    Some(value.trim().to_lowercase().replace(' ', "_"))
}
