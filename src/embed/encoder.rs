//! BERT's forward pass over packed sentences: the tokens of a whole batch are rows of one matrix,
//! with no padding, so every dense layer is one large matmul (gemm, via [`crate::embed::matmul`],
//! the bias already in the output) and attention runs per sentence over its own tokens only.
//! Layer norms, GELU and attention are fused loops over rows, split over the threads a caller
//! gives. Numerically the same model as candle's padded `BertModel` (tested against it).

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use serde::Deserialize;

use crate::embed::matmul::{Mat, matmul_add};
use crate::error::{Error, Result};

/// The fields of a BERT `config.json` the forward pass uses.
#[derive(Clone, Debug, Deserialize)]
pub struct BertConfig {
    /// Width of every token vector.
    pub hidden_size: usize,
    /// Encoder layers.
    pub num_hidden_layers: usize,
    /// Attention heads per layer.
    pub num_attention_heads: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// Longest input the position table covers.
    pub max_position_embeddings: usize,
    /// `gelu` (erf), `gelu_new`/`gelu_pytorch_tanh` (tanh approximation) or `relu`.
    #[serde(default = "gelu")]
    pub hidden_act: String,
    /// Layer-norm epsilon.
    #[serde(default = "eps")]
    pub layer_norm_eps: f64,
    /// Prefix of the weight names in some checkpoints (`bert.`).
    #[serde(default)]
    pub model_type: Option<String>,
}

fn gelu() -> String {
    "gelu".into()
}

fn eps() -> f64 {
    1e-12
}

#[derive(Clone, Copy, Debug)]
enum Act {
    GeluErf,
    GeluTanh,
    Relu,
}

/// A dense layer: weights as a row-major (in, out) matrix, bias as a row.
struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
}

struct Norm {
    g: Vec<f32>,
    b: Vec<f32>,
    eps: f32,
}

struct Layer {
    qkv: Dense,
    attn_out: Dense,
    norm1: Norm,
    up: Dense,
    down: Dense,
    norm2: Norm,
}

/// A loaded BERT encoder.
pub struct Encoder {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    norm: Norm,
    layers: Vec<Layer>,
    pooler: Option<Dense>,
    act: Act,
    heads: usize,
    /// Vector size.
    pub hidden: usize,
    /// Longest input in tokens.
    pub max_positions: usize,
}

/// The weights of a safetensors file by name, with the checkpoint's prefix found once.
struct Weights<'a> {
    tensors: HashMap<String, Tensor>,
    prefix: String,
    path: &'a Path,
}

impl Weights<'_> {
    fn get(&self, name: &str) -> Result<Tensor> {
        let full = format!("{}{name}", self.prefix);
        let t = self.tensors.get(&full).ok_or_else(|| Error::input(self.path, format!("no weight `{full}`")))?;
        t.to_dtype(DType::F32).map_err(|e| Error::input_from(self.path, format!("weight `{full}`"), e))
    }

    fn vec(&self, name: &str, len: usize) -> Result<Vec<f32>> {
        let t = self.get(name)?;
        let v = t.flatten_all().and_then(|t| t.to_vec1::<f32>()).map_err(|e| self.bad(name, e))?;
        if v.len() != len {
            return Err(self.bad(name, format!("{} values, expected {len}", v.len())));
        }
        Ok(v)
    }

    fn bad(&self, name: &str, e: impl std::fmt::Display) -> Error {
        Error::input(self.path, format!("weight `{}{name}`: {e}", self.prefix))
    }

    /// PyTorch (out, in) weights, stacked along `out` when there are several, as (in, out).
    fn dense(&self, names: &[&str], inp: usize) -> Result<Dense> {
        let mut ws = Vec::new();
        let mut b = Vec::new();
        for name in names {
            let w = self.get(&format!("{name}.weight"))?;
            let (out, got_in) = w.dims2().map_err(|e| self.bad(name, e))?;
            if got_in != inp {
                return Err(self.bad(name, format!("input width {got_in}, expected {inp}")));
            }
            b.extend(self.vec(&format!("{name}.bias"), out)?);
            ws.push(w);
        }
        let w = Tensor::cat(&ws, 0)
            .and_then(|w| w.t()?.contiguous()?.flatten_all()?.to_vec1::<f32>())
            .map_err(|e| self.bad(names[0], e))?;
        Ok(Dense { w, b })
    }

    fn norm(&self, name: &str, len: usize, eps: f32) -> Result<Norm> {
        let pick =
            |a: &str, b: &str| self.vec(&format!("{name}.{a}"), len).or_else(|_| self.vec(&format!("{name}.{b}"), len));
        Ok(Norm { g: pick("weight", "gamma")?, b: pick("bias", "beta")?, eps })
    }
}

