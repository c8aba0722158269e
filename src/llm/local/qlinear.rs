//! The transformer's linear layers: a quantized weight matrix times a batch of activation rows.
//! Q4_1 and Q5_0 weights (candle 0.11 runs them with scalar loops) are unpacked at load into
//! plain arrays — in [`super::tiles`]' VNNI tiles where the CPU has AVX-512 VNNI, else row by
//! row for [`super::kernels`]' AVX2 integer sums — and multiplied with the activations
//! quantized to Q8_1 / Q8_0 exactly as candle does and the block floats accumulated in candle's
//! order, so every output value is bit-identical to candle's `QMatMul` (the test below) and the
//! model identity does not change. Every other format goes to candle's own `QMatMul`.
//! Work is split over output columns on candle's own worker pool; each weight row is read once
//! per call and multiplied with every activation row while it is in cache (prompt chunks).

use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, AtomicU32, Ordering};

use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{CpuStorage, CustomOp1, Layout, Module, Result, Shape, Tensor};
use half::f16;

use super::kernels::{ActRows, COLS, QK, WeightRow, block_sums, dot_cols};
use super::q6k::{Q6Tiles, Q8kRows};
use super::tiles::{self, TILE, Tiles};

/// A linear layer without bias: y = x Wᵀ.
#[derive(Clone, Debug)]
pub enum Linear {
    /// A format candle runs well (Q8_0, the K-quants, floats).
    Candle(QMatMul),
    /// Q4_1 or Q5_0 weights, unpacked.
    Packed(Arc<Packed>),
    /// Q6_K where the CPU has VNNI: candle's `QMatMul` for [`Linear::forward`] (one row, and
    /// prompt chunks with candle's own multi-row kernel), and [`super::q6k`]'s tiles, with
    /// candle's one-row arithmetic, where several rows must each get their one-row bits.
    Q6k(QMatMul, Arc<Packed>),
}

impl Linear {
    /// The layer for `t` (n x k): unpacked when its format is Q4_1 or Q5_0, else candle's.
    pub fn new(t: QTensor) -> Result<Linear> {
        match t.dtype() {
            GgmlDType::Q4_1 | GgmlDType::Q5_0 => Ok(Linear::Packed(Arc::new(Packed::new(&t)?))),
            // Q8_0 in tiles where they run on VNNI, and where candle computes with its AVX2
            // loop, whose arithmetic the tiles reproduce: rows not whole 256-value super-blocks
            // (candle repacks the others into its own VNNI tiles, in another order).
            GgmlDType::Q8_0 if tiles::pay() && !t.shape().dims2()?.1.is_multiple_of(256) => {
                Ok(Linear::Packed(Arc::new(Packed::laid_out(&t, true)?)))
            }
            GgmlDType::Q6K if tiles::pay() => {
                let p = Packed::q6k(&t)?;
                Ok(Linear::Q6k(QMatMul::from_qtensor(t)?, Arc::new(p)))
            }
            _ => Linear::candle(t),
        }
    }

    /// candle's own `QMatMul` for `t`, whatever its format (the reference in tests).
    pub fn candle(t: QTensor) -> Result<Linear> {
        Ok(Linear::Candle(QMatMul::from_qtensor(t)?))
    }

