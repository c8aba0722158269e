//! The fourth audited `unsafe` module: Q6_K weights in AVX-512 VNNI tiles of 16 output columns,
//! for several activation rows at once (sequences decoded together, prompt chunks), with the
//! arithmetic of candle's one-row kernel (AVX2 `vec_dot_q6k_q8k`), so that every row gets the
//! bits it gets alone. candle reads Q6_K with that kernel at one row and with repacked tiles of
//! another order at more, so without these its rows were read one at a time, the weights once
//! per row. The only unsafe operations are calls of the VNNI function after the CPU was checked
//! ([`super::tiles::pay`]), unaligned loads and stores of exactly sized arrays, and prefetches
//! (through `tiles.rs`' helper).
//!
//! candle's sum, column by column: per 256-value super-block, eight integer lanes; lane L adds,
//! for each 32-value chunk C, scale[2C + L/4] · Σ_p (q − 32)·y over the values 32C + 4L + p
//! (p < 4); then lane L's float is advanced by `fma(d_y·d_w, lane, ·)`, and the eight floats
//! are added as ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)). Here one `vpdpbusd` gives four values'
//! Σ q·y − 32·Σy of 16 columns (the offset its starting value), and one `vpdpwssd` multiplies
//! each by its column's scale (a 16-bit value in the low half of the lane, zero in the high) and
//! adds it to the lane: the same exact integers, then the same float steps.
#![allow(unsafe_code)]

use candle_core::Result;
use half::f16;

use super::tiles::{TILE, lane_tree};

/// Values per super-block.
pub const QK_K: usize = 256;
/// Bytes of one Q6_K block: 128 low nibbles, 64 bytes of high bits, 16 scales, an f16.
const BLOCK_BYTES: usize = 210;

/// Activation rows quantized as candle's `BlockQ8K::from_float`, `kb` super-blocks a row.
pub struct Q8kRows {
    qs: Vec<[i8; QK_K]>,
    d: Vec<f32>,
    /// −32·Σy of each four values (quad q: values 4q..4q+4), the tiles' starting sums.
    base: Vec<[i32; 64]>,
}

impl Q8kRows {
    /// `x` (whole rows of super-blocks) quantized: per block the value of largest magnitude
    /// (the first such), iscale = −127 / it, each byte round(iscale·x) clamped, d = 1 / iscale.
    pub fn quantize(x: &[f32]) -> Q8kRows {
        let blocks = x.len() / QK_K;
        let mut a = Q8kRows { qs: Vec::with_capacity(blocks), d: Vec::with_capacity(blocks), base: Vec::new() };
        for xs in x.chunks_exact(QK_K) {
            let (mut max, mut amax) = (0f32, 0f32);
            for &v in xs {
                if amax < v.abs() {
                    amax = v.abs();
                    max = v;
                }
            }
            if amax == 0f32 {
                a.qs.push([0; QK_K]);
                a.d.push(0f32);
            } else {
                let iscale = -127f32 / max;
                a.qs.push(std::array::from_fn(|j| (iscale * xs[j]).round().clamp(-128., 127.) as i8));
                a.d.push(1.0 / iscale);
            }
        }
        a.base =
            a.qs.iter()
                .map(|q| std::array::from_fn(|c| -32 * q[4 * c..4 * c + 4].iter().map(|&v| v as i32).sum::<i32>()))
                .collect();
        a
    }
}

/// Q6_K weight rows in tiles of [`TILE`] columns (the last padded with zero columns): per tile
/// and super-block, the 6-bit values as bytes (64 chunks of 64 bytes; chunk q holds values
/// 4q..4q+4 of each column l at bytes 4l..4l+4), each sub-block's scales and the scale d.
#[derive(Debug)]
pub struct Q6Tiles {
    kb: usize,
    qs: Vec<[u8; 64]>,
    /// Per tile, super-block and 16-value sub-block: each column's scale as a 16-bit value in
    /// a 32-bit lane's low half.
    scales: Vec<[[i32; TILE]; 16]>,
    d: Vec<[f32; TILE]>,
}

/// Value `v` (0..256) of a Q6_K block's 6-bit values (0..63; the weight is v − 32): candle's
/// layout, 128-value halves of four 32-value runs.
fn q6(block: &[u8], v: usize) -> u8 {
    let (j, c, l) = (v / 128, v % 128 / 32, v % 32);
    let low = (block[64 * j + 32 * (c & 1) + l] >> (4 * (c >> 1))) & 0xF;
    let high = (block[128 + 32 * j + l] >> (2 * c)) & 3;
    low | (high << 4)
}

