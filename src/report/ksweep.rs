//! The generation-free k-sweep: for every memory arm and seed, the retrieved sets recomputed from
//! the stored question embeddings at k in {1, 2, 4, 8} over the recorded episodes (each episode's
//! top-k earlier episodes by cosine similarity, ties to the earlier one, as the retrieve stage
//! does), with the labels the arm stored and the errors it made; per k: mean retrieved corruption
//! and the paper's kappa and e0. No model call: what changes is only which memories count. Arms
//! with a score-ranked retrieval policy (the run's `draws` table) are left out. Every arm and seed
//! gets its rows: one whose questions lack an embedding says how many (and has no fits), and each
//! says how many of its stored retrieved sets the recomputation reproduces at the run's own k (the
//! paper: 1,533 of 1,533), the check that the sweep recomputes what the loop retrieved.
use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, Float64Array, Int64Array, RecordBatch, StringArray, UInt8Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::prelude::SessionContext;

use crate::analysis::stats;
use crate::embed::index::VectorIndex;
use crate::error::Result;
use crate::table::column;

/// The k values of the sweep (the paper's).
pub const KS: [usize; 4] = [1, 2, 4, 8];

/// The sweep over a run's `episodes`, `evaluation` and `embeddings` (registered in `ctx`).
pub async fn k_sweep(ctx: &SessionContext) -> Result<RecordBatch> {
    let p = std::path::Path::new("k_sweep");
    // Arms that drew their memories by stored label (softmax, hybrid) are left out: at another k
    // they would have drawn other memories, so generated other episodes; no sweep without generating.
    let score_ranked = if ctx.table_exist("draws").unwrap_or(false) {
        " AND e.arm NOT IN (SELECT DISTINCT arm FROM draws WHERE policy <> 'similarity')"
    } else {
        ""
    };
    let eps = crate::session::collect(
        ctx,
        &format!(
            "SELECT e.arm, e.seed, e.step, e.question_id, e.stored_q, v.u FROM episodes e \
             JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step \
             WHERE e.arm <> 'no-memory'{score_ranked} ORDER BY e.arm, e.seed, e.step"
        ),
    )
    .await?;
    let stored = stored_sets(ctx).await?;
    let emb = crate::session::collect(ctx, "SELECT question_id, vector FROM embeddings").await?;
    let (ids, vectors, dim) = crate::embed::table::read_vectors(&emb)?;
    let row_of: HashMap<i64, usize> = ids.iter().enumerate().map(|(i, &q)| (q, i)).collect();
    // Parquet strings may come back as views; read every column in one known type.
    let typed = |name: &str, t: DataType| -> Result<Arc<dyn Array>> {
        let c = eps.column_by_name(name).ok_or_else(|| crate::error::Error::input(p, format!("no column {name}")))?;
        Ok(arrow::compute::cast(c, &t)?)
    };
    let cols = [
        typed("arm", DataType::Utf8)?,
        typed("seed", DataType::UInt64)?,
        typed("step", DataType::UInt64)?,
        typed("question_id", DataType::Int64)?,
        typed("stored_q", DataType::UInt8)?,
        typed("u", DataType::UInt8)?,
    ];
    let eps =
        RecordBatch::try_from_iter(["arm", "seed", "step", "question_id", "stored_q", "u"].into_iter().zip(cols))?;
    let (arm, seed, step) = (
        column::<StringArray>(&eps, p, "arm")?,
        column::<UInt64Array>(&eps, p, "seed")?,
        column::<UInt64Array>(&eps, p, "step")?,
    );
    let (qid, q, u) = (
        column::<Int64Array>(&eps, p, "question_id")?,
        column::<UInt8Array>(&eps, p, "stored_q")?,
        column::<UInt8Array>(&eps, p, "u")?,
    );
    let mut out: Vec<Row> = Vec::new();
    let mut start = 0;
    while start < eps.num_rows() {
        let mut end = start;
        while end < eps.num_rows() && arm.value(end) == arm.value(start) && seed.value(end) == seed.value(start) {
            end += 1;
        }
        let n = end - start;
        let key = |t: usize| (arm.value(start).to_string(), seed.value(start), step.value(start + t));
        let stored_of: Vec<Option<&Vec<u64>>> = (0..n).map(|t| stored.get(&key(t))).collect();
        // The run's own k: its longest stored retrieved set.
        let run_k = stored_of.iter().flatten().map(|s| s.len()).max().unwrap_or(0);
        let missing = (start..end).filter(|&i| !row_of.contains_key(&qid.value(i))).count();
        let row = |k: usize| Row {
            arm: arm.value(start).to_string(),
            seed: seed.value(start),
            k: k as u64,
            n: 0,
            corruption: None,
            kappa: None,
            e0: None,
            missing: missing as u64,
            run_k: run_k as u64,
            stored: None,
            matching: None,
        };
        if missing > 0 {
            // No sweep without every question's vector: the rows say why they are empty.
            out.extend(KS.map(row));
            start = end;
            continue;
        }
        let mut bank = VectorIndex::with_capacity(dim, n);
        for i in start..end {
            let r = row_of[&qid.value(i)];
            bank.push(&vectors[r * dim..(r + 1) * dim]);
        }
        let queries: Vec<&[f32]> = (0..n).map(|t| bank.row(t)).collect();
        let prefixes: Vec<usize> = (0..n).collect();
        let deepest = KS[KS.len() - 1].max(run_k);
        let hits = bank.search_many(&queries, &prefixes, deepest, crate::par::default_jobs());
        // Stored sets against the top run_k recomputed, as sets of steps.
        let (mut compared, mut matching) = (0u64, 0u64);
        for (t, h) in hits.iter().enumerate() {
            let Some(s) = stored_of[t].filter(|s| !s.is_empty()) else { continue };
            let mut again: Vec<u64> = h[..run_k.min(h.len())].iter().map(|&(m, _)| step.value(start + m)).collect();
            again.sort_unstable();
            compared += 1;
            matching += u64::from(&again == s);
        }
        let bad = |m: usize| q.value(start + m) == 1 && u.value(start + m) == 0;
        for k in KS {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for (t, h) in hits.iter().enumerate().filter(|(_, h)| !h.is_empty()) {
                let set = &h[..k.min(h.len())];
                x.push(set.iter().filter(|&&(m, _)| bad(m)).count() as f64 / set.len() as f64);
                y.push(1.0 - f64::from(u.value(start + t)));
            }
            let fit = stats::ols(&y, &x);
            out.push(Row {
                n: x.len() as u64,
                corruption: (!x.is_empty()).then(|| x.iter().sum::<f64>() / x.len() as f64),
                kappa: fit.map(|f| f.1),
                e0: fit.map(|f| f.0),
                stored: Some(compared),
                matching: Some(matching),
                ..row(k)
            });
        }
        start = end;
    }
    let f = |n: &str, t: DataType, null: bool| Field::new(n, t, null);
    let schema = Schema::new(vec![
        f("arm", DataType::Utf8, false),
        f("seed", DataType::UInt64, false),
        f("k", DataType::UInt64, false),
        f("n", DataType::UInt64, false),
        f("mean_corruption", DataType::Float64, true),
        f("kappa", DataType::Float64, true),
        f("e0", DataType::Float64, true),
        f("missing_embeddings", DataType::UInt64, false),
        f("run_k", DataType::UInt64, false),
        f("stored_sets", DataType::UInt64, true),
        f("matching_sets", DataType::UInt64, true),
    ]);
    let round = |f: fn(&Row) -> Option<f64>| -> Arc<dyn Array> {
        Arc::new(out.iter().map(|r| f(r).map(|x| (x * 1e4).round() / 1e4)).collect::<Float64Array>())
    };
    let ints = |f: fn(&Row) -> u64| -> Arc<dyn Array> { Arc::new(out.iter().map(f).collect::<UInt64Array>()) };
    let counts =
        |f: fn(&Row) -> Option<u64>| -> Arc<dyn Array> { Arc::new(out.iter().map(f).collect::<UInt64Array>()) };
    Ok(RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(out.iter().map(|r| Some(r.arm.as_str())).collect::<StringArray>()),
            ints(|r| r.seed),
            ints(|r| r.k),
            ints(|r| r.n),
            round(|r| r.corruption),
            round(|r| r.kappa),
            round(|r| r.e0),
            ints(|r| r.missing),
            ints(|r| r.run_k),
            counts(|r| r.stored),
            counts(|r| r.matching),
        ],
    )?)
}