    /// x (…, k) → (…, n).
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Linear::Candle(m) | Linear::Q6k(m, _) => m.forward(x),
            Linear::Packed(p) => x.apply_op1_no_bwd(p.as_ref()),
        }
    }

    /// Every layer of `layers` applied to the same `x` (q/k/v, gate/up): [`Linear::apply_group`]
    /// on a tensor, x's leading dimensions kept.
    pub fn forward_group(layers: &[&Linear], x: &Tensor) -> Result<Vec<Tensor>> {
        let dims = x.dims().to_vec();
        let k = *dims.last().ok_or_else(|| candle_core::Error::Msg("a scalar input".into()))?;
        let flat = x.flatten_all()?.to_vec1::<f32>()?;
        let rows = flat.len() / k.max(1);
        let mut out = Vec::with_capacity(layers.len());
        for v in Linear::apply_group(layers, &flat, rows)? {
            let mut shape = dims.clone();
            shape.pop();
            shape.push(v.len() / rows.max(1));
            out.push(Tensor::from_vec(v, shape, x.device())?);
        }
        Ok(out)
    }

    /// Every layer of `layers` applied to the same `rows` x k values `x`, each output row as if
    /// alone ([`Linear::forward_rows`]): the packed layers from one quantization of `x` in one
    /// parallel region, the others (candle's) one by one. Each output is bit-identical to the
    /// layer's own [`Linear::forward`] (the packed layers quantize exactly as they would alone).
    pub fn apply_group(layers: &[&Linear], x: &[f32], rows: usize) -> Result<Vec<Vec<f32>>> {
        let packed: Vec<&Packed> = layers.iter().filter_map(|l| l.packed(rows)).collect();
        if let Some(p) = packed.iter().find(|p| p.k * rows != x.len()) {
            candle_core::bail!("{} values are not {rows} rows of {}", x.len(), p.k);
        }
        let mut from_packed = Packed::matmul_group(&packed, x).into_iter();
        let mut out = Vec::with_capacity(layers.len());
        for l in layers {
            if l.packed(rows).is_some() {
                out.push(from_packed.next().ok_or_else(|| candle_core::Error::Msg("packed group".into()))?)
            } else {
                let t = Tensor::from_slice(x, (rows, x.len() / rows.max(1)), &candle_core::Device::Cpu)?;
                out.push(l.forward_rows(&t)?.flatten_all()?.to_vec1::<f32>()?);
            }
        }
        Ok(out)
    }

    /// The unpacked weights that give each of `rows` rows its one-row bits: a packed layer's;
    /// Q6_K's tiles for more than one row (at one row candle's kernel reads fewer bytes: its
    /// compact blocks hold 0.82 bytes a value, the tiles 1.25).
    fn packed(&self, rows: usize) -> Option<&Packed> {
        match self {
            Linear::Packed(p) => Some(p),
            Linear::Q6k(_, p) if rows > 1 => Some(p),
            _ => None,
        }
    }

    /// [`Linear::apply_group`] of this layer alone.
    pub fn apply(&self, x: &[f32], rows: usize) -> Result<Vec<f32>> {
        Linear::apply_group(&[self], x, rows)?.pop().ok_or_else(|| candle_core::Error::Msg("one layer".into()))
    }

    /// True when each row of a multi-row input gives the bits it gives alone, so rows of several
    /// sequences can share a call: lucid's packed kernels (each row its own sum), and candle's
    /// formats whose kernel is the same at every row count up to [`MAX_ROWS`] (tested for
    /// each claimed format in tests/models.rs). candle reads Q6_K with a compact kernel at one
    /// row and repacked tiles at more, and float matrices through gemm's size-dependent blocking:
    /// those are read row by row.
    pub fn rows_independent(&self) -> bool {
        use candle_core::quantized::QMatMul;
        match self {
            Linear::Packed(_) => true,
            Linear::Candle(QMatMul::QTensor(t)) => ROW_INDEPENDENT.contains(&t.dtype()),
            Linear::Candle(_) | Linear::Q6k(..) => false,
        }
    }

    /// x (rows, …, k) → (rows, …, n), one call when [`Linear::rows_independent`], else row by
    /// row: each row's values as if it were alone.
    pub fn forward_rows(&self, x: &Tensor) -> Result<Tensor> {
        let rows = x.dim(0)?;
        if rows == 1 || self.rows_independent() {
            return self.forward(x);
        }
        if let Some(p) = self.packed(rows) {
            let mut dims = x.dims().to_vec();
            let out = p.matmul(&x.flatten_all()?.to_vec1::<f32>()?);
            dims.pop();
            dims.push(p.n);
            return Tensor::from_vec(out, dims, x.device());
        }
        let each: Vec<Tensor> = (0..rows).map(|i| self.forward(&x.narrow(0, i, 1)?)).collect::<Result<_>>()?;
        Tensor::cat(&each, 0)
    }
}

/// The most rows [`Linear::forward_rows`] is used with (sequences decoded together).
pub const MAX_ROWS: usize = 8;

/// candle formats whose multi-row kernel gives each row its one-row bits (up to [`MAX_ROWS`]).
pub const ROW_INDEPENDENT: &[GgmlDType] = &[GgmlDType::Q8_0, GgmlDType::Q4K, GgmlDType::Q5K, GgmlDType::Q4_0];

