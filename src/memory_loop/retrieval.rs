//! Retrieval policies: which of an episode's candidate memories it is shown. The candidates are
//! the earlier episodes most similar to the task (the seed's `retrieval` table, best first); a
//! policy picks k of them:
//! - `similarity` (Memento's, the default): the k most similar. Stored labels are shown, never
//!   used to rank.
//! - `softmax` (Theorem 1(i)'s score-ranked reuse): k draws without replacement among the
//!   `candidates` most similar, each with probability proportional to exp(Q / T) over those not
//!   yet drawn, Q the stored label (0/1). Seeded by (seed, step) alone, so a rerun, a resumed
//!   run and a run at any concurrency draw the same memories, and two arms of one seed share
//!   their random numbers.
//! - `hybrid`: the k candidates with the highest similarity + lambda * Q (ties: more similar, then
//!   earlier).
//!
//! Defaults (the paper gives none): T = 0.5 makes a trusted memory e^2 = 7.4 times as likely to
//! be drawn as an untrusted one (the retrieval channel is strong but a low-scored memory still
//! appears); `candidates` = 8 (twice the usual k = 4: enough choice for the score to matter, few
//! enough that the memories stay near the task); lambda = 0.1 (MiniLM cosines of neighbouring
//! questions differ by a few hundredths, so a trusted memory climbs a few places, not past
//! every closer one). Sweep any of them with `--set stages.<id>.config.retrieval.temperature=1`.
//!
//! Score-ranked policies read the candidates' stored labels, so an episode depends on all its
//! candidates (not just the k it is shown): the loop's DAG uses the candidate sets as edges,
//! which lengthens its critical path (noted in the manifest), and the similarity-only k-sweep
//! (which recomputes retrieved sets without generating) does not apply to them.

use serde::{Deserialize, Serialize};

use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::error::Invalid;
use crate::rng::SplitMix64;

/// The policy by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// The k most similar (labels never rank).
    #[default]
    Similarity,
    /// Draws proportional to exp(Q / T) among the candidates.
    Softmax,
    /// Top-k by similarity + lambda * Q among the candidates.
    Hybrid,
}

impl Policy {
    /// Its YAML name.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Similarity => "similarity",
            Policy::Softmax => "softmax",
            Policy::Hybrid => "hybrid",
        }
    }
}

/// A retrieval policy and its knobs (`retrieval:` of a memory_loop stage or of one arm).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retrieval {
    /// similarity, softmax or hybrid.
    #[serde(default)]
    pub policy: Policy,
    /// Softmax temperature T (> 0).
    #[serde(default = "default_temperature")]
    pub temperature: f64,
    /// How many of the most similar earlier memories a score-ranked policy chooses among.
    #[serde(default = "default_candidates")]
    pub candidates: usize,
    /// Hybrid weight of the stored label.
    #[serde(default = "default_lambda")]
    pub lambda: f64,
}

fn default_temperature() -> f64 {
    0.5
}
fn default_candidates() -> usize {
    8
}
fn default_lambda() -> f64 {
    0.1
}

impl Default for Retrieval {
    fn default() -> Self {
        Retrieval {
            policy: Policy::Similarity,
            temperature: default_temperature(),
            candidates: default_candidates(),
            lambda: default_lambda(),
        }
    }
}

/// One candidate of a step as the policy saw it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Draw {
    /// The candidate's step.
    pub step: usize,
    /// Its similarity to the task.
    pub similarity: f32,
    /// Its stored label when the policy chose.
    pub label: u8,
    /// Probability that it is chosen first (softmax: its share of exp(Q/T); otherwise 1 for the
    /// top choice, 0 for the rest). With k = 1 this is its inclusion probability.
    pub p_first: f64,
    /// Whether it was shown.
    pub drawn: bool,
    /// When it was chosen (0 = first; softmax: the draw, others: the rank of the choice); None
    /// when not shown.
    pub order: Option<u32>,
}

impl Retrieval {
    /// Whether this is the similarity-only policy (then the loop behaves exactly as before
    /// policies existed, and the config is left out of cache keys).
    pub fn is_similarity(&self) -> bool {
        self.policy == Policy::Similarity
    }

    /// How many of a step's most similar earlier memories it needs to see (and so depends on).
    pub fn width(&self, k: usize) -> usize {
        if self.is_similarity() { k } else { self.candidates.max(k) }
    }

