//! The decoder both local architectures share — llama (SmolLM2) and qwen2 (Qwen2.5-Coder: biases
//! on q/k/v, NEOX rotary embedding) — with the KV cache outside the weights. candle's own models
//! keep the cache inside, so a qwen2 model could not be copied: every call re-read its prompt and
//! calls took turns on one instance. Here the weights are shared read-only by every call, and a
//! [`Cache`] is a plain value: cloning one (shared tensors, O(layers)) forks a sequence, which
//! is what prompt-prefix states and single-pass forced choice need, for both architectures.
//! The arithmetic is candle-transformers' `quantized_llama` / `quantized_qwen2`, op for op, with
//! [`Linear`] layers; logits are bit-identical to candle's (tests/models.rs).

mod kv;
mod step;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, IndexOp, Module, Result, Tensor};
use candle_nn::Embedding;

use super::qlinear::Linear;
pub use kv::Kv;

/// The llama positions candle's model precomputes (its window); qwen2 uses its own context length.
pub const LLAMA_MAX_SEQ: usize = 4096;

/// One sequence's keys and values per layer, and how many positions they hold. A copy shares
/// the layers' buffers until it writes ([`Kv`]).
#[derive(Clone, Debug, Default)]
pub struct Cache {
    layers: Vec<Arc<Kv>>,
    len: usize,
}

impl Cache {
    /// Positions read so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The bytes its layers' buffers hold (a buffer it shares counted as its own).
    pub fn bytes(&self) -> usize {
        self.layers.iter().map(|kv| kv.bytes()).sum()
    }

    /// True before the first token.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

struct Layer {
    wq: Linear,
    wk: Linear,
    wv: Linear,
    /// qwen2's q/k/v biases.
    bias: Option<(Tensor, Tensor, Tensor)>,
    wo: Linear,
    attn_norm: Tensor,
    w1: Linear,
    w2: Linear,
    w3: Linear,
    ffn_norm: Tensor,
}

/// A loaded decoder.
pub struct Transformer {
    embed: Embedding,
    layers: Vec<Layer>,
    norm: Tensor,
    output: Linear,
    eps: f32,
    n_head: usize,
    n_kv_head: usize,
    head_dim: usize,
    neox: bool,
    cos: Tensor,
    sin: Tensor,
    neg_inf: Tensor,
    masks: Mutex<HashMap<(usize, usize), Tensor>>,
    /// Positions the rotary tables cover.
    pub window: usize,
}

fn rope_tables(head_dim: usize, base: f32, len: usize) -> Result<(Tensor, Tensor)> {
    let theta: Vec<f32> = (0..head_dim).step_by(2).map(|i| 1f32 / base.powf(i as f32 / head_dim as f32)).collect();
    let theta = Tensor::new(theta.as_slice(), &Device::Cpu)?;
    let idx = Tensor::arange(0, len as u32, &Device::Cpu)?
        .to_dtype(DType::F32)?
        .reshape((len, 1))?
        .matmul(&theta.reshape((1, theta.elem_count()))?)?;
    Ok((idx.cos()?, idx.sin()?))
}

impl Transformer {
    /// The model in `ct` (architecture `llama` or `qwen2`), every weight through `linear`.
    pub fn from_gguf<R: std::io::Seek + std::io::Read>(
        ct: &gguf_file::Content,
        r: &mut R,
        linear: fn(candle_core::quantized::QTensor) -> Result<Linear>,
    ) -> Result<Transformer> {
        let arch = ct.metadata.get("general.architecture").and_then(|v| v.to_string().ok()).cloned();
        let arch = arch.unwrap_or_else(|| "llama".into());
        let qwen = arch == "qwen2";
        if !qwen && arch != "llama" {
            candle_core::bail!("architecture {arch} is not supported (llama, qwen2)");
        }
        let md = |k: &str| {
            ct.metadata.get(&format!("{arch}.{k}")).ok_or_else(|| candle_core::Error::Msg(format!("no {arch}.{k}")))
        };
        let n_head = md("attention.head_count")?.to_u32()? as usize;
        let n_kv_head = md("attention.head_count_kv")?.to_u32()? as usize;
        let blocks = md("block_count")?.to_u32()? as usize;
        let embd = md("embedding_length")?.to_u32()? as usize;
        let eps = md("attention.layer_norm_rms_epsilon")?.to_f32()?;
        let base = md("rope.freq_base").and_then(|v| v.to_f32()).unwrap_or(10000f32);
        let head_dim = embd / n_head;
        let (rope_dim, window) = if qwen {
            (head_dim, md("context_length")?.to_u32()? as usize)
        } else {
            (md("rope.dimension_count")?.to_u32()? as usize, LLAMA_MAX_SEQ)
        };
        let (cos, sin) = rope_tables(rope_dim, base, window)?;
        let dev = &Device::Cpu;
        let mut t = |name: &str| ct.tensor(r, name, dev);
        let embed_q = t("token_embd.weight")?;
        let embed = Embedding::new(embed_q.dequantize(dev)?, embd);
        let norm = t("output_norm.weight")?.dequantize(dev)?;
        let output = match t("output.weight") {
            Ok(w) => linear(w)?,
            Err(_) => linear(embed_q)?,
        };
        let mut layers = Vec::with_capacity(blocks);
        for i in 0..blocks {
            let mut w = |n: &str| t(&format!("blk.{i}.{n}"));
            let bias = if qwen {
                let mut b = |n: &str| w(n).and_then(|q| q.dequantize(dev));
                Some((b("attn_q.bias")?, b("attn_k.bias")?, b("attn_v.bias")?))
            } else {
                None
            };
            layers.push(Layer {
                wq: linear(w("attn_q.weight")?)?,
                wk: linear(w("attn_k.weight")?)?,
                wv: linear(w("attn_v.weight")?)?,
                bias,
                wo: linear(w("attn_output.weight")?)?,
                attn_norm: w("attn_norm.weight")?.dequantize(dev)?,
                w1: linear(w("ffn_gate.weight")?)?,
                w2: linear(w("ffn_down.weight")?)?,
                w3: linear(w("ffn_up.weight")?)?,
                ffn_norm: w("ffn_norm.weight")?.dequantize(dev)?,
            });
        }
        Ok(Transformer {
            embed,
            layers,
            norm,
            output,
            eps,
            n_head,
            n_kv_head,
            head_dim,
            neox: qwen,
            cos,
            sin,
            neg_inf: Tensor::new(f32::NEG_INFINITY, dev)?,
            masks: Mutex::new(HashMap::new()),
            window,
        })
    }