impl Encoder {
    /// Load `model.safetensors` (f32 or f16) shaped by `config`; `pooler` also loads BERT's pooler.
    pub fn load(path: &Path, bytes: &[u8], config: &BertConfig, pooler: bool) -> Result<Encoder> {
        let tensors = candle_core::safetensors::load_buffer(bytes, &Device::Cpu)
            .map_err(|e| Error::input_from(path, "not a safetensors file", e))?;
        let prefixes = ["".to_string(), "bert.".to_string()]
            .into_iter()
            .chain(config.model_type.as_ref().map(|t| format!("{t}.")));
        let prefix = prefixes
            .into_iter()
            .find(|p| tensors.contains_key(&format!("{p}embeddings.word_embeddings.weight")))
            .ok_or_else(|| Error::input(path, "no `embeddings.word_embeddings.weight`: not a BERT checkpoint"))?;
        let w = Weights { tensors, prefix, path };
        let h = config.hidden_size;
        let heads = config.num_attention_heads;
        if heads == 0 || !h.is_multiple_of(heads) {
            return Err(Error::input(path, format!("hidden_size {h} is not a multiple of {heads} heads")));
        }
        let act = match config.hidden_act.as_str() {
            "gelu" => Act::GeluErf,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Act::GeluTanh,
            "relu" => Act::Relu,
            other => return Err(Error::input(path, format!("config.json: hidden_act `{other}` is not supported"))),
        };
        let eps = config.layer_norm_eps as f32;
        let word_name = "embeddings.word_embeddings.weight";
        let word = w.get(word_name)?;
        if word.dims2().map_err(|e| w.bad(word_name, e))?.1 != h {
            return Err(w.bad(word_name, format!("width is not hidden_size {h}")));
        }
        let word = word.flatten_all().and_then(|t| t.to_vec1::<f32>()).map_err(|e| w.bad(word_name, e))?;
        let max_positions = config.max_position_embeddings;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let a = format!("{p}.attention");
            layers.push(Layer {
                qkv: w.dense(&[&format!("{a}.self.query"), &format!("{a}.self.key"), &format!("{a}.self.value")], h)?,
                attn_out: w.dense(&[&format!("{a}.output.dense")], h)?,
                norm1: w.norm(&format!("{a}.output.LayerNorm"), h, eps)?,
                up: w.dense(&[&format!("{p}.intermediate.dense")], h)?,
                down: w.dense(&[&format!("{p}.output.dense")], config.intermediate_size)?,
                norm2: w.norm(&format!("{p}.output.LayerNorm"), h, eps)?,
            });
        }
        let pooler = if pooler { w.dense(&["pooler.dense"], h).ok() } else { None };
        Ok(Encoder {
            word,
            position: w.vec("embeddings.position_embeddings.weight", max_positions * h)?,
            token_type: w.vec("embeddings.token_type_embeddings.weight", h).or_else(|_| {
                let t = w.get("embeddings.token_type_embeddings.weight")?;
                t.get(0).and_then(|r| r.to_vec1::<f32>()).map_err(|e| w.bad("embeddings.token_type_embeddings", e))
            })?,
            norm: w.norm("embeddings.LayerNorm", h, eps)?,
            layers,
            pooler,
            act,
            heads,
            hidden: h,
            max_positions,
        })
    }

    /// The last hidden states of `sentences` (token ids, segment 0), packed: row `i` of the
    /// result is token `i` of the concatenation. `jobs` threads share the non-matmul work.
    pub fn forward(&self, sentences: &[&[u32]], jobs: usize) -> Result<Vec<f32>> {
        let h = self.hidden;
        let spans = spans(sentences);
        let rows: usize = sentences.iter().map(|s| s.len()).sum();
        let mut x = vec![0f32; rows * h];
        for ((start, len), ids) in spans.iter().zip(sentences) {
            if *len > self.max_positions {
                return Err(Error::model(format!("embedding: {len} tokens, the model takes {}", self.max_positions)));
            }
            for (p, &id) in ids.iter().enumerate() {
                let row = &mut x[(start + p) * h..][..h];
                let word = self
                    .word
                    .get(id as usize * h..(id as usize + 1) * h)
                    .ok_or_else(|| Error::model(format!("embedding: token id {id} is outside the vocabulary")))?;
                let pos = &self.position[p * h..][..h];
                for (((v, a), b), c) in row.iter_mut().zip(word).zip(pos).zip(&self.token_type) {
                    *v = a + b + c;
                }
            }
        }
        self.norm.apply_rows(&mut x, None, jobs);
        for layer in &self.layers {
            let qkv = layer.qkv.apply(&x, rows, jobs);
            let ctx = attention(&qkv, &spans, self.heads, h, jobs);
            let a = layer.attn_out.apply(&ctx, rows, jobs);
            layer.norm1.apply_rows(&mut x, Some(&a), jobs);
            let mut up = layer.up.apply(&x, rows, jobs);
            for_rows(&mut up, layer.up.b.len(), jobs, |_, row| activate(self.act, row));
            let down = layer.down.apply(&up, rows, jobs);
            layer.norm2.apply_rows(&mut x, Some(&down), jobs);
        }
        Ok(x)
    }

    /// BERT's pooler over first-token rows: tanh(dense(cls)).
    pub fn pool(&self, cls: &[f32], rows: usize) -> Option<Vec<f32>> {
        let dense = self.pooler.as_ref()?;
        let mut out = dense.apply(cls, rows, 1);
        out.iter_mut().for_each(|v| *v = v.tanh());
        Some(out)
    }
}

