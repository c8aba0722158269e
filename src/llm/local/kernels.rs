//! The second audited `unsafe` module: candle's own f32 reductions (the softmax's, called
//! through its raw-pointer API on slices), and integer dot products of GGUF weight blocks with
//! quantized activation blocks, for the two formats candle 0.11 runs with scalar code only (Q4_1:
//! SmolLM2's file; Q5_0: most of Qwen2.5-Coder's tensors), held row by row where the CPU lacks
//! AVX-512 VNNI (with it they are in [`super::tiles`]). Each block's integer sum is exact — the
//! same `i32` candle's scalar loop computes — and the floats are accumulated in candle's order,
//! so the model's logits are bit-identical to candle's (tested in [`super::qlinear`]). The only
//! unsafe operations are calls of the AVX2 functions under a build-wide AVX2 cfg, and unaligned
//! loads and stores of fixed-size arrays (4 or 8 floats, 16 or 32 bytes); the block sums are
//! tested here against their scalar twins on random blocks, and the column loop against the
//! portable one.
#![allow(unsafe_code)]

/// Values per block (both formats, and their activation blocks).
pub const QK: usize = 32;

/// The largest value of `xs` (non-empty), by candle's own reduction (its softmax's maximum).
pub fn reduce_max(xs: &[f32]) -> f32 {
    use candle_core::cpu::kernels::VecOps;
    assert!(!xs.is_empty(), "a maximum of no values");
    let mut m = f32::NEG_INFINITY;
    // SAFETY: the pointer and length come from one slice, at least one value long.
    unsafe { f32::vec_reduce_max(xs.as_ptr(), &mut m, xs.len()) };
    m
}

/// The sum of `xs`, by candle's own reduction (its softmax's denominator: SIMD lanes where the
/// CPU has them, so its rounding is candle's and not a left-to-right sum's).
pub fn reduce_sum(xs: &[f32]) -> f32 {
    use candle_core::cpu::kernels::VecOps;
    let mut s = 0f32;
    // SAFETY: the pointer and length come from one slice.
    unsafe { f32::vec_reduce_sum(xs.as_ptr(), &mut s, xs.len()) };
    s
}

/// Σ_j lo(w_j)·y_j + hi(w_j)·y_{j+16}: a Q4_1 block's 4-bit values (low nibbles are elements
/// 0..16, high nibbles 16..32) against a Q8_1 block's 32 signed bytes.
#[inline]
pub fn isum_q4(w: &[u8; 16], y: &[i8; 32]) -> i32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        // SAFETY: AVX2 is enabled for the whole build (this branch's cfg).
        unsafe { avx2::isum_q4(w, y) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        scalar_isum_q4(w, y)
    }
}

/// Σ_e (u_e − 16)·y_e of a Q5_0 block (u_e: nibble e plus bit e of `qh` as its fifth bit) against
/// a Q8_0 block; `ysum` is Σ y_e, computed once per activation block.
#[inline]
pub fn isum_q5(w: &[u8; 16], qh: u32, y: &[i8; 32], ysum: i32) -> i32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        // SAFETY: AVX2 is enabled for the whole build (this branch's cfg).
        unsafe { avx2::isum_q5(w, qh, y) - 16 * ysum }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        let _ = ysum;
        scalar_isum_q5(w, qh, y)
    }
}

/// One weight row's blocks and scales: `qs` and `d` (and Q4_1's minima `m`, Q5_0's fifth bits
/// `qh`; the other empty), `kb` blocks.
pub struct WeightRow<'a> {
    /// Nibbles, 16 bytes a block.
    pub qs: &'a [[u8; 16]],
    /// Scales.
    pub d: &'a [f32],
    /// Q4_1's minima.
    pub m: &'a [f32],
    /// Q5_0's fifth bits.
    pub qh: &'a [u32],
}

