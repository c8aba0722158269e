//! `kind: permutation` — the seed's fixed task order (`order`: step, question_id). Every arm of a
//! seed reads the same order. Fisher–Yates driven by SplitMix64 seeded with the seed, so the
//! order is reproducible in any language.

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::memory_loop::order::{Step, order_table};
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of the permutation stage (none yet).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PermutationStage {}

/// `0..n` shuffled by Fisher–Yates with SplitMix64(seed) (index j drawn as `next % (i + 1)`).
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    let mut rng = crate::rng::SplitMix64(seed);
    for i in (1..n).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

impl PermutationStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "permutation";
}

impl Stage for PermutationStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        1
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &["tasks"]
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["order".into()]
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let seed =
            ctx.seed().ok_or_else(|| Error::stage(&ctx.stage_id, "a permutation stage needs `matrix: [seed]`"))?;
        let tasks = super::questions(ctx, inputs)?;
        let order = permutation(tasks.len(), seed);
        let rows: Vec<Step> =
            order.iter().enumerate().map(|(s, &i)| Step { step: s as u64, question_id: tasks[i].0 }).collect();
        Ok(vec![("order".into(), order_table().batch(&rows)?)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_reproducible_shuffle() {
        let a = permutation(100, 7);
        assert_eq!(a, permutation(100, 7));
        assert_ne!(a, permutation(100, 8));
        let mut s = a.clone();
        s.sort();
        assert_eq!(s, (0..100).collect::<Vec<_>>());
        // SplitMix64 reference value for seed 0 (first output).
        assert_eq!(crate::rng::SplitMix64(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }
}