/// Unpacked Q4_1 or Q5_0 weights: n rows of k values, `k / 32` blocks each.
#[derive(Debug)]
pub struct Packed {
    n: usize,
    k: usize,
    /// Q4_1 or Q5_0.
    dtype: GgmlDType,
    /// Each block's 16 bytes of nibbles.
    qs: Vec<[u8; 16]>,
    /// Each block's scale (its f16, widened exactly).
    d: Vec<f32>,
    /// Q4_1: each block's minimum; Q5_0: empty.
    m: Vec<f32>,
    /// Q5_0: each block's fifth bits; Q4_1: empty.
    qh: Vec<u32>,
    /// The same weights in VNNI tiles where the CPU runs them (the row arrays above are then
    /// empty; Q8_0 is held in tiles only).
    tiles: Option<Tiles>,
    /// Q6_K's tiles (the only layout of a Q6_K layer).
    q6: Option<Q6Tiles>,
}

fn half_at(b: &[u8], at: usize) -> f32 {
    f16::from_le_bytes([b[at], b[at + 1]]).to_f32()
}

impl Packed {
    /// The weights of `t`, in VNNI tiles where this CPU has VNNI, else row by row.
    fn new(t: &QTensor) -> Result<Packed> {
        Packed::laid_out(t, tiles::pay())
    }

    /// The weights of `t`, in tiles or row by row.
    fn laid_out(t: &QTensor, tiled: bool) -> Result<Packed> {
        if t.dtype() == GgmlDType::Q8_0 {
            return Packed::q8_0(t);
        }
        let mut p = Packed::rows(t)?;
        if tiled {
            let tiles = Tiles::new(p.n, p.k / QK, |j| p.row(j));
            (p.qs, p.d, p.m, p.qh) = (vec![], vec![], vec![], vec![]);
            p.tiles = Some(tiles);
        }
        Ok(p)
    }

    /// Q8_0 weights `t` in tiles.
    fn q8_0(t: &QTensor) -> Result<Packed> {
        let (n, k) = t.shape().dims2()?;
        let data = t.data()?;
        if !k.is_multiple_of(QK) || data.len() != n * k / QK * 34 {
            candle_core::bail!("Q8_0 data of {} bytes for a {n} x {k} matrix", data.len());
        }
        let (mut qs, mut d) = (Vec::with_capacity(n * k / QK), Vec::with_capacity(n * k / QK));
        for b in data.chunks_exact(34) {
            d.push(half_at(b, 0));
            qs.push(std::array::from_fn::<i8, 32, _>(|j| b[2 + j] as i8));
        }
        let kb = k / QK;
        let tiles = Tiles::q8_0(n, kb, |j| (&qs[j * kb..(j + 1) * kb], &d[j * kb..(j + 1) * kb]));
        Ok(Packed { tiles: Some(tiles), ..Packed::bare(n, k, GgmlDType::Q8_0) })
    }

    /// An n x k layer of `dtype` with no weights yet in any layout.
    fn bare(n: usize, k: usize, dtype: GgmlDType) -> Packed {
        Packed { n, k, dtype, qs: vec![], d: vec![], m: vec![], qh: vec![], tiles: None, q6: None }
    }

    /// Q6_K weights `t` in tiles.
    fn q6k(t: &QTensor) -> Result<Packed> {
        let (n, k) = t.shape().dims2()?;
        let q6 = Q6Tiles::new(&t.data()?, n, k)?;
        Ok(Packed { q6: Some(q6), ..Packed::bare(n, k, GgmlDType::Q6K) })
    }

    /// The weights of `t` row by row.
    fn rows(t: &QTensor) -> Result<Packed> {
        let (n, k) = t.shape().dims2()?;
        if !k.is_multiple_of(QK) {
            candle_core::bail!("a {:?} matrix needs rows of whole {QK}-value blocks, not {k}", t.dtype());
        }
        let data = t.data()?;
        let size = if t.dtype() == GgmlDType::Q4_1 { 20 } else { 22 };
        if data.len() != n * k / QK * size {
            candle_core::bail!("{:?} data of {} bytes for a {n} x {k} matrix", t.dtype(), data.len());
        }
        let mut p = Packed::bare(n, k, t.dtype());
        for b in data.chunks_exact(size) {
            p.d.push(half_at(b, 0));
            let qs = if size == 20 {
                p.m.push(half_at(b, 2));
                &b[4..20]
            } else {
                p.qh.push(u32::from_le_bytes([b[2], b[3], b[4], b[5]]));
                &b[6..22]
            };
            p.qs.push(qs.try_into().map_err(|_| candle_core::Error::Msg("block size".into()))?);
        }
        Ok(p)
    }