/// Quantized activation rows, `kb` blocks each: bytes, scales, Q8_1's `s` (Q4_1 only), Σ bytes.
pub struct ActRows<'a> {
    /// Signed bytes, 32 a block.
    pub qs: &'a [[i8; 32]],
    /// Scales.
    pub d: &'a [f32],
    /// Q8_1's f16(Σq)·f16(d) (Q4_1 weights only).
    pub s: &'a [f32],
    /// Σq per block.
    pub sum: &'a [i32],
    /// −16·Σq per block: the Q5_0 tiles' starting sums in [`super::tiles`] (empty elsewhere).
    pub base5: &'a [i32],
    /// −128·Σq of each four bytes, per block: the Q8_0 tiles' starting sums (empty elsewhere).
    pub base8: &'a [[i32; 8]],
}

/// An activation block's Σq, and its tiles' starting sums ([`ActRows::base5`], [`ActRows::base8`]).
pub fn block_sums(q: &[i8; 32]) -> (i32, i32, [i32; 8]) {
    let sum: i32 = q.iter().map(|&v| v as i32).sum();
    (sum, -16 * sum, std::array::from_fn(|c| -128 * q[4 * c..4 * c + 4].iter().map(|&v| v as i32).sum::<i32>()))
}

/// out[i] = weight row `w` · activation row i, for every row of `x` ([`dot_cols`] of one
/// column).
pub fn dot_rows(w: &WeightRow<'_>, x: &ActRows<'_>, out: &mut [f32]) {
    dot_cols(std::slice::from_ref(w), x, out)
}

/// Columns computed together by [`dot_cols`] (their sums are independent chains of additions
/// the CPU overlaps).
pub const COLS: usize = 4;