    fn mask(&self, seq_len: usize, pos: usize) -> Result<Tensor> {
        let mut masks = self.masks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(m) = masks.get(&(seq_len, pos + seq_len)) {
            return Ok(m.clone());
        }
        let m = causal_mask(seq_len, pos)?;
        masks.insert((seq_len, pos + seq_len), m.clone());
        Ok(m)
    }

    fn rope(&self, x: &Tensor, pos: usize) -> Result<Tensor> {
        let (_b, _h, seq_len, _d) = x.dims4()?;
        let cos = self.cos.narrow(0, pos, seq_len)?;
        let sin = self.sin.narrow(0, pos, seq_len)?;
        let x = x.contiguous()?;
        if self.neox {
            candle_nn::rotary_emb::rope(&x, &cos, &sin)
        } else {
            candle_nn::rotary_emb::rope_i(&x, &cos, &sin)
        }
    }

    /// One sequence's attention: its q, k, v projections (1, seq_len, ·) after `pos` positions
    /// whose keys and values `kv` holds (extended by these); the heads' outputs (1, seq_len, d).
    fn attention(
        &self,
        (q, k, v): (Tensor, Tensor, Tensor),
        mask: Option<&Tensor>,
        kv: &mut Arc<Kv>,
        pos: usize,
    ) -> Result<Tensor> {
        let (b, seq_len, n_embd) = q.dims3()?;
        let q = q.reshape((b, seq_len, self.n_head, self.head_dim))?.transpose(1, 2)?;
        let k = k.reshape((b, seq_len, self.n_kv_head, self.head_dim))?.transpose(1, 2)?;
        let v = v.reshape((b, seq_len, self.n_kv_head, self.head_dim))?.transpose(1, 2)?.contiguous()?;
        let q = self.rope(&q, pos)?;
        let k = self.rope(&k, pos)?;
        if kv.len() != pos {
            candle_core::bail!("a cache of {} positions read at position {pos}", kv.len());
        }
        let flat = |t: &Tensor| t.flatten_all().and_then(|t| t.to_vec1::<f32>());
        Arc::make_mut(kv).push(&flat(&k)?, &flat(&v)?, seq_len);
        let (k, v) = kv.tensors()?;
        let rep = self.n_head / self.n_kv_head;
        let k = repeat_kv(k, rep)?;
        let v = repeat_kv(v, rep)?;
        let att = (q.matmul(&k.t()?)? / (self.head_dim as f64).sqrt())?;
        let att = match mask {
            None => att,
            Some(m) => {
                let m = m.broadcast_as(att.shape())?;
                m.where_cond(&self.neg_inf.broadcast_as(m.shape().dims())?, &att)?
            }
        };
        let att = candle_nn::ops::softmax_last_dim(&att)?;
        let y = att.matmul(&v.contiguous()?)?;
        y.transpose(1, 2)?.reshape(&[b, seq_len, n_embd])
    }

