//! `kind: retrieve` — the top-k most similar earlier episodes for every step of a seed's order
//! (`retrieval`: step, question_id, rank, neighbor_step, neighbor_question_id, similarity).
//! Retrieval is by embedding similarity alone (stored labels never re-rank), so it depends only on
//! the order and the embeddings: computed once per seed in one blocked pass over the bank and
//! shared by every memory arm of that seed. Ties go to the earlier episode.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Float32Array, Int64Array, RecordBatch, UInt32Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use serde::{Deserialize, Serialize};

use crate::embed::index::VectorIndex;
use crate::embed::table::read_vectors;
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Stage, StageContext};
use crate::table::column;

/// Config of the retrieve stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RetrieveStage {
    /// Neighbours per step (the loop may show fewer).
    #[serde(default = "default_k")]
    pub k: usize,
}

fn default_k() -> usize {
    4
}

/// Schema of `retrieval`.
pub fn retrieval_schema() -> Schema {
    Schema::new(vec![
        Field::new("step", DataType::UInt64, false),
        Field::new("question_id", DataType::Int64, false),
        Field::new("rank", DataType::UInt32, false),
        Field::new("neighbor_step", DataType::UInt64, false),
        Field::new("neighbor_question_id", DataType::Int64, false),
        Field::new("similarity", DataType::Float32, false),
    ])
}

impl RetrieveStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "retrieve";
}

impl Stage for RetrieveStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        1
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &["order", "embeddings"]
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["retrieval".into()]
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let order =
            column::<Int64Array>(inputs.get(ctx, "order")?, Path::new("order"), "question_id")?.values().to_vec();
        let (ids, vectors, dim) = read_vectors(inputs.get(ctx, "embeddings")?)?;
        let row_of: HashMap<i64, usize> = ids.iter().enumerate().map(|(i, &q)| (q, i)).collect();
        // The bank in step order: row t is the question asked at step t.
        let mut bank = VectorIndex::with_capacity(dim, order.len());
        for &q in &order {
            let r = *row_of
                .get(&q)
                .ok_or_else(|| Error::stage(&ctx.stage_id, format!("question_id {q} of the order has no embedding")))?;
            bank.push(&vectors[r * dim..(r + 1) * dim]);
        }
        ctx.progress.set_total(order.len() as u64);
        let queries: Vec<&[f32]> = (0..order.len()).map(|t| bank.row(t)).collect();
        let prefixes: Vec<usize> = (0..order.len()).collect();
        let found = bank.search_many(&queries, &prefixes, self.k, crate::par::default_jobs());
        ctx.progress.advance(order.len() as u64);
        let (mut step, mut qid, mut rank): (Vec<u64>, Vec<i64>, Vec<u32>) = Default::default();
        let (mut nstep, mut nqid, mut sim): (Vec<u64>, Vec<i64>, Vec<f32>) = Default::default();
        for (t, hits) in found.iter().enumerate() {
            for (r, &(n, s)) in hits.iter().enumerate() {
                step.push(t as u64);
                qid.push(order[t]);
                rank.push(r as u32);
                nstep.push(n as u64);
                nqid.push(order[n]);
                sim.push(s);
            }
        }
        let batch = RecordBatch::try_new(
            Arc::new(retrieval_schema()),
            vec![
                Arc::new(UInt64Array::from(step)),
                Arc::new(Int64Array::from(qid)),
                Arc::new(UInt32Array::from(rank)),
                Arc::new(UInt64Array::from(nstep)),
                Arc::new(Int64Array::from(nqid)),
                Arc::new(Float32Array::from(sim)),
            ],
        )?;
        Ok(vec![("retrieval".into(), batch)])
    }
}