/// out[i·c + j] = weight row `ws[j]` · activation row i, for every row of `x` and the
/// c = `ws.len()` (at most [`COLS`]) weight rows, each accumulated block by block in candle's
/// order: `sumf += sumi·d_w·d_x (+ m_w·s_x for Q4_1)`. The integer sums come eight blocks at a
/// time, the eight block terms are formed lane-wise (the same IEEE operations as the scalar
/// expression) and added to `sumf` one by one, in block order; a last group of fewer than eight
/// blocks is padded with zero blocks whose terms are never added. With AVX2 each group of
/// eight weight blocks is widened once and used for every activation row, the columns' sums
/// advance together.
pub fn dot_cols(ws: &[WeightRow<'_>], x: &ActRows<'_>, out: &mut [f32]) {
    assert!(!ws.is_empty() && ws.len() <= COLS, "1 to {COLS} weight rows");
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        // SAFETY: AVX2 is enabled for the whole build (this branch's cfg).
        unsafe { avx2::dot_cols(ws, x, out) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        let (nc, rows) = (ws.len(), out.len() / ws.len());
        let mut one = vec![0f32; rows];
        for (j, w) in ws.iter().enumerate() {
            dot_rows_portable(w, x, &mut one);
            (0..rows).for_each(|i| out[i * nc + j] = one[i]);
        }
    }
}

/// [`dot_rows`] one block at a time with the single-block sums (the reference the AVX2 row loop
/// is tested against, and the path without AVX2).
pub fn dot_rows_portable(w: &WeightRow<'_>, x: &ActRows<'_>, out: &mut [f32]) {
    let kb = w.qs.len();
    for (i, o) in out.iter_mut().enumerate() {
        let mut sumf = 0f32;
        for b in 0..kb {
            sumf += block_term(w, b, x, i * kb + b);
        }
        *o = sumf;
    }
}

/// One block's term of a dot product, as candle's scalar loop forms it: weight block `b` of `w`
/// against activation block `a` of `x`.
#[inline]
pub fn block_term(w: &WeightRow<'_>, b: usize, x: &ActRows<'_>, a: usize) -> f32 {
    if !w.m.is_empty() {
        isum_q4(&w.qs[b], &x.qs[a]) as f32 * w.d[b] * x.d[a] + w.m[b] * x.s[a]
    } else {
        isum_q5(&w.qs[b], w.qh[b], &x.qs[a], x.sum[a]) as f32 * w.d[b] * x.d[a]
    }
}

/// candle's scalar Q4_1 x Q8_1 integer sum (the reference).
pub fn scalar_isum_q4(w: &[u8; 16], y: &[i8; 32]) -> i32 {
    (0..16).map(|j| (w[j] & 0x0F) as i32 * y[j] as i32 + (w[j] >> 4) as i32 * y[j + 16] as i32).sum()
}

/// candle's scalar Q5_0 x Q8_0 integer sum (the reference).
pub fn scalar_isum_q5(w: &[u8; 16], qh: u32, y: &[i8; 32]) -> i32 {
    (0..16)
        .map(|j| {
            let h0 = (((qh >> j) & 1) << 4) as i32;
            let h1 = (((qh >> (j + 16)) & 1) << 4) as i32;
            let x0 = ((w[j] & 0x0F) as i32 | h0) - 16;
            let x1 = ((w[j] >> 4) as i32 | h1) - 16;
            x0 * y[j] as i32 + x1 * y[j + 16] as i32
        })
        .sum()
}

/// The loop of [`dot_cols`] for `$nc` columns: a macro so that the column count is a constant
/// inside the AVX2 function (the sums stay in registers, the loops unroll).
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
macro_rules! cols_body {
    ($ws:expr, $x:expr, $out:expr, $nc:literal) => {{
        const NC: usize = $nc;
        let (ws, x, out): (&[super::WeightRow<'_>], &super::ActRows<'_>, &mut [f32]) = ($ws, $x, $out);
        let kb = ws[0].qs.len();
        let rows = out.len() / NC;
        let q4 = !ws[0].m.is_empty();
        out.iter_mut().for_each(|o| *o = 0.0);
        let zero = _mm256_setzero_si256();
        let mut g = 0;
        while g < kb {
            let r = (kb - g).min(8);
            let widen = |c: usize, b: usize| {
                let w = &ws[c];
                if b >= r {
                    zero
                } else if q4 {
                    nibbles(&w.qs[g + b])
                } else {
                    fives(&w.qs[g + b], w.qh[g + b])
                }
            };
            // With several rows each weight block is widened once for all of them; with one or
            // two, where widening them all first would spill registers, as each is used.
            let stream = rows <= 2;
            let u: [[__m256i; 8]; NC] =
                std::array::from_fn(|c| std::array::from_fn(|b| if stream { zero } else { widen(c, b) }));
            let wf = |v: &[f32]| if r == 8 { load8(&v[g..]) } else { load8(&pad8(v, g)) };
            let dw: [__m256; NC] = std::array::from_fn(|c| wf(ws[c].d));
            let mw: [__m256; NC] = std::array::from_fn(|c| if q4 { wf(ws[c].m) } else { _mm256_setzero_ps() });
            for i in 0..rows {
                let a = i * kb + g;
                let y: [__m256i; 8] = std::array::from_fn(|b| if b < r { load(&x.qs[a + b]) } else { zero });
                let xf = |v: &[f32]| if r == 8 { load8(&v[a..]) } else { load8(&pad8(&v[..a + r], a)) };
                let xd = xf(x.d);
                let xs = if q4 { xf(x.s) } else { _mm256_setzero_ps() };
                let xsum = if q4 {
                    zero
                } else if r == 8 {
                    load8i(&x.sum[a..])
                } else {
                    load8i(&pad8(&x.sum[..a + r], a))
                };
                let terms: [__m256; NC] = std::array::from_fn(|c| {
                    let sums = sums_avx2(&std::array::from_fn(|b| if stream { widen(c, b) } else { u[c][b] }), &y);
                    if q4 {
                        let f = _mm256_cvtepi32_ps(sums);
                        _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(f, dw[c]), xd), _mm256_mul_ps(mw[c], xs))
                    } else {
                        let sums = _mm256_sub_epi32(sums, _mm256_slli_epi32(xsum, 4));
                        _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(sums), dw[c]), xd)
                    }
                });
                let o: &mut [f32; NC] = (&mut out[i * NC..(i + 1) * NC]).try_into().expect("NC sums");
                if NC == 4 && r == 8 {
                    // Block b's four column terms in one vector (a 4 x 8 transpose), added to the
                    // four sums lane-wise: each column's additions in its block order.
                    let lane = |c: usize| terms[c.min(NC - 1)];
                    let (a, b) = (_mm256_unpacklo_ps(lane(0), lane(1)), _mm256_unpackhi_ps(lane(0), lane(1)));
                    let (c, d) = (_mm256_unpacklo_ps(lane(2), lane(3)), _mm256_unpackhi_ps(lane(2), lane(3)));
                    let v = [
                        _mm256_shuffle_ps::<0x44>(a, c),
                        _mm256_shuffle_ps::<0xEE>(a, c),
                        _mm256_shuffle_ps::<0x44>(b, d),
                        _mm256_shuffle_ps::<0xEE>(b, d),
                    ];
                    let mut acc4 = [0f32; 4];
                    acc4[..NC].copy_from_slice(o);
                    // SAFETY: `acc4` is exactly 4 f32s; the load and store are unaligned.
                    let mut acc = unsafe { _mm_loadu_ps(acc4.as_ptr()) };
                    for h in v {
                        acc = _mm_add_ps(acc, _mm256_castps256_ps128(h));
                    }
                    for h in v {
                        acc = _mm_add_ps(acc, _mm256_extractf128_ps::<1>(h));
                    }
                    // SAFETY: as above.
                    unsafe { _mm_storeu_ps(acc4.as_mut_ptr(), acc) };
                    o.copy_from_slice(&acc4[..NC]);
                } else {
                    let mut t = [[0f32; 8]; NC];
                    for c in 0..NC {
                        // SAFETY: `t[c]` is exactly 8 f32s; the store is unaligned.
                        unsafe { _mm256_storeu_ps(t[c].as_mut_ptr(), terms[c]) };
                    }
                    let mut acc = *o;
                    for b in 0..r {
                        for c in 0..NC {
                            acc[c] += t[c][b];
                        }
                    }
                    *o = acc;
                }
            }
            g += 8;
        }
    }};
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
mod avx2 {
    use std::arch::x86_64::*;