/// (first row, length) of each sentence in the packed matrix.
pub fn spans(sentences: &[&[u32]]) -> Vec<(usize, usize)> {
    let mut start = 0;
    sentences
        .iter()
        .map(|s| {
            let span = (start, s.len());
            start += s.len();
            span
        })
        .collect()
}

impl Dense {
    /// x (rows, in) -> x W + b, (rows, out).
    fn apply(&self, x: &[f32], rows: usize, jobs: usize) -> Vec<f32> {
        let out = self.b.len();
        let mut y: Vec<f32> = Vec::with_capacity(rows * out);
        for _ in 0..rows {
            y.extend_from_slice(&self.b);
        }
        let inp = self.w.len() / out;
        matmul_add(&mut y, Mat::new(x, rows, inp), Mat::new(&self.w, inp, out), jobs);
        y
    }
}

impl Norm {
    /// x = LayerNorm(x + add) row by row.
    fn apply_rows(&self, x: &mut [f32], add: Option<&[f32]>, jobs: usize) {
        let h = self.g.len();
        for_rows(x, h, jobs, |i, row| {
            if let Some(add) = add {
                row.iter_mut().zip(&add[i * h..(i + 1) * h]).for_each(|(v, a)| *v += a);
            }
            self.apply(row);
        });
    }

    fn apply(&self, row: &mut [f32]) {
        let n = row.len() as f32;
        let mean = row.iter().sum::<f32>() / n;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
        let inv = 1.0 / (var + self.eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&self.g).zip(&self.b) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

fn activate(act: Act, row: &mut [f32]) {
    match act {
        Act::GeluErf => row.iter_mut().for_each(|v| *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2))),
        Act::GeluTanh => row.iter_mut().for_each(|v| {
            let x = *v;
            *v = 0.5 * x * (1.0 + (0.797_884_6 * (x + 0.044_715 * x * x * x)).tanh());
        }),
        Act::Relu => row.iter_mut().for_each(|v| *v = v.max(0.0)),
    }
}