    /// What is wrong with the knobs for a loop showing `k` memories, if anything.
    pub fn check(&self, k: usize) -> std::result::Result<(), Invalid> {
        if self.policy == Policy::Softmax && !(self.temperature > 0.0 && self.temperature.is_finite()) {
            return Err(Invalid(format!("retrieval.temperature must be > 0, got {}", self.temperature)));
        }
        if self.policy == Policy::Hybrid && !self.lambda.is_finite() {
            return Err(Invalid(format!("retrieval.lambda must be a number, got {}", self.lambda)));
        }
        if !self.is_similarity() && self.candidates <= k {
            return Err(Invalid(format!(
                "retrieval.candidates ({}) must exceed k ({k}): with no more candidates than memories shown, every \
                 candidate is shown and the {} policy ranks nothing",
                self.candidates,
                self.policy.name()
            )));
        }
        Ok(())
    }

    /// The config as it enters a cache key: only the knobs the policy reads.
    pub fn keyed(&self) -> serde_json::Value {
        match self.policy {
            Policy::Similarity => serde_json::json!({"policy": "similarity"}),
            Policy::Softmax => serde_json::json!({"policy": "softmax", "temperature": self.temperature,
                "candidates": self.candidates}),
            Policy::Hybrid => serde_json::json!({"policy": "hybrid", "lambda": self.lambda,
                "candidates": self.candidates}),
        }
    }

    /// Every candidate of step `step` of seed `seed` (best first by similarity, already cut to
    /// [`Self::width`]) with what the policy made of it; `label(s)` is the stored label of step s.
    pub fn choose(
        &self,
        seed: u64,
        step: usize,
        candidates: &[(usize, f32)],
        k: usize,
        label: impl Fn(usize) -> u8,
    ) -> Vec<Draw> {
        let mut draws: Vec<Draw> = candidates
            .iter()
            .map(|&(s, similarity)| Draw {
                step: s,
                similarity,
                label: label(s),
                p_first: 0.0,
                drawn: false,
                order: None,
            })
            .collect();
        let k = k.min(draws.len());
        match self.policy {
            Policy::Similarity => {
                for (i, d) in draws.iter_mut().take(k).enumerate() {
                    (d.drawn, d.order) = (true, Some(i as u32));
                }
                if let Some(first) = draws.first_mut().filter(|d| d.drawn) {
                    first.p_first = 1.0;
                }
            }
            Policy::Hybrid => {
                let score = |d: &Draw| d.similarity as f64 + self.lambda * d.label as f64;
                let mut by: Vec<usize> = (0..draws.len()).collect();
                by.sort_by(|&a, &b| {
                    score(&draws[b])
                        .total_cmp(&score(&draws[a]))
                        .then(draws[b].similarity.total_cmp(&draws[a].similarity))
                        .then(draws[a].step.cmp(&draws[b].step))
                });
                for (rank, &i) in by.iter().take(k).enumerate() {
                    (draws[i].drawn, draws[i].order) = (true, Some(rank as u32));
                    draws[i].p_first = if rank == 0 { 1.0 } else { 0.0 };
                }
            }
            Policy::Softmax => {
                // exp((Q - max Q) / T): the largest weight is 1, so no temperature underflows them all.
                let top = draws.iter().map(|d| d.label).max().unwrap_or(0) as f64;
                let weights: Vec<f64> =
                    draws.iter().map(|d| ((d.label as f64 - top) / self.temperature).exp()).collect();
                let total: f64 = weights.iter().sum();
                for (d, w) in draws.iter_mut().zip(&weights) {
                    d.p_first = w / total;
                }
                let mut rng = SplitMix64(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ (step as u64));
                for n in 0..k {
                    let left: f64 = draws.iter().zip(&weights).filter(|(d, _)| !d.drawn).map(|(_, w)| w).sum();
                    let mut x = rng.uniform() * left;
                    // The last undrawn candidate takes what rounding leaves.
                    let mut pick = draws.iter().rposition(|d| !d.drawn).expect("k <= candidates");
                    for (i, (d, w)) in draws.iter().zip(&weights).enumerate() {
                        if d.drawn {
                            continue;
                        }
                        if x < *w {
                            pick = i;
                            break;
                        }
                        x -= w;
                    }
                    (draws[pick].drawn, draws[pick].order) = (true, Some(n as u32));
                }
            }
        }
        draws
    }
}

/// One `draws` row: a candidate of a step and what the policy made of it.
pub struct DrawRow {
    /// The step that retrieves.
    pub step: u64,
    /// Its task.
    pub question_id: i64,
    /// The policy.
    pub policy: &'static str,
    /// Softmax temperature (None for other policies).
    pub temperature: Option<f64>,
    /// The candidate, as the policy saw it.
    pub draw: Draw,
    /// The candidate's task.
    pub candidate_question_id: i64,
    /// 0 = most similar candidate.
    pub rank: u32,
}

