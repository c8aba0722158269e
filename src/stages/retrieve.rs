//! `kind: retrieve` — the top-k most similar earlier episodes for every step of a seed's order
//! (`retrieval`: step, question_id, rank, neighbor_step, neighbor_question_id, similarity).
//! Retrieval is by embedding similarity alone (stored labels never re-rank), so it depends only on
//! the order and the embeddings: computed once per seed in one blocked pass over the bank and
//! shared by every memory arm of that seed. Ties go to the earlier episode.

use std::collections::HashMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::columns::{Column, Getter, SEED, Table};
use crate::embed::index::VectorIndex;
use crate::embed::table::read_vectors;
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Stage, StageContext};

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

/// One `retrieval` row: a memory shown at a step.
pub struct Neighbour {
    /// The step that retrieves.
    pub step: u64,
    /// Its task.
    pub question_id: i64,
    /// 0 = most similar.
    pub rank: u32,
    /// The retrieved episode's step.
    pub neighbor_step: u64,
    /// Its task.
    pub neighbor_question_id: i64,
    /// Cosine similarity.
    pub similarity: f32,
}

/// The `retrieval` table: one definition per column (schema, batch, `schemas/retrieval.json`).
pub fn retrieval_table() -> Table<Neighbour> {
    type V = Getter<Neighbour>;
    Table {
        name: "retrieval",
        description: "The top-k earlier episodes of every step of a seed's order by embedding similarity alone; shared by every memory arm of the seed.",
        written_by: "the retrieve stage",
        matrix: &[SEED],
        columns: vec![
            Column::new("step", V::U64(|n| n.step), "The step that retrieves."),
            Column::new("question_id", V::I64(|n| n.question_id), "Its task."),
            Column::new("rank", V::U32(|n| n.rank), "0 = most similar."),
            Column::new("neighbor_step", V::U64(|n| n.neighbor_step), "The retrieved episode's step (< step)."),
            Column::new("neighbor_question_id", V::I64(|n| n.neighbor_question_id), "The retrieved episode's task."),
            Column::new("similarity", V::F32(|n| n.similarity), "Cosine similarity of the two questions' embeddings."),
        ],
    }
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
        let order = crate::memory_loop::order::read_order(inputs.get(ctx, "order")?)?;
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
        let rows: Vec<Neighbour> = found
            .iter()
            .enumerate()
            .flat_map(|(t, hits)| {
                let order = &order;
                hits.iter().enumerate().map(move |(r, &(n, s))| Neighbour {
                    step: t as u64,
                    question_id: order[t],
                    rank: r as u32,
                    neighbor_step: n as u64,
                    neighbor_question_id: order[n],
                    similarity: s,
                })
            })
            .collect();
        let batch = retrieval_table().batch(&rows)?;
        Ok(vec![("retrieval".into(), batch)])
    }
}