    /// Weight row `j`.
    fn row(&self, j: usize) -> WeightRow<'_> {
        let kb = self.k / QK;
        let r = j * kb..(j + 1) * kb;
        let q4 = self.dtype == GgmlDType::Q4_1;
        WeightRow {
            qs: &self.qs[r.clone()],
            d: &self.d[r.clone()],
            m: if q4 { &self.m[r.clone()] } else { &[] },
            qh: if q4 { &[] } else { &self.qh[r] },
        }
    }

    /// dst (rows x n, row-major) = x (rows x k) Wᵀ.
    fn matmul(&self, x: &[f32]) -> Vec<f32> {
        Packed::matmul_group(&[self], x).pop().unwrap_or_default()
    }

    /// dst_i (rows x n_i) = x (rows x k) W_iᵀ for every layer of `group` (all of width k): `x`
    /// quantized once (Q8_1's block sums computed alongside, so one quantization serves Q4_1 and
    /// Q5_0 layers alike), and the output columns of every layer shared out in one region of
    /// candle's worker pool, each weight row read once for every activation row.
    fn matmul_group(group: &[&Packed], x: &[f32]) -> Vec<Vec<f32>> {
        let Some(k) = group.first().map(|p| p.k) else { return vec![] };
        let rows = x.len() / k;
        // Each quantization only where a layer of the group reads it.
        let q8k = group.iter().any(|p| p.q6.is_some()).then(|| Q8kRows::quantize(x));
        let acts = if group.iter().any(|p| p.q6.is_none()) { Acts::quantize(x) } else { Acts::default() };
        let acts =
            ActRows { qs: &acts.qs, d: &acts.d, s: &acts.s, sum: &acts.sum, base5: &acts.base5, base8: &acts.base8 };
        let dst: Vec<Vec<AtomicU32>> =
            group.iter().map(|p| (0..rows * p.n).map(|_| AtomicU32::new(0)).collect()).collect();
        // Work in units of neighbouring columns of one layer: a tile, or COLS rows.
        let tiled = |p: &Packed| p.tiles.is_some() || p.q6.is_some();
        let width = |p: &Packed| if tiled(p) { TILE } else { COLS };
        let starts: Vec<usize> =
            group.iter().scan(0, |at, p| Some(std::mem::replace(at, *at + p.n.div_ceil(width(p))))).collect();
        let total: usize = group.iter().map(|p| p.n.div_ceil(width(p))).sum();
        let columns = |units: std::ops::Range<usize>| {
            let mut out = vec![0f32; rows * TILE.max(COLS)];
            for unit in units {
                let g = starts.partition_point(|&s| s <= unit) - 1;
                let (p, u) = (group[g], unit - starts[g]);
                let (j, w) = (u * width(p), width(p));
                let nc = w.min(p.n - j);
                match (&p.tiles, &p.q6, &q8k) {
                    (Some(t), _, _) => t.dot(u, &acts, &mut out[..rows * TILE]),
                    (None, Some(t), Some(q8k)) => t.dot(u, q8k, &mut out[..rows * TILE]),
                    _ => {
                        let ws: [WeightRow<'_>; COLS] = std::array::from_fn(|k| p.row(j + k.min(nc - 1)));
                        dot_cols(&ws[..nc], &acts, &mut out[..rows * nc]);
                    }
                }
                let stride = if tiled(p) { TILE } else { nc };
                for i in 0..rows {
                    for k in 0..nc {
                        dst[g][i * p.n + j + k].store(out[i * stride + k].to_bits(), Ordering::Relaxed);
                    }
                }
            }
        };
        share(total, columns);
        dst.into_iter().map(|d| d.into_iter().map(|v| f32::from_bits(v.into_inner())).collect()).collect()
    }
}

