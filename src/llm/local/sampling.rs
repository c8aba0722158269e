//! The next token from a step's logits: greedy, or a seeded draw from the softmax at a
//! temperature, optionally cut to the nucleus (top-p). The draws are candle-transformers'
//! `LogitsProcessor`'s, step for step (rand's `StdRng` seeded with the request's seed, one
//! `WeightedIndex` draw per token, ties and the nucleus cut as it makes them), so a seeded answer
//! — and every cached one — is what it was when lucid sampled with that crate; `tests/models.rs`
//! compares the two over many seeds and logits. candle-transformers is a dev-dependency only.

use candle_core::{D, DType, Result, Tensor};
use rand::SeedableRng;
use rand::distr::Distribution;

/// How the next token is chosen.
#[derive(Clone, Debug, PartialEq)]
pub enum Sampling {
    /// The likeliest token (the first on a tie).
    ArgMax,
    /// A draw from the softmax of logits / temperature.
    All {
        /// Temperature (> 0).
        temperature: f64,
    },
    /// A draw from the smallest set of likeliest tokens whose mass reaches `p`.
    TopP {
        /// Nucleus mass; outside (0, 1) the whole distribution.
        p: f64,
        /// Temperature (> 0).
        temperature: f64,
    },
}

/// A seeded sampler: one per generated answer.
pub struct Sampler {
    rng: rand::rngs::StdRng,
    sampling: Sampling,
}

impl Sampler {
    /// A sampler drawing with `seed`.
    pub fn new(seed: u64, sampling: Sampling) -> Sampler {
        Sampler { rng: rand::rngs::StdRng::seed_from_u64(seed), sampling }
    }

    /// The next token from a vector of logits.
    pub fn sample(&mut self, logits: &Tensor) -> Result<u32> {
        let logits = logits.to_dtype(DType::F32)?;
        let probs = |temperature: f64| -> Result<Vec<f32>> {
            candle_nn::ops::softmax_last_dim(&(&logits / temperature)?)?.to_vec1()
        };
        match self.sampling {
            Sampling::ArgMax => logits.argmax(D::Minus1)?.to_scalar::<u32>(),
            Sampling::All { temperature } => self.draw(&probs(temperature)?),
            Sampling::TopP { p, temperature } => {
                let mut prs = probs(temperature)?;
                if p <= 0.0 || p >= 1.0 {
                    self.draw(&prs)
                } else {
                    nucleus(&mut prs, p as f32);
                    self.draw(&prs)
                }
            }
        }
    }

    fn draw(&mut self, prs: &[f32]) -> Result<u32> {
        let distr = rand::distr::weighted::WeightedIndex::new(prs).map_err(candle_core::Error::wrap)?;
        Ok(distr.sample(&mut self.rng) as u32)
    }
}

/// Zero every probability outside the nucleus: in descending order (a stable sort), tokens are
/// kept while the mass before them is below `p`.
fn nucleus(prs: &mut [f32], p: f32) {
    let mut order: Vec<usize> = (0..prs.len()).collect();
    order.sort_by(|&i, &j| prs[j].total_cmp(&prs[i]));
    let mut mass = 0.0;
    for i in order {
        if mass >= p {
            prs[i] = 0.0;
        } else {
            mass += prs[i];
        }
    }
}