    /// The 4-bit values of `w` widened to 32 bytes: low nibbles, then high nibbles.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn nibbles(w: &[u8; 16]) -> __m256i {
        // SAFETY: `w` is exactly 16 bytes; the load is unaligned.
        let q = unsafe { _mm_loadu_si128(w.as_ptr().cast()) };
        let mask = _mm_set1_epi8(0x0F);
        let lo = _mm_and_si128(q, mask);
        let hi = _mm_and_si128(_mm_srli_epi16(q, 4), mask);
        _mm256_set_m128i(hi, lo)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn load(y: &[i8; 32]) -> __m256i {
        // SAFETY: `y` is exactly 32 bytes; the load is unaligned.
        unsafe { _mm256_loadu_si256(y.as_ptr().cast()) }
    }

    /// `u` (unsigned bytes, < 32) times `y` (signed bytes), exactly: byte pairs into 16 lanes
    /// of i16 (|2·31·128| fits), then pairs of those into 8 lanes of i32.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn partial(u: __m256i, y: __m256i) -> __m256i {
        _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), _mm256_set1_epi16(1))
    }

    /// 8 f32s of `v` (a slice of at least 8).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load8(v: &[f32]) -> __m256 {
        let v: &[f32; 8] = v[..8].try_into().expect("8 values");
        // SAFETY: `v` is exactly 8 f32s; the load is unaligned.
        unsafe { _mm256_loadu_ps(v.as_ptr()) }
    }

    /// 8 i32s of `v` (a slice of at least 8).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load8i(v: &[i32]) -> __m256i {
        let v: &[i32; 8] = v[..8].try_into().expect("8 values");
        // SAFETY: `v` is exactly 8 i32s; the load is unaligned.
        unsafe { _mm256_loadu_si256(v.as_ptr().cast()) }
    }

    /// Lane b of the result = the sum of the 8 lanes of v[b], kept in a register.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn reduce8(v: &[__m256i; 8]) -> __m256i {
        let h01 = _mm256_hadd_epi32(v[0], v[1]);
        let h23 = _mm256_hadd_epi32(v[2], v[3]);
        let h45 = _mm256_hadd_epi32(v[4], v[5]);
        let h67 = _mm256_hadd_epi32(v[6], v[7]);
        let a = _mm256_hadd_epi32(h01, h23);
        let b = _mm256_hadd_epi32(h45, h67);
        _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31))
    }

    /// The eight block sums of `u` (unsigned bytes, < 32) times `y` (signed bytes), with AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn sums_avx2(u: &[__m256i; 8], y: &[__m256i; 8]) -> __m256i {
        reduce8(&std::array::from_fn(|b| partial(u[b], y[b])))
    }

    /// `v[g..g + 8]`, zero past the end.
    #[inline]
    fn pad8<T: Copy + Default>(v: &[T], g: usize) -> [T; 8] {
        std::array::from_fn(|b| v.get(g + b).copied().unwrap_or_default())
    }

    /// [`super::dot_cols`] with AVX2's integer products.
    #[target_feature(enable = "avx2")]
    pub fn dot_cols(ws: &[super::WeightRow<'_>], x: &super::ActRows<'_>, out: &mut [f32]) {
        if ws.len() == super::COLS {
            cols_body!(ws, x, out, 4)
        } else {
            each_column(ws, x, out, |w, x, o| cols_body!(std::slice::from_ref(w), x, o, 1))
        }
    }

    /// `one` for each column of `ws` alone, its sums placed in `out` (rows x columns).
    #[inline]
    fn each_column(
        ws: &[super::WeightRow<'_>],
        x: &super::ActRows<'_>,
        out: &mut [f32],
        mut one: impl FnMut(&super::WeightRow<'_>, &super::ActRows<'_>, &mut [f32]),
    ) {
        if let [w] = ws {
            return one(w, x, out);
        }
        let (nc, rows) = (ws.len(), out.len() / ws.len());
        let mut col = vec![0f32; rows];
        for (j, w) in ws.iter().enumerate() {
            one(w, x, &mut col);
            (0..rows).for_each(|i| out[i * nc + j] = col[i]);
        }
    }

    /// The sum of `u` times `y` (see [`partial`]).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn dot(u: __m256i, y: __m256i) -> i32 {
        let quads = partial(u, y);
        let s = _mm_add_epi32(_mm256_castsi256_si128(quads), _mm256_extracti128_si256(quads, 1));
        let s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01));
        _mm_cvtsi128_si32(s)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    pub fn isum_q4(w: &[u8; 16], y: &[i8; 32]) -> i32 {
        dot(nibbles(w), load(y))
    }

    /// Σ u_e·y_e with u_e = nibble e | bit e of `qh` << 4 (the caller subtracts 16·Σy).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub fn isum_q5(w: &[u8; 16], qh: u32, y: &[i8; 32]) -> i32 {
        dot(fives(w, qh), load(y))
    }

    /// A Q5_0 block's 5-bit values u_e = nibble e | bit e of `qh` << 4, as 32 bytes.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn fives(w: &[u8; 16], qh: u32) -> __m256i {
        // Byte e of `bits` is 0xFF where bit e of qh is set (ggml's bytes_from_bits_32).
        let shuf = _mm256_set_epi64x(0x0303_0303_0303_0303, 0x0202_0202_0202_0202, 0x0101_0101_0101_0101, 0);
        let spread = _mm256_shuffle_epi8(_mm256_set1_epi32(qh as i32), shuf);
        let bits = _mm256_cmpeq_epi8(
            _mm256_or_si256(spread, _mm256_set1_epi64x(0x7fbf_dfef_f7fb_fdfe)),
            _mm256_set1_epi64x(-1),
        );
        _mm256_or_si256(nibbles(w), _mm256_and_si256(bits, _mm256_set1_epi8(0x10)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn block(rng: &mut SplitMix64) -> ([u8; 16], u32, [i8; 32]) {
        let mut w = [0u8; 16];
        let mut y = [0i8; 32];
        w.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
        // Extremes included: -128 and 127 bytes, all-ones nibbles.
        y.iter_mut().for_each(|b| *b = rng.next_u64() as i8);
        (w, rng.next_u64() as u32, y)
    }

    #[test]
    fn the_row_loop_equals_the_portable_loop_bit_for_bit() {
        let mut rng = SplitMix64(9);
        let mut f = |scale: f32| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * scale;
        for (kb, rows) in [(18, 1), (18, 5), (28, 3), (8, 2), (3, 4), (152, 2), (48, 1)] {
            let blocks = |n: usize, f: &mut dyn FnMut(f32) -> f32| -> Vec<f32> { (0..n).map(|_| f(0.1)).collect() };
            let wqs: Vec<[u8; 16]> = (0..kb).map(|b| std::array::from_fn(|j| (b * 31 + j * 7) as u8)).collect();
            let (wd, wm) = (blocks(kb, &mut f), blocks(kb, &mut f));
            let qh: Vec<u32> = (0..kb).map(|b| (b as u32).wrapping_mul(0x9E37_79B9)).collect();
            let xqs: Vec<[i8; 32]> =
                (0..kb * rows).map(|b| std::array::from_fn(|j| (b * 13 + j * 29) as u8 as i8)).collect();
            let (xd, xs) = (blocks(kb * rows, &mut f), blocks(kb * rows, &mut f));
            let sum: Vec<i32> = xqs.iter().map(|q| q.iter().map(|&v| v as i32).sum()).collect();
            let x = ActRows { qs: &xqs, d: &xd, s: &xs, sum: &sum, base5: &[], base8: &[] };
            for w in [WeightRow { qs: &wqs, d: &wd, m: &wm, qh: &[] }, WeightRow { qs: &wqs, d: &wd, m: &[], qh: &qh }]
            {
                let (mut a, mut b) = (vec![0f32; rows], vec![0f32; rows]);
                dot_rows(&w, &x, &mut a);
                dot_rows_portable(&w, &x, &mut b);
                assert_eq!(
                    a.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    b.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                );
            }
            // Several columns at once: each column as computed alone (its weight rows are
            // rotations of the same blocks, so the columns differ).
            let rot: Vec<Vec<[u8; 16]>> = (0..COLS).map(|c| (0..kb).map(|b| wqs[(b + c) % kb]).collect()).collect();
            for q4 in [true, false] {
                let ws: Vec<WeightRow<'_>> = rot
                    .iter()
                    .map(|qs| WeightRow { qs, d: &wd, m: if q4 { &wm } else { &[] }, qh: if q4 { &[] } else { &qh } })
                    .collect();
                for nc in 1..=COLS {
                    let mut all = vec![0f32; rows * nc];
                    dot_cols(&ws[..nc], &x, &mut all);
                    for (c, w) in ws[..nc].iter().enumerate() {
                        let mut one = vec![0f32; rows];
                        dot_rows_portable(w, &x, &mut one);
                        let col: Vec<u32> = (0..rows).map(|i| all[i * nc + c].to_bits()).collect();
                        assert_eq!(col, one.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "{nc} columns, kb {kb}");
                    }
                }
            }
        }
    }

    #[test]
    fn kernels_equal_the_scalar_sums_on_random_and_extreme_blocks() {
        let mut rng = SplitMix64(7);
        let mut cases: Vec<([u8; 16], u32, [i8; 32])> = (0..20_000).map(|_| block(&mut rng)).collect();
        cases.push(([0xFF; 16], u32::MAX, [-128; 32]));
        cases.push(([0xFF; 16], u32::MAX, [127; 32]));
        cases.push(([0; 16], 0, [-128; 32]));
        for (w, qh, y) in cases {
            assert_eq!(isum_q4(&w, &y), scalar_isum_q4(&w, &y), "{w:?} {y:?}");
            let ysum: i32 = y.iter().map(|&v| v as i32).sum();
            assert_eq!(isum_q5(&w, qh, &y, ysum), scalar_isum_q5(&w, qh, &y), "{w:?} {qh:x} {y:?}");
        }
    }
}