impl Q6Tiles {
    /// The tiles of an n x k Q6_K matrix given as its blocks' bytes.
    pub fn new(data: &[u8], n: usize, k: usize) -> Result<Q6Tiles> {
        if !k.is_multiple_of(QK_K) || data.len() != n * k / QK_K * BLOCK_BYTES {
            candle_core::bail!("Q6_K data of {} bytes for a {n} x {k} matrix", data.len());
        }
        let kb = k / QK_K;
        let blocks = n.div_ceil(TILE) * kb;
        let mut t = Q6Tiles {
            kb,
            qs: vec![[0; 64]; blocks * 64],
            scales: vec![[[0; TILE]; 16]; blocks],
            d: vec![[0.0; TILE]; blocks],
        };
        for (j, row) in data.chunks_exact(kb * BLOCK_BYTES).enumerate() {
            let (tile, l) = (j / TILE, j % TILE);
            for (b, block) in row.chunks_exact(BLOCK_BYTES).enumerate() {
                let at = tile * kb + b;
                for v in 0..QK_K {
                    t.qs[64 * at + v / 4][4 * l + v % 4] = q6(block, v);
                }
                for s in 0..16 {
                    t.scales[at][s][l] = i32::from(block[192 + s] as i8 as i16 as u16);
                }
                t.d[at][l] = f16::from_le_bytes([block[208], block[209]]).to_f32();
            }
        }
        Ok(t)
    }

    /// How many tiles.
    pub fn len(&self) -> usize {
        self.d.len() / self.kb.max(1)
    }

    /// True when there are no columns.
    pub fn is_empty(&self) -> bool {
        self.d.is_empty()
    }

    /// out[i·TILE + l] = column l of tile `tile` · activation row i, for every row of `x`.
    pub fn dot(&self, tile: usize, x: &Q8kRows, out: &mut [f32]) {
        assert_eq!(out.len() % TILE, 0, "whole tiles of output");
        assert_eq!(x.qs.len() * TILE, out.len() * self.kb, "activation rows of {} super-blocks", self.kb);
        #[cfg(target_arch = "x86_64")]
        if super::tiles::pay() {
            // SAFETY: the CPU has AVX-512 F, BW, VL and VNNI (checked at run time).
            return unsafe { vnni::dot(self, tile, x, out) };
        }
        self.dot_portable(tile, x, out)
    }