/// Every stored retrieved set of the memory arms, as sorted steps, by (arm, seed, step).
async fn stored_sets(ctx: &SessionContext) -> Result<HashMap<(String, u64, u64), Vec<u64>>> {
    let p = std::path::Path::new("k_sweep");
    let b = crate::session::collect(
        ctx,
        "SELECT CAST(arm AS VARCHAR) AS arm, CAST(seed AS BIGINT UNSIGNED) AS seed, \
         CAST(step AS BIGINT UNSIGNED) AS step, CAST(get_field(m, 'step') AS BIGINT UNSIGNED) AS m \
         FROM (SELECT arm, seed, step, unnest(retrieved) AS m FROM episodes WHERE arm <> 'no-memory')",
    )
    .await?;
    let arm = arrow::compute::cast(b.column(0), &DataType::Utf8)?;
    let arm = arm.as_any().downcast_ref::<StringArray>().ok_or_else(|| crate::error::Error::input(p, "arm"))?;
    let (seed, step, m) = (
        column::<UInt64Array>(&b, p, "seed")?,
        column::<UInt64Array>(&b, p, "step")?,
        column::<UInt64Array>(&b, p, "m")?,
    );
    let mut sets: HashMap<(String, u64, u64), Vec<u64>> = HashMap::new();
    for i in 0..b.num_rows() {
        sets.entry((arm.value(i).to_string(), seed.value(i), step.value(i))).or_default().push(m.value(i));
    }
    sets.values_mut().for_each(|s| s.sort_unstable());
    Ok(sets)
}

/// One row of the sweep.
struct Row {
    arm: String,
    seed: u64,
    k: u64,
    n: u64,
    corruption: Option<f64>,
    kappa: Option<f64>,
    e0: Option<f64>,
    /// Episodes of the arm and seed whose question has no stored embedding (then no sweep).
    missing: u64,
    /// The k the run retrieved with: its longest stored retrieved set.
    run_k: u64,
    /// Episodes with a stored retrieved set, compared with the recomputed top run_k.
    stored: Option<u64>,
    /// Of those, how many the recomputation reproduces (as a set of steps).
    matching: Option<u64>,
}