    /// One decoder block on `h` (1, seq_len, d) of one sequence after `pos` positions, whose
    /// keys and values `kv` holds (extended by these).
    fn block(&self, l: &Layer, h: &Tensor, mask: Option<&Tensor>, kv: &mut Arc<Kv>, pos: usize) -> Result<Tensor> {
        let x = candle_nn::ops::rms_norm(h, &l.attn_norm, self.eps)?;
        let qkv = Linear::forward_group(&[&l.wq, &l.wk, &l.wv], &x)?;
        let [mut q, mut k, mut v]: [Tensor; 3] =
            qkv.try_into().map_err(|_| candle_core::Error::Msg("three projections".into()))?;
        if let Some((bq, bk, bv)) = &l.bias {
            q = q.broadcast_add(bq)?;
            k = k.broadcast_add(bk)?;
            v = v.broadcast_add(bv)?;
        }
        let x = (l.wo.forward(&self.attention((q, k, v), mask, kv, pos)?)? + h)?;
        let y = candle_nn::ops::rms_norm(&x, &l.ffn_norm, self.eps)?;
        let gate_up = Linear::forward_group(&[&l.w1, &l.w3], &y)?;
        let [gate, up]: [Tensor; 2] = gate_up.try_into().map_err(|_| candle_core::Error::Msg("gate, up".into()))?;
        let y = l.w2.forward(&(candle_nn::ops::silu(&gate)? * up)?)?;
        y + x
    }

    /// Read `ids` after the positions `cache` holds; the logits of the token after the last.
    pub fn forward(&self, ids: &[u32], cache: &mut Cache) -> Result<Tensor> {
        let pos = cache.len;
        if ids.is_empty() {
            candle_core::bail!("no tokens to read");
        }
        self.fits(pos + ids.len())?;
        self.prepare(cache);
        let x = Tensor::new(ids, &Device::Cpu)?.unsqueeze(0)?;
        let seq_len = ids.len();
        let mask = if seq_len == 1 { None } else { Some(self.mask(seq_len, pos)?) };
        let mut h = self.embed.forward(&x)?;
        for (l, kv) in self.layers.iter().zip(cache.layers.iter_mut()) {
            h = self.block(l, &h, mask.as_ref(), kv, pos)?;
        }
        cache.len = pos + seq_len;
        let x = candle_nn::ops::rms_norm(&h, &self.norm, self.eps)?;
        let x = x.i((.., seq_len - 1, ..))?;
        self.output.forward(&x)?.squeeze(0)
    }

    /// Give a new cache its layers' (empty) buffers.
    fn prepare(&self, cache: &mut Cache) {
        if cache.layers.len() != self.layers.len() {
            cache.layers = (0..self.layers.len()).map(|_| Arc::new(Kv::new(self.n_kv_head, self.head_dim))).collect();
        }
    }

    fn fits(&self, positions: usize) -> Result<()> {
        if positions > self.window {
            candle_core::bail!("{positions} positions exceed the model's {}-token window", self.window);
        }
        Ok(())
    }
}

/// 1 where key `j` lies after query `i` (at position `pos + i`): the keys a query may not see.
fn causal_mask(seq_len: usize, pos: usize) -> Result<Tensor> {
    let mask: Vec<u8> = (0..seq_len).flat_map(|i| (0..pos + seq_len).map(move |j| u8::from(j > pos + i))).collect();
    Tensor::from_slice(&mask, (seq_len, pos + seq_len), &Device::Cpu)
}

/// Each of the `n_kv_head` key/value heads repeated `rep` times, as the query heads share them
/// (one copy by concatenation, as candle does it: a broadcast would be a strided copy).
fn repeat_kv(x: Tensor, rep: usize) -> Result<Tensor> {
    if rep == 1 {
        return Ok(x);
    }
    let (b, n_kv_head, seq_len, head_dim) = x.dims4()?;
    Tensor::cat(&vec![&x; rep], 2)?.reshape((b, n_kv_head * rep, seq_len, head_dim))
}