    /// [`Q6Tiles::dot`] one column at a time in candle's arithmetic (the reference).
    pub fn dot_portable(&self, tile: usize, x: &Q8kRows, out: &mut [f32]) {
        let kb = self.kb;
        for (i, o) in out.chunks_exact_mut(TILE).enumerate() {
            for (l, o) in o.iter_mut().enumerate() {
                let mut lanes = [0f32; 8];
                for b in 0..kb {
                    let (at, a) = (tile * kb + b, i * kb + b);
                    let d = x.d[a] * self.d[at][l];
                    for (lane, acc) in lanes.iter_mut().enumerate() {
                        let sumi: i32 = (0..8)
                            .map(|c| {
                                let q = 8 * c + lane;
                                let s = self.scales[at][2 * c + lane / 4][l] as u16 as i16 as i32;
                                let e: i32 = (0..4)
                                    .map(|p| (self.qs[64 * at + q][4 * l + p] as i32 - 32) * x.qs[a][4 * q + p] as i32)
                                    .sum();
                                s * e
                            })
                            .sum();
                        *acc = d.mul_add(sumi as f32, *acc);
                    }
                }
                *o = lane_tree(&lanes);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;

    use super::super::tiles::vnni::{ahead, lane_tree, load16, load64, pass_fetch, quad, store16};
    use super::{Q6Tiles, Q8kRows, TILE};

    /// [`Q6Tiles::dot`] with VNNI, two activation rows at a time ([`dot_rows`]).
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vnni,fma")]
    pub fn dot(t: &Q6Tiles, tile: usize, x: &Q8kRows, out: &mut [f32]) {
        // Super-blocks ahead to fetch in each pass (the first: two).
        let passes = out.len().div_ceil(2 * TILE);
        for (g, o) in out.chunks_mut(2 * TILE).enumerate() {
            let fetch = pass_fetch(g, passes, 2, t.kb);
            if o.len() == 2 * TILE {
                dot_rows::<2>(t, tile, x, 2 * g, o, fetch);
            } else {
                dot_rows::<1>(t, tile, x, 2 * g, o, fetch);
            }
        }
    }

    /// `R` activation rows from row `r0` on against one tile: per super-block and row, the
    /// eight integer lanes (16 columns each) from one `vpdpbusd` and one `vpdpwssd` per four
    /// values, each chunk's weights loaded once for the `R` rows; then the lanes' floats.
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vnni,fma")]
    fn dot_rows<const R: usize>(t: &Q6Tiles, tile: usize, x: &Q8kRows, r0: usize, out: &mut [f32], fetch: usize) {
        let kb = t.kb;
        let mut acc = [[_mm512_setzero_ps(); 8]; R];
        for b in 0..kb {
            let at = tile * kb + b;
            let mut sumi = [[_mm512_setzero_si512(); 8]; R];
            // The super-block `fetch` ahead into cache, an eighth at a time (the hardware's own
            // prefetch does not run far enough ahead of this long loop).
            let next = at + fetch;
            if fetch > 0 {
                ahead(&t.d, next, 0, 1);
            }
            for c in 0..8 {
                if fetch > 0 {
                    ahead(&t.qs, 64 * next + 8 * c, 0, 8);
                    ahead(&t.scales, next, 2 * c, 2);
                }
                // SAFETY: each scale row is exactly 16 i32s; the loads are unaligned.
                let (s_lo, s_hi) = unsafe {
                    (
                        _mm512_loadu_si512(t.scales[at][2 * c].as_ptr().cast()),
                        _mm512_loadu_si512(t.scales[at][2 * c + 1].as_ptr().cast()),
                    )
                };
                // Written out for each lane, so that the sums stay in registers.
                macro_rules! lane {
                    ($l:literal, $s:ident) => {
                        let q = 8 * c + $l;
                        let w = load64(&t.qs[64 * at + q]);
                        for r in 0..R {
                            let a = (r0 + r) * kb + b;
                            let e = _mm512_dpbusd_epi32(_mm512_set1_epi32(x.base[a][q]), w, quad(&x.qs[a], q));
                            sumi[r][$l] = _mm512_dpwssd_epi32(sumi[r][$l], e, $s);
                        }
                    };
                }
                lane!(0, s_lo);
                lane!(1, s_lo);
                lane!(2, s_lo);
                lane!(3, s_lo);
                lane!(4, s_hi);
                lane!(5, s_hi);
                lane!(6, s_hi);
                lane!(7, s_hi);
            }
            let dw = load16(&t.d[at]);
            for r in 0..R {
                let d = _mm512_mul_ps(_mm512_set1_ps(x.d[(r0 + r) * kb + b]), dw);
                for l in 0..8 {
                    acc[r][l] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(sumi[r][l]), acc[r][l]);
                }
            }
        }
        for (lanes, o) in acc.iter().zip(out.chunks_exact_mut(TILE)) {
            store16(o, lane_tree(lanes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Random Q6_K blocks (bytes of every value, scales of both signs, small d).
    fn blocks(rng: &mut SplitMix64, count: usize) -> Vec<u8> {
        let mut data = Vec::with_capacity(count * BLOCK_BYTES);
        for _ in 0..count {
            data.extend((0..208).map(|_| (rng.next_u64() >> 56) as u8));
            data.extend(f16::from_f32(((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 0.01).to_le_bytes());
        }
        data
    }

    #[test]
    fn q6k_tiles_vnni_equal_the_portable_loop() {
        let mut rng = SplitMix64(66);
        for (n, kb, rows) in [(16, 1, 1), (20, 2, 2), (37, 3, 3), (16, 2, 4), (33, 1, 5)] {
            let t = Q6Tiles::new(&blocks(&mut rng, n * kb), n, kb * QK_K).unwrap();
            let mut x: Vec<f32> = (0..rows * kb * QK_K)
                .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 4.0)
                .collect();
            x[..QK_K].fill(0.0);
            let acts = Q8kRows::quantize(&x);
            for tile in 0..t.len() {
                let (mut fast, mut slow) = (vec![0f32; rows * TILE], vec![0f32; rows * TILE]);
                t.dot(tile, &acts, &mut fast);
                t.dot_portable(tile, &acts, &mut slow);
                let bits = |v: &[f32]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&fast), bits(&slow), "{n} x {kb} super-blocks, {rows} rows, tile {tile}");
            }
        }
    }
}
