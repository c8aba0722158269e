//! Reading a bank: a file (`.parquet`, `.csv`, `.jsonl`) or an agent run's own bank (see
//! `super::run_bank`) becomes one record batch, and the batch becomes one [`AuditBank`] here.
//! Errors name the file, the column and the row.

use std::path::Path;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type};

use super::bank::AuditBank;
use crate::error::{Error, Result};

/// Which columns of a bank mean what.
#[derive(Clone, Debug)]
pub struct Columns {
    /// Verifier columns (empty: every column named `v_<name>`).
    pub verifiers: Vec<String>,
    /// The judges the ensembles and the gold-fit combine (None: every verifier of a bank file;
    /// for a run's bank, its verifier stages' judges, without the detector's channels, the
    /// detector and panels).
    pub ensemble: Option<Vec<String>>,
    /// The fold column (used when present).
    pub seed: String,
    /// The self-consistency column (used when present).
    pub sc: String,
    /// The reuse-count column (used when present).
    pub n: String,
    /// Whether the self-grade parsed (boolean or 0/1; used when present; absent: all graded).
    pub graded: String,
    /// Whether U is read (false for the hand-label audit, whose truth is the labels: `u` may be
    /// absent or empty, and reads as NaN).
    pub truth: bool,
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            verifiers: Vec::new(),
            ensemble: None,
            seed: "seed".into(),
            sc: "sc".into(),
            n: "n".into(),
            graded: "graded".into(),
            truth: true,
        }
    }
}

/// The column naming each memory's question, used when the bank has it (an agent run's bank
/// does: `bank.sql`'s `question_id`): the same question under several seeds is one cluster of the
/// grader's Wilson intervals and of the payoff's bootstrap, as the report's pooled rows cluster
/// it. Without it every memory is its own cluster.
pub const QUESTION: &str = "question_id";

/// A bank file as one batch.
pub(super) fn read_file(path: &Path) -> Result<RecordBatch> {
    crate::session::block_on(async {
        let ctx = crate::session::new();
        let loc = path.display().to_string();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let registered = match ext {
            "parquet" => ctx.register_parquet("bank", &loc, Default::default()).await,
            "csv" => return read_csv(path, true),
            "jsonl" | "json" | "ndjson" => {
                let dotted = format!(".{ext}");
                let opts = datafusion::datasource::file_format::options::JsonReadOptions {
                    file_extension: &dotted,
                    ..Default::default()
                };
                ctx.register_json("bank", &loc, opts).await
            }
            _ => {
                return Err(Error::input(path, "a bank is a .parquet, .csv or .jsonl file, or an agent run folder"));
            }
        };
        registered.map_err(|e| Error::input_from(path, "", e))?;
        crate::session::collect(&ctx, "SELECT * FROM bank").await.map_err(|e| Error::input_from(path, "", e))
    })
}

/// The CSV at `path` as one batch, read by arrow's reader (quoted fields may hold commas,
/// quotes and line ends, rows may end in CRLF: a bank or a labelling sheet saved by a
/// spreadsheet reads as written); `infer`: column types inferred from the first 1,000 rows, else
/// every column text.
pub(super) fn read_csv(path: &Path, infer: bool) -> Result<RecordBatch> {
    use arrow::csv::reader::Format;
    let open = || std::fs::File::open(path).map_err(|e| Error::input(path, e.to_string()));
    let bad = |e: arrow::error::ArrowError| Error::input(path, e.to_string());
    let (inferred, _) = Format::default().with_header(true).infer_schema(open()?, Some(1000)).map_err(bad)?;
    let schema = if infer {
        std::sync::Arc::new(inferred)
    } else {
        let text = inferred.fields().iter().map(|f| arrow::datatypes::Field::new(f.name(), DataType::Utf8, true));
        std::sync::Arc::new(arrow::datatypes::Schema::new(text.collect::<Vec<_>>()))
    };
    let reader = arrow::csv::ReaderBuilder::new(schema.clone()).with_header(true).build(open()?).map_err(bad)?;
    let batches = reader.collect::<std::result::Result<Vec<_>, _>>().map_err(bad)?;
    Ok(arrow::compute::concat_batches(&schema, &batches)?)
}

