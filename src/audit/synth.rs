//! Synthetic banks with known properties, for tests and the audit benchmark: U ~ Bernoulli
//! (base rate); a self-grade with planted leniency l = P(trusted | U = 0) and sensitivity
//! s = P(trusted | U = 1); and verifiers whose EIA verdicts are known by construction:
//!
//! - `truthful`: U, flipped (`flips`, 5 % by default) independently of r (decorrelated and
//!   truthful: PASS);
//! - `echo`: the self-grade, flipped as often (its errors are the grader's: FAIL, echoes);
//! - `noise`: a fair coin (FAIL, barely tracks U);
//! - `judge<k>` (k >= 4): a re-grading judge that copies the self-grade half the time and reads U
//!   (20 % flips) otherwise (in between, like the paper's re-grades).
//!
//! With `continuous`, scores are spread within their side of 0.5 (r included), so every memory
//! is distinct (the bootstrap's worst case). Also a self-consistency column `sc` (agreement that
//! follows the self-grade) and a reuse count `n` with a planted Echo Gap: uniform on 0..8, plus
//! `echo_reuse` for a wrong memory the self-grade trusted, so among wrong memories
//! E[b | U=0] = l and Cov(b, n | U=0) = echo_reuse l (1 - l).

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};

use crate::rng::SplitMix64;

/// What to plant.
#[derive(Clone, Debug)]
pub struct Planted {
    /// Memories.
    pub memories: usize,
    /// Seeds (folds), assigned round-robin.
    pub seeds: usize,
    /// P(U = 1).
    pub base_rate: f64,
    /// P(trusted | U = 0).
    pub leniency: f64,
    /// P(trusted | U = 1).
    pub sensitivity: f64,
    /// Verifier columns (truthful, echo, noise, then judge4, judge5, ...; at least one).
    pub verifiers: usize,
    /// Spread scores within their side of 0.5.
    pub continuous: bool,
    /// Extra retrievals of a trusted wrong memory (the planted Echo Gap).
    pub echo_reuse: f64,
    /// How often `truthful` misreads U and `echo` miscopies the self-grade.
    pub flips: f64,
    /// Generator seed.
    pub seed: u64,
}

impl Default for Planted {
    fn default() -> Self {
        Planted {
            memories: 3000,
            seeds: 3,
            base_rate: 0.6,
            leniency: 0.8,
            sensitivity: 0.95,
            verifiers: 3,
            continuous: false,
            echo_reuse: 3.0,
            flips: 0.05,
            seed: 7,
        }
    }
}

/// The name of verifier column `j`.
pub fn verifier_name(j: usize) -> String {
    match j {
        0 => "truthful".into(),
        1 => "echo".into(),
        2 => "noise".into(),
        j => format!("judge{}", j + 1),
    }
}

/// A bank: columns `id`, `seed`, `r`, `u`, `v_<name>` per verifier, `sc`, `n`.
pub fn generate(spec: &Planted) -> RecordBatch {
    let mut rng = SplitMix64(spec.seed);
    let mut unif = move || rng.uniform();
    let nv = spec.verifiers.max(1);
    let n = spec.memories;
    let (mut seed, mut r, mut u, mut sc, mut reuse) = (vec![], vec![], vec![], vec![], vec![]);
    let mut vs: Vec<Vec<f64>> = vec![Vec::with_capacity(n); nv];
    for i in 0..n {
        let ui = unif() < spec.base_rate;
        let ri = unif() < if ui { spec.sensitivity } else { spec.leniency };
        let score = |side: bool, unif: &mut dyn FnMut() -> f64| {
            let base = if side { 1.0 } else { 0.0 };
            if spec.continuous { if side { 0.5 + 0.5 * unif() } else { 0.499 * unif() } } else { base }
        };
        seed.push((i % spec.seeds.max(1)) as i64);
        u.push(f64::from(u8::from(ui)));
        r.push(score(ri, &mut unif));
        for (j, v) in vs.iter_mut().enumerate() {
            let side = match j {
                0 => ui ^ (unif() < spec.flips),
                1 => ri ^ (unif() < spec.flips),
                2 => unif() < 0.5,
                _ => {
                    if unif() < 0.5 {
                        ri
                    } else {
                        ui ^ (unif() < 0.2)
                    }
                }
            };
            v.push(score(side, &mut unif));
        }
        sc.push(if ri { 0.6 + 0.4 * unif() } else { 0.6 * unif() });
        let echo = if !ui && ri { spec.echo_reuse } else { 0.0 };
        reuse.push((unif() * 9.0).floor() + echo);
    }
    let mut fields = vec![
        Field::new("id", DataType::Int64, false),
        Field::new("seed", DataType::Int64, false),
        Field::new("r", DataType::Float64, false),
        Field::new("u", DataType::Float64, false),
    ];
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..n as i64)),
        Arc::new(Int64Array::from(seed)),
        Arc::new(Float64Array::from(r)),
        Arc::new(Float64Array::from(u)),
    ];
    for (j, v) in vs.into_iter().enumerate() {
        fields.push(Field::new(format!("v_{}", verifier_name(j)), DataType::Float64, false));
        cols.push(Arc::new(Float64Array::from(v)));
    }
    fields.push(Field::new("sc", DataType::Float64, false));
    cols.push(Arc::new(Float64Array::from(sc)));
    fields.push(Field::new("n", DataType::Float64, false));
    cols.push(Arc::new(Float64Array::from(reuse)));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).expect("columns match the schema")
}
