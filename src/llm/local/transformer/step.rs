//! The decode step, fused: one token for each of several sequences, on plain buffers. The
//! tensor decoder ([`Transformer::forward`], kept for prompt chunks) spends a step on about 25
//! candle operations per layer, each allocating, and copies every layer's whole KV cache twice
//! (`cat` onto the cache, then once per query head sharing it). Here the activations of all
//! the sequences are rows of one buffer: norms, rotary embedding, softmax and SiLU run in place
//! on them, each projection reads its weights once for every row (q/k/v and gate/up from one
//! quantization of their shared input), and each query head multiplies the keys and values of
//! its KV head where they lie ([`super::Kv`]).
//!
//! Every operation is candle's, to the bit: the same f32 expressions in the same order (rms
//! norm, rope, bias and residual adds, SiLU, the softmax with candle's own reductions), the same
//! gemm calls for attention, the same kernels for the projections, and e^x with the C library's
//! bits eight values at a time ([`crate::llm::local::expf`]). So a sequence's logits are
//! those of [`Transformer::forward`] of its token alone, whichever sequences share its step
//! (tests/models.rs), and the model's identity and every cached answer stay valid.

use std::sync::{Arc, Mutex};

use candle_core::{Result, Tensor};

use super::{Cache, Transformer};
use crate::embed::matmul::{Mat, matmul};
use crate::llm::local::expf::exp_in_place;
use crate::llm::local::kernels::{reduce_max, reduce_sum};
use crate::llm::local::qlinear::{Linear, share};

/// candle's `rms_norm` of each `alpha.len()`-wide row of `x`, in place.
fn rms_norm(x: &mut [f32], alpha: &[f32], eps: f32) {
    let n = alpha.len();
    for row in x.chunks_exact_mut(n) {
        let sum2 = row.iter().map(|&v| v * v).sum::<f32>();
        let m = (sum2 / n as f32 + eps).sqrt();
        for (d, a) in row.iter_mut().zip(alpha) {
            *d = *d / m * *a;
        }
    }
}

/// candle's rotary embedding of one head's `x` with one position's `cos` and `sin` (half the
/// head wide): pairs (2i, 2i+1) (`rope_i`, llama) or (i, i + d/2) (`rope`, NEOX: qwen2).
fn rope(x: &mut [f32], cos: &[f32], sin: &[f32], neox: bool) {
    let half = x.len() / 2;
    for i in 0..half {
        let (a, b) = if neox { (i, i + half) } else { (2 * i, 2 * i + 1) };
        let (x0, x1) = (x[a], x[b]);
        x[a] = x0 * cos[i] - x1 * sin[i];
        x[b] = x0 * sin[i] + x1 * cos[i];
    }
}

/// candle's `softmax_last_dim` of one row, in place.
fn softmax(x: &mut [f32]) {
    let max = reduce_max(x);
    for v in x.iter_mut() {
        *v -= max;
    }
    exp_in_place(x);
    let sum = reduce_sum(x);
    for v in x.iter_mut() {
        *v /= sum;
    }
}

/// One query head against its KV head's `len` positions: scores = q Kᵀ (candle's gemm call),
/// scaled as candle's `att / √d` (an affine map: v · (1/√d) + 0), softmax, then the weighted
/// values into `out`.
fn attend(q: &[f32], keys: &[f32], values: &[f32], scale: f32, threads: usize, out: &mut [f32]) {
    let d = q.len();
    let len = keys.len() / d;
    let mut att = vec![0f32; len];
    matmul(&mut att, Mat::new(q, 1, d), Mat::new(keys, len, d).t(), threads);
    for v in att.iter_mut() {
        *v = *v * scale + 0.0;
    }
    softmax(&mut att);
    matmul(out, Mat::new(&att, 1, len), Mat::new(values, len, d), threads);
}

/// `fill(c, chunk)` for each `width`-wide chunk c of `out`, the chunks shared out on the worker
/// pool (for values that are their own expressions', whichever thread computes them).
fn fill_chunks(out: &mut [f32], width: usize, fill: impl Fn(usize, &mut [f32]) + Sync) {
    let chunks: Vec<Mutex<&mut [f32]>> = out.chunks_mut(width).map(Mutex::new).collect();
    share(chunks.len(), |range| {
        for c in range {
            fill(c, &mut chunks[c].lock().unwrap_or_else(|e| e.into_inner()));
        }
    });
}

/// candle's SiLU of `gate` times `up` (`gate / (1 + e^−gate) · up`), in chunks shared out on
/// the worker pool.
fn silu_mul(gate: &[f32], up: &[f32]) -> Vec<f32> {
    const CHUNK: usize = 512;
    let mut out = vec![0f32; gate.len()];
    fill_chunks(&mut out, CHUNK, |c, chunk| {
        let (gate, up) = (&gate[c * CHUNK..], &up[c * CHUNK..]);
        chunk.iter_mut().zip(gate).for_each(|(v, g)| *v = -g);
        exp_in_place(chunk);
        for ((v, g), u) in chunk.iter_mut().zip(gate).zip(up) {
            *v = g / (1.0 + *v) * u;
        }
    });
    out
}