/// Column `name` of `batch` as numbers, a null (and, with `gaps`, only then) read as NaN.
fn numbers(path: &Path, batch: &RecordBatch, name: &str, gaps: bool) -> Result<Vec<f64>> {
    let c = batch.column_by_name(name).ok_or_else(|| {
        let have: Vec<String> = batch.schema().fields().iter().map(|f| f.name().clone()).collect();
        Error::input(path, format!("no column '{name}' (columns: {})", have.join(", ")))
    })?;
    let cast = arrow::compute::cast(c, &DataType::Float64)
        .map_err(|_| Error::input(path, format!("column '{name}' is not numeric ({})", c.data_type())))?;
    let x = cast.as_primitive::<Float64Type>();
    // An empty cell (null in the file) may be a gap; a cell that is there but no number never is.
    (0..x.len())
        .map(|i| match (c.is_valid(i), x.is_valid(i) && x.value(i).is_finite()) {
            (false, _) if gaps => Ok(f64::NAN),
            (true, true) => Ok(x.value(i)),
            _ => Err(Error::input(path, format!("row {i}: column '{name}' has no number"))),
        })
        .collect()
}

/// Column `name` of `batch` as cluster ids: equal values (of any type) share one id, ids in order
/// of first appearance; a memory without a value (null) is a cluster of its own.
fn clusters(path: &Path, batch: &RecordBatch, name: &str) -> Result<Option<Vec<usize>>> {
    let Some(c) = batch.column_by_name(name) else { return Ok(None) };
    let text = arrow::compute::cast(c, &DataType::Utf8)
        .map_err(|_| Error::input(path, format!("column '{name}' is not a question key ({})", c.data_type())))?;
    let text = text.as_string::<i32>();
    let mut ids: std::collections::HashMap<&str, usize> = Default::default();
    let (mut out, mut next) = (Vec::with_capacity(text.len()), 0);
    for value in text.iter() {
        let id = match value {
            Some(v) => *ids.entry(v).or_insert(next),
            None => next,
        };
        next += usize::from(id == next);
        out.push(id);
    }
    Ok(Some(out))
}

/// The bank in `batch` (read from `path`, which errors name); `judges`: the default members of
/// the ensembles when `cols` names none (None: every verifier).
pub fn bank_from_batch(
    path: &Path,
    batch: &RecordBatch,
    cols: &Columns,
    judges: Option<Vec<String>>,
) -> Result<AuditBank> {
    if batch.num_rows() == 0 {
        return Err(Error::input(path, "the bank is empty"));
    }
    let column = |name: &str| numbers(path, batch, name, false);
    let optional =
        |name: &str, gaps: bool| batch.column_by_name(name).map(|_| numbers(path, batch, name, gaps)).transpose();
    let names: Vec<String> = if cols.verifiers.is_empty() {
        batch.schema().fields().iter().filter(|f| f.name().starts_with("v_")).map(|f| f.name().clone()).collect()
    } else {
        cols.verifiers.clone()
    };
    // A bank file must name its verifiers; a run's bank may have none yet (an imported bank
    // before any verifier stage ran: the label sanity and the grader tables still apply).
    if names.is_empty() && judges.is_none() {
        return Err(Error::input(path, "no verifier: name them with --verifiers, or call their columns v_<name>"));
    }
    // A verifier may leave memories unscored (null): NaN here.
    let verifiers = names
        .iter()
        .map(|n| Ok((n.trim_start_matches("v_").to_string(), numbers(path, batch, n, true)?)))
        .collect::<Result<Vec<_>>>()?;
    let u = match (cols.truth, batch.column_by_name("u")) {
        (true, _) => column("u")?,
        (false, Some(_)) => numbers(path, batch, "u", true)?,
        (false, None) => vec![f64::NAN; batch.num_rows()],
    };
    if let Some(i) = u.iter().position(|&x| x != 0.0 && x != 1.0 && !x.is_nan()) {
        return Err(Error::input(path, format!("row {i}: column 'u' is {}, not 0 or 1", u[i])));
    }
    let have: Vec<String> = verifiers.iter().map(|(n, _)| n.clone()).collect();
    let judges = match &cols.ensemble {
        Some(list) => {
            let list: Vec<String> = list.iter().map(|n| n.trim_start_matches("v_").to_string()).collect();
            if let Some(miss) = list.iter().find(|n| !have.contains(n)) {
                return Err(Error::input(
                    path,
                    format!("--ensemble names '{miss}', which is not a verifier here (verifiers: {})", have.join(", ")),
                ));
            }
            list
        }
        None => judges.unwrap_or(have),
    };
    let graded = optional(&cols.graded, false)?.map(|g| g.into_iter().map(|x| x != 0.0).collect());
    Ok(AuditBank {
        r: column("r")?,
        u,
        verifiers,
        judges,
        graded,
        seed: optional(&cols.seed, false)?.map(|s| s.into_iter().map(|s| s as i64).collect()),
        cluster: clusters(path, batch, QUESTION)?,
        // A memory a resample left unscored has no sc (NaN): never pruned by the sc control.
        sc: optional(&cols.sc, true)?,
        n: optional(&cols.n, false)?,
        arm: None,
        cost: Vec::new(),
        label_source: None,
    })
}