/// `work` over 0..n shared out on candle's worker pool in chunks, or all on this thread while
/// several calls are computing: each keeps to its own thread rather than queueing for the
/// shared pool. Work whose values do not depend on which thread computes them only.
pub fn share(n: usize, work: impl Fn(std::ops::Range<usize>) + Sync) {
    if Caller::concurrent() {
        work(0..n);
    } else {
        candle_core::utils::barrier_pool().execute_chunked(n, work);
    }
}

/// Model calls computing right now, process-wide.
static CALLERS: AtomicIsize = AtomicIsize::new(0);

/// A model call in progress (counted while it lives): with more than one, packed matmuls run on
/// their caller's thread instead of handing work to candle's pool, which takes one caller at a
/// time and spins its workers while the others wait.
pub struct Caller(());

impl Caller {
    /// Count a call until the returned value is dropped.
    pub fn enter() -> Caller {
        CALLERS.fetch_add(1, Ordering::Relaxed);
        Caller(())
    }

    fn concurrent() -> bool {
        CALLERS.load(Ordering::Relaxed) > 1
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        CALLERS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A counted call that is waiting (for a step another thread computes for it): uncounted while
/// this lives, so that the computing thread has the worker pool.
pub struct Idle(());

impl Idle {
    /// Uncount one call until the returned value is dropped.
    pub fn begin() -> Idle {
        CALLERS.fetch_sub(1, Ordering::Relaxed);
        Idle(())
    }
}

impl Drop for Idle {
    fn drop(&mut self) {
        CALLERS.fetch_add(1, Ordering::Relaxed);
    }
}

/// Activation rows quantized as candle quantizes them for these formats: Q8_1 (with the block
/// sum `s`) for Q4_1 weights, Q8_0 for Q5_0 weights (the same bytes and scale: Q8_0 is Q8_1
/// without `s`); scales rounded through f16 as candle stores them.
#[derive(Default)]
struct Acts {
    qs: Vec<[i8; 32]>,
    d: Vec<f32>,
    /// Q8_1's s = f16(Σq) · f16(d), in f16 arithmetic.
    s: Vec<f32>,
    /// Σq as an integer (for the Q5_0 kernel's offset).
    sum: Vec<i32>,
    /// The tiles' starting sums ([`ActRows::base5`], [`ActRows::base8`]).
    base5: Vec<i32>,
    base8: Vec<[i32; 8]>,
}

impl Acts {
    fn quantize(x: &[f32]) -> Acts {
        let blocks = x.len() / QK;
        let mut a = Acts {
            qs: Vec::with_capacity(blocks),
            d: Vec::with_capacity(blocks),
            s: Vec::with_capacity(blocks),
            sum: Vec::with_capacity(blocks),
            base5: Vec::with_capacity(blocks),
            base8: Vec::with_capacity(blocks),
        };
        for xs in x.chunks_exact(QK) {
            let xs: &[f32; QK] = xs.try_into().expect("a block");
            let d = tiles::amax(xs) / 127.0;
            let id = if d != 0f32 { 1. / d } else { 0. };
            let dh = f16::from_f32(d);
            let q = tiles::round_scaled(xs, id);
            let (sum, base5, base8) = block_sums(&q);
            a.s.push((f16::from_f32(sum as f32) * dh).to_f32());
            a.base5.push(base5);
            a.base8.push(base8);
            a.qs.push(q);
            a.d.push(dh.to_f32());
            a.sum.push(sum);
        }
        a
    }
}

impl CustomOp1 for Packed {
    fn name(&self) -> &'static str {
        "lucid-packed-matmul"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(all) = storage else { candle_core::bail!("{} takes f32 input", self.name()) };
        if !layout.is_contiguous() {
            candle_core::bail!("{} takes contiguous input", self.name());
        }
        let mut dims = layout.shape().dims().to_vec();
        if dims.last() != Some(&self.k) {
            candle_core::bail!("input {dims:?} does not end in {}", self.k);
        }
        let x = &all[layout.start_offset()..layout.start_offset() + layout.shape().elem_count()];
        let dst = self.matmul(x);
        dims.pop();
        dims.push(self.n);
        Ok((CpuStorage::F32(dst), Shape::from(dims)))
    }
}

#[cfg(test)]
#[path = "qlinear_tests.rs"]
mod tests;