/// a[i] + b[i] (candle's tensor add, operands in its order).
fn add(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

fn values(t: &Tensor) -> Result<Vec<f32>> {
    t.flatten_all()?.to_vec1::<f32>()
}

impl Transformer {
    /// One step of several sequences at once: `tokens[i]` read after the positions `caches[i]`
    /// holds; each sequence's logits of the token after it. The linear layers read every weight
    /// once for all the sequences; attention is each sequence's own. Each sequence's logits are
    /// bit-identical to [`Transformer::forward`] of its token alone (tests/models.rs).
    pub fn step(&self, tokens: &[u32], caches: &mut [Cache]) -> Result<Vec<Tensor>> {
        if tokens.len() != caches.len() || tokens.is_empty() {
            candle_core::bail!("{} tokens for {} sequences", tokens.len(), caches.len());
        }
        for c in caches.iter_mut() {
            self.fits(c.len + 1)?;
            self.prepare(c);
        }
        let rows = tokens.len();
        let (hd, n_head, n_kv) = (self.head_dim, self.n_head, self.n_kv_head);
        let rep = n_head / n_kv;
        let scale = (1.0 / (hd as f64).sqrt()) as f32;
        let threads = candle_core::utils::get_num_threads();
        let table = self.embed.embeddings();
        let mut h = Vec::new();
        for &t in tokens {
            h.extend(values(&table.get(t as usize)?)?);
        }
        let mut trig = Vec::with_capacity(rows);
        for c in caches.iter() {
            trig.push((values(&self.cos.get(c.len)?)?, values(&self.sin.get(c.len)?)?));
        }
        for (li, l) in self.layers.iter().enumerate() {
            let mut x = h.clone();
            rms_norm(&mut x, &values(&l.attn_norm)?, self.eps);
            let mut qkv = Linear::apply_group(&[&l.wq, &l.wk, &l.wv], &x, rows)?;
            if let Some((bq, bk, bv)) = &l.bias {
                for (out, b) in qkv.iter_mut().zip([bq, bk, bv]) {
                    let b = values(b)?;
                    for row in out.chunks_exact_mut(b.len()) {
                        row.iter_mut().zip(&b).for_each(|(v, b)| *v += b);
                    }
                }
            }
            let [q, k, v]: [Vec<f32>; 3] =
                qkv.try_into().map_err(|_| candle_core::Error::Msg("three projections".into()))?;
            let (mut q, mut k) = (q, k);
            for (i, (cos, sin)) in trig.iter().enumerate() {
                let rows_of = |t: &mut Vec<f32>, heads: usize| {
                    t[i * heads * hd..(i + 1) * heads * hd]
                        .chunks_exact_mut(hd)
                        .for_each(|x| rope(x, cos, sin, self.neox))
                };
                rows_of(&mut q, n_head);
                rows_of(&mut k, n_kv);
            }
            for (i, c) in caches.iter_mut().enumerate() {
                let at = i * n_kv * hd..(i + 1) * n_kv * hd;
                Arc::make_mut(&mut c.layers[li]).push(&k[at.clone()], &v[at], 1);
            }
            // Every sequence's every query head, shared out on the worker pool (each head's
            // values are its own calls', whichever thread makes them).
            let mut y = vec![0f32; rows * n_head * hd];
            let caches = &*caches;
            fill_chunks(&mut y, hd, |j, out| {
                let (kv, head) = (&caches[j / n_head].layers[li], j % n_head);
                attend(&q[j * hd..(j + 1) * hd], kv.keys(head / rep), kv.values(head / rep), scale, threads, out);
            });
            let x = add(&l.wo.apply(&y, rows)?, &h);
            let mut y = x.clone();
            rms_norm(&mut y, &values(&l.ffn_norm)?, self.eps);
            let gate_up = Linear::apply_group(&[&l.w1, &l.w3], &y, rows)?;
            let (gate, up) = (&gate_up[0], &gate_up[1]);
            let act = silu_mul(gate, up);
            h = add(&l.w2.apply(&act, rows)?, &x);
        }
        caches.iter_mut().for_each(|c| c.len += 1);
        rms_norm(&mut h, &values(&self.norm)?, self.eps);
        let logits = self.output.apply(&h, rows)?;
        let vocab = logits.len() / rows;
        logits.chunks_exact(vocab).map(|r| Tensor::from_slice(r, vocab, &candle_core::Device::Cpu)).collect()
    }
}