/// The `draws` table (written by a memory_loop stage with a score-ranked policy in any arm): every
/// candidate of every step, its stored label when the policy chose, its probability of being
/// drawn first and whether it was shown. Theorem 1 is measured from it
/// (`pipelines/reports/paper/retrieval_mass.sql`).
pub fn draws_table() -> Table<DrawRow> {
    type V = Getter<DrawRow>;
    Table {
        name: "draws",
        description: "Every candidate memory of every step of a memory arm under its retrieval policy: the label it had when the policy chose, its probability of being chosen first, and whether it was shown. Written when any arm of the stage ranks by score (softmax, hybrid).",
        written_by: "the memory_loop stage",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", V::U64(|r| r.step), "The step that retrieves."),
            Column::new("question_id", V::I64(|r| r.question_id), "Its task."),
            Column::new("policy", V::Str(|r| r.policy), "similarity, softmax or hybrid."),
            Column::new(
                "temperature",
                V::OptF64(|r| r.temperature),
                "Softmax temperature T (null for other policies).",
            ),
            Column::new("rank", V::U32(|r| r.rank), "0 = the most similar candidate."),
            Column::new("candidate_step", V::U64(|r| r.draw.step as u64), "The candidate memory's step (< step)."),
            Column::new("candidate_question_id", V::I64(|r| r.candidate_question_id), "The candidate's task."),
            Column::new("similarity", V::F32(|r| r.draw.similarity), "Cosine similarity of the two questions."),
            Column::new("label", V::U8(|r| r.draw.label), "The candidate's stored label Q when the policy chose."),
            Column::new(
                "p_first",
                V::F64(|r| r.draw.p_first),
                "Probability it is chosen first under the labels shown (softmax: exp(Q/T) over the candidates' sum; others: 1 for the top choice). With k = 1, its inclusion probability.",
            ),
            Column::new("drawn", V::Bool(|r| r.draw.drawn), "Whether the episode was shown it."),
            Column::new(
                "draw_order",
                V::OptU64(|r| r.draw.order.map(u64::from)),
                "When it was chosen: 0 = first (softmax: the first draw, whose probability is p_first; others: the top choice), null when not shown.",
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands(n: usize) -> Vec<(usize, f32)> {
        (0..n).map(|i| (i, 1.0 - i as f32 * 0.01)).collect()
    }

    #[test]
    fn similarity_shows_the_k_most_similar_whatever_the_labels() {
        let r = Retrieval::default();
        let d = r.choose(0, 9, &cands(6), 2, |s| (s % 2) as u8);
        assert_eq!(d.iter().filter(|d| d.drawn).map(|d| d.step).collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn hybrid_lifts_trusted_memories_by_lambda() {
        let r = Retrieval { policy: Policy::Hybrid, lambda: 0.025, ..Retrieval::default() };
        // Step 3 is trusted and 0.03 less similar than step 0: lambda 0.025 is not enough; 2 is.
        let d = r.choose(0, 9, &cands(6), 2, |s| u8::from(s == 2 || s == 3));
        assert_eq!(d.iter().filter(|d| d.drawn).map(|d| d.step).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(d.iter().find(|d| d.p_first == 1.0).map(|d| d.step), Some(2));
    }

    #[test]
    fn softmax_draws_follow_exp_q_over_t_and_repeat_exactly() {
        let r = Retrieval { policy: Policy::Softmax, temperature: 0.5, ..Retrieval::default() };
        let label = |s: usize| u8::from(s < 2);
        let (mut trusted, n) = (0usize, 20_000);
        for step in 0..n {
            let d = r.choose(7, step, &cands(6), 1, label);
            assert_eq!(d, r.choose(7, step, &cands(6), 1, label), "seeded per step");
            assert_eq!(d.iter().filter(|d| d.drawn).count(), 1);
            trusted += d.iter().filter(|d| d.drawn && d.label == 1).count();
            let p: f64 = d.iter().map(|d| d.p_first).sum();
            assert!((p - 1.0).abs() < 1e-12);
        }
        let e2 = 2f64.exp();
        let expect = 2.0 * e2 / (2.0 * e2 + 4.0);
        let share = trusted as f64 / n as f64;
        let se = (expect * (1.0 - expect) / n as f64).sqrt();
        assert!((share - expect).abs() < 4.0 * se, "{share} vs {expect}");
        // k draws without replacement: k distinct memories.
        let d = r.choose(1, 3, &cands(6), 4, label);
        assert_eq!(d.iter().filter(|d| d.drawn).count(), 4);
    }
}