/// erf for f32 as a branch-free rational approximation (the one Eigen and XLA use; within a few
/// ulp of the exact value), so GELU over a whole row vectorises.
#[inline]
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2.mul_add(-2.726_142_3e-10, 2.770_681_4e-8);
    p = x2.mul_add(p, -2.101_024e-6);
    p = x2.mul_add(p, -5.692_506_4e-5);
    p = x2.mul_add(p, -7.349_906_3e-4);
    p = x2.mul_add(p, -2.954_6e-3);
    p = x2.mul_add(p, -1.609_603_3e-2);
    let mut q = x2.mul_add(-1.456_607_2e-5, -2.133_740_6e-4);
    q = x2.mul_add(q, -1.682_827e-3);
    q = x2.mul_add(q, -7.373_329e-3);
    q = x2.mul_add(q, -1.426_474e-2);
    x * p / q
}

/// A worker's share of attention: its sentences and their rows of the output.
type Part<'a> = (&'a [(usize, usize)], &'a mut [f32]);

/// Scaled dot-product attention of each sentence over its own tokens, all heads; `qkv` rows are
/// [query | key | value].
fn attention(qkv: &[f32], spans: &[(usize, usize)], heads: usize, h: usize, jobs: usize) -> Vec<f32> {
    let rows: usize = spans.iter().map(|s| s.1).sum();
    let mut ctx = vec![0f32; rows * h];
    // Split sentences over workers at row boundaries: each worker owns a contiguous part of ctx.
    let mut parts: Vec<Part<'_>> = Vec::new();
    let mut rest: &mut [f32] = &mut ctx;
    let per = rows.div_ceil(jobs.max(1)).max(1);
    let mut i = 0;
    while i < spans.len() {
        let first = i;
        let mut take = 0;
        while i < spans.len() && (take < per || i == first) {
            take += spans[i].1;
            i += 1;
        }
        let (mine, tail) = rest.split_at_mut(take * h);
        parts.push((&spans[first..i], mine));
        rest = tail;
    }
    if parts.len() == 1 {
        let (group, out) = parts.pop().expect("one part");
        attend(qkv, group, out, heads, h);
    } else {
        std::thread::scope(|s| {
            for (group, out) in parts {
                s.spawn(move || attend(qkv, group, out, heads, h));
            }
        });
    }
    ctx
}

/// Attention for `group`'s sentences, written to `out` (their rows of the output).
fn attend(qkv: &[f32], group: &[(usize, usize)], out: &mut [f32], heads: usize, h: usize) {
    let dh = h / heads;
    let scale = 1.0 / (dh as f32).sqrt();
    let base = group[0].0;
    let mut p = Vec::new();
    for &(start, len) in group {
        for head in 0..heads {
            let col = |row: usize, which: usize| &qkv[row * 3 * h + which * h + head * dh..][..dh];
            for i in 0..len {
                let q = col(start + i, 0);
                p.clear();
                p.extend((0..len).map(|j| crate::embed::index::dot(q, col(start + j, 1)) * scale));
                let max = p.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                p.iter_mut().for_each(|v| *v = (*v - max).exp());
                let total: f32 = p.iter().sum();
                let o = &mut out[(start + i - base) * h + head * dh..][..dh];
                for (j, w) in p.iter().enumerate() {
                    let w = w / total;
                    o.iter_mut().zip(col(start + j, 2)).for_each(|(o, v)| *o += w * v);
                }
            }
        }
    }
}

/// Apply `f(row index, row)` to each `width`-sized row of `x`, rows split over `jobs` threads.
fn for_rows(x: &mut [f32], width: usize, jobs: usize, f: impl Fn(usize, &mut [f32]) + Sync) {
    if jobs <= 1 {
        x.chunks_exact_mut(width).enumerate().for_each(|(i, row)| f(i, row));
        return;
    }
    let per = (x.len() / width).div_ceil(jobs).max(1);
    std::thread::scope(|s| {
        for (c, part) in x.chunks_mut(per * width).enumerate() {
            let f = &f;
            s.spawn(move || part.chunks_exact_mut(width).enumerate().for_each(|(i, row)| f(c * per + i, row)));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_is_within_a_few_ulp_of_exact() {
        let mut worst = 0f64;
        for i in -80_000..=80_000 {
            let x = i as f64 / 10_000.0;
            worst = worst.max((erf(x as f32) as f64 - libm::erf(x)).abs());
        }
        assert!(worst < 5e-7, "max error {worst}");
    }
}
