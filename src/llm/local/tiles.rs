//! The third audited `unsafe` module: Q4_1, Q5_0 and Q8_0 weights laid out for AVX-512 VNNI in
//! tiles of [`TILE`] output columns, and their product with quantized activation rows.
//!
//! A tile keeps, for each 32-value block, the blocks of its 16 columns interleaved four bytes at
//! a time, so that one 512-bit `vpdpbusd` multiplies four values of every column with the same
//! four activation bytes (broadcast) and leaves each column's partial sum in its own lane, with
//! no horizontal reduction. The integer sums are exact, and the floats are formed lane-wise with
//! candle's own expressions in candle's order, so the outputs are bit-identical to candle's:
//! - Q4_1 and Q5_0 (candle's scalar loop): eight products give each column's block sum (Q5_0's
//!   `Σ(u−16)·y` as `Σu·y − 16·Σy`), scaled and added to the column's sum block by block;
//! - Q8_0 (candle's AVX2 loop, which keeps eight lanes, one per four bytes, each advanced by
//!   `fma(d_w·d_x, sum, lane)`, and adds them in a fixed tree at the end): the weights stored as
//!   `w + 128` (unsigned, as `vpdpbusd` takes them) and `128·Σy` of each four bytes subtracted,
//!   the eight lanes kept as eight accumulators and added in candle's tree.
//!
//! Tested below against the portable loops on every path, and against candle in
//! [`super::qlinear`]. The only unsafe operations are calls of the VNNI functions after the CPU
//! is checked for them at run time, unaligned loads and stores of fixed-size arrays (64
//! bytes, 16 floats), and prefetches (which read nothing into the program and never fault).
//!
//! With several rows the kernels ask for the weights some blocks ahead (the hardware's own
//! prefetch does not run far enough ahead of their longer loops: measured 7–10 % on SmolLM2's
//! layers at four rows), and Q8_0 rows go in pairs that share each weight load (the output
//! layer at four rows 1.5x faster).
#![allow(unsafe_code)]

use super::kernels::{ActRows, WeightRow, block_term};

/// Output columns per tile.
pub const TILE: usize = 16;

/// The weight formats laid out in tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileFormat {
    /// 4-bit values with a scale and a minimum.
    Q4_1,
    /// 5-bit values with a scale.
    Q5_0,
    /// Signed bytes with a scale.
    Q8_0,
}

/// Weight rows in tiles of [`TILE`] columns (the last padded with zero columns), `kb` blocks a
/// row: per tile and block, the values, the scales, Q4_1's minima or Q5_0's fifth bits.
#[derive(Debug)]
pub struct Tiles {
    kb: usize,
    kind: TileFormat,
    /// Per tile and block, chunks of 64 bytes, column l at bytes 4l..4l+4 of each. Q4_1 and
    /// Q5_0: 4 chunks; chunk c holds bytes 4c..4c+4 of each column's 16 nibble bytes (values
    /// 4c..4c+4 in the low nibbles, 16+4c.. in the high). Q8_0: 8 chunks; chunk q holds values
    /// 4q..4q+4 plus 128.
    qs: Vec<[u8; 64]>,
    /// Per tile and block: each column's scale.
    d: Vec<[f32; TILE]>,
    /// Q4_1: each column's minimum; else empty.
    m: Vec<[f32; TILE]>,
    /// Q5_0: per quad q (values 4q..4q+4), bit 4l+p set where value 4q+p of column l has its
    /// fifth bit; else empty.
    hi: Vec<[u64; 8]>,
}

impl Tiles {
    /// The tiles of `n` Q4_1 or Q5_0 weight rows given by `row` (each `kb` blocks), Q4_1 when
    /// the rows carry minima.
    pub fn new<'a>(n: usize, kb: usize, row: impl Fn(usize) -> WeightRow<'a>) -> Tiles {
        let q4 = n > 0 && !row(0).m.is_empty();
        let mut t = Tiles::empty(n, kb, if q4 { TileFormat::Q4_1 } else { TileFormat::Q5_0 });
        for j in 0..n {
            let (tile, l) = (j / TILE, j % TILE);
            let w = row(j);
            for b in 0..kb {
                let at = tile * kb + b;
                for c in 0..4 {
                    t.qs[4 * at + c][4 * l..4 * l + 4].copy_from_slice(&w.qs[b][4 * c..4 * c + 4]);
                }
                t.d[at][l] = w.d[b];
                if q4 {
                    t.m[at][l] = w.m[b];
                } else {
                    for q in 0..8 {
                        let bits = u64::from((w.qh[b] >> (4 * q)) & 0xF);
                        t.hi[at][q] |= bits << (4 * l);
                    }
                }
            }
        }
        t
    }

    /// The tiles of `n` Q8_0 weight rows given by `row`: each row's `kb` blocks of signed bytes
    /// and their scales.
    pub fn q8_0<'a>(n: usize, kb: usize, row: impl Fn(usize) -> (&'a [[i8; 32]], &'a [f32])) -> Tiles {
        let mut t = Tiles::empty(n, kb, TileFormat::Q8_0);
        for j in 0..n {
            let (tile, l) = (j / TILE, j % TILE);
            let (qs, d) = row(j);
            for b in 0..kb {
                let at = tile * kb + b;
                for q in 0..8 {
                    for p in 0..4 {
                        t.qs[8 * at + q][4 * l + p] = (qs[b][4 * q + p] as u8) ^ 0x80;
                    }
                }
                t.d[at][l] = d[b];
            }
        }
        t
    }

    /// Zero tiles for `n` columns of `kb` blocks (padding columns stay zero: scale 0, and Q8_0's
    /// bytes 128, value 0).
    fn empty(n: usize, kb: usize, kind: TileFormat) -> Tiles {
        let blocks = n.div_ceil(TILE) * kb;
        let chunks = if kind == TileFormat::Q8_0 { 8 } else { 4 };
        let fill = if kind == TileFormat::Q8_0 { 0x80 } else { 0 };
        Tiles {
            kb,
            kind,
            qs: vec![[fill; 64]; blocks * chunks],
            d: vec![[0.0; TILE]; blocks],
            m: if kind == TileFormat::Q4_1 { vec![[0.0; TILE]; blocks] } else { vec![] },
            hi: if kind == TileFormat::Q5_0 { vec![[0; 8]; blocks] } else { vec![] },
        }
    }

    /// How many tiles.
    pub fn len(&self) -> usize {
        self.d.len() / self.kb.max(1)
    }

    /// True when there are no columns.
    pub fn is_empty(&self) -> bool {
        self.qs.is_empty()
    }

    /// out[i·TILE + l] = column l of tile `tile` · activation row i, for every row of `x`.
    pub fn dot(&self, tile: usize, x: &ActRows<'_>, out: &mut [f32]) {
        assert_eq!(out.len() % TILE, 0, "whole tiles of output");
        assert_eq!(x.qs.len() * TILE, out.len() * self.kb, "activation rows of {} blocks", self.kb);
        #[cfg(target_arch = "x86_64")]
        if vnni::present() {
            // SAFETY: the CPU has AVX-512 F, BW, VL and VNNI (checked at run time).
            return unsafe {
                match self.kind {
                    TileFormat::Q8_0 => vnni::dot_q8_0(self, tile, x, out),
                    TileFormat::Q4_1 | TileFormat::Q5_0 => vnni::dot(self, tile, x, out),
                }
            };
        }
        self.dot_portable(tile, x, out)
    }

    /// [`Tiles::dot`] one column and block at a time in candle's scalar arithmetic (the
    /// reference, and the path without VNNI).
    pub fn dot_portable(&self, tile: usize, x: &ActRows<'_>, out: &mut [f32]) {
        let kb = self.kb;
        for (i, o) in out.chunks_exact_mut(TILE).enumerate() {
            for (l, o) in o.iter_mut().enumerate() {
                *o = match self.kind {
                    TileFormat::Q8_0 => self.column_q8_0(tile, l, x, i),
                    TileFormat::Q4_1 | TileFormat::Q5_0 => {
                        (0..kb).fold(0f32, |sumf, b| sumf + self.block_term(tile * kb + b, l, x, i * kb + b))
                    }
                };
            }
        }
    }

    /// Column `l`'s term of block `at` against activation block `a` (Q4_1, Q5_0), through the
    /// row loop's own scalar expression.
    fn block_term(&self, at: usize, l: usize, x: &ActRows<'_>, a: usize) -> f32 {
        let qs: [u8; 16] = std::array::from_fn(|e| self.qs[4 * at + e / 4][4 * l + e % 4]);
        let qh = if self.kind == TileFormat::Q5_0 {
            (0..8).fold(0u32, |h, q| h | ((((self.hi[at][q] >> (4 * l)) & 0xF) as u32) << (4 * q)))
        } else {
            0
        };
        let q4 = self.kind == TileFormat::Q4_1;
        let (d, m) = ([self.d[at][l]], [if q4 { self.m[at][l] } else { 0.0 }]);
        let w = WeightRow {
            qs: std::slice::from_ref(&qs),
            d: &d,
            m: if q4 { &m } else { &[] },
            qh: if q4 { &[] } else { std::slice::from_ref(&qh) },
        };
        block_term(&w, 0, x, a)
    }

    /// Column `l` of a Q8_0 tile against activation row `i`, as candle's AVX2 loop forms it:
    /// eight lanes (one per four bytes) advanced by `fma(d_w·d_x, sum, lane)`, then added as
    /// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)).
    fn column_q8_0(&self, tile: usize, l: usize, x: &ActRows<'_>, i: usize) -> f32 {
        let kb = self.kb;
        let mut lanes = [0f32; 8];
        for b in 0..kb {
            let (at, a) = (tile * kb + b, i * kb + b);
            let d = self.d[at][l] * x.d[a];
            for (q, lane) in lanes.iter_mut().enumerate() {
                let sum: i32 = (0..4)
                    .map(|p| ((self.qs[8 * at + q][4 * l + p] ^ 0x80) as i8 as i32) * x.qs[a][4 * q + p] as i32)
                    .sum();
                *lane = d.mul_add(sum as f32, *lane);
            }
        }
        lane_tree(&lanes)
    }
}

/// candle's AVX2 sum of its eight float lanes (`hsum_float_8`): ((l0+l4) + (l2+l6)) +
/// ((l1+l5) + (l3+l7)) — the Q8_0 and Q6_K loops' last step.
pub fn lane_tree(lanes: &[f32; 8]) -> f32 {
    let r: [f32; 4] = std::array::from_fn(|j| lanes[j] + lanes[j + 4]);
    (r[0] + r[2]) + (r[1] + r[3])
}

/// The VNNI kernels, and the helpers [`super::q6k`]'s share.
#[cfg(target_arch = "x86_64")]
pub(crate) mod vnni;

/// The largest |x| of a block, and each x·`id` rounded half away from zero as a byte, with
/// AVX-512 where the CPU has it (the same values as the scalar loop: a maximum is exact, and
/// `trunc(v + copysign(0.5⁻, v))` is `f32::round(v)` for every f32; tested below).
pub fn amax(xs: &[f32; 32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if vnni::present() {
        // SAFETY: the CPU has AVX-512 F (checked at run time).
        return unsafe { vnni::amax(xs) };
    }
    xs.iter().fold(0f32, |m, v| m.max(v.abs()))
}

/// `round(x · id) as i8` of each value of a block (see [`amax`]).
pub fn round_scaled(xs: &[f32; 32], id: f32) -> [i8; 32] {
    #[cfg(target_arch = "x86_64")]
    if vnni::present() {
        // SAFETY: the CPU has AVX-512 F (checked at run time).
        return unsafe { vnni::round_scaled(xs, id) };
    }
    std::array::from_fn(|e| f32::round(xs[e] * id) as i8)
}

/// Whether [`Tiles::dot`] runs on VNNI here (where it does not, the row layout's AVX2 kernel is
/// faster than the tiles' portable loop).
pub fn pay() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        vnni::present()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::local::kernels::{block_sums, dot_rows_portable};
    use crate::rng::SplitMix64;

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|e| e.to_bits()).collect()
    }

    /// Tile `tile` of `t` times `x` (rows activation rows) by [`Tiles::dot`] and by the portable
    /// loop, asserted bit-identical; the portable values.
    fn fast_equals_portable(t: &Tiles, tile: usize, x: &ActRows<'_>, rows: usize) -> Vec<f32> {
        let (mut fast, mut slow) = (vec![0f32; rows * TILE], vec![0f32; rows * TILE]);
        t.dot(tile, x, &mut fast);
        t.dot_portable(tile, x, &mut slow);
        assert_eq!(bits(&fast), bits(&slow), "{:?}, {rows} rows, tile {tile}", t.kind);
        slow
    }

    #[test]
    fn block_quantization_equals_the_scalar_loop() {
        let mut rng = SplitMix64(5);
        let mut blocks: Vec<[f32; 32]> = (0..5000)
            .map(|_| std::array::from_fn(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 8.0))
            .collect();
        // Ties: with 127 the largest value, id is 1 and every x·id is x itself.
        let ties = [0.5, 1.5, -2.5, -0.5, 126.5, -126.5, 0.49999997, -0.49999997, 2.5000002, 0.0, -0.0];
        blocks.push(std::array::from_fn(|e| if e == 0 { 127.0 } else { ties[e % ties.len()] }));
        blocks.push([0.0; 32]);
        blocks.push(std::array::from_fn(|e| if e == 3 { -1e-30 } else { 0.0 }));
        for xs in &blocks {
            let scalar = xs.iter().fold(0f32, |m, v| m.max(v.abs()));
            assert_eq!(amax(xs).to_bits(), scalar.to_bits(), "{xs:?}");
            let d = scalar / 127.0;
            let id = if d != 0f32 { 1. / d } else { 0. };
            let expect: [i8; 32] = std::array::from_fn(|e| f32::round(xs[e] * id) as i8);
            assert_eq!(round_scaled(xs, id), expect, "{xs:?}");
        }
    }

    #[test]
    fn tiles_give_each_column_the_row_loops_bits() {
        let mut rng = SplitMix64(21);
        let mut f = |scale: f32| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * scale;
        // Every row count of a register group (1 to 8), and more rows than one group.
        let shapes = [(16, 18, 1), (5, 8, 2), (24, 4, 3), (20, 5, 4), (37, 3, 5), (16, 3, 6), (17, 2, 7)];
        for (n, kb, rows) in shapes.into_iter().chain([(40, 3, 8), (48, 28, 9), (32, 2, 17)]) {
            let qs: Vec<[u8; 16]> =
                (0..n * kb).map(|b| std::array::from_fn(|j| (b * 31 + j * 7 + b / 5) as u8)).collect();
            let d: Vec<f32> = (0..n * kb).map(|_| f(0.1)).collect();
            let m: Vec<f32> = (0..n * kb).map(|_| f(0.1)).collect();
            let qh: Vec<u32> = (0..n * kb).map(|b| (b as u32 + 7).wrapping_mul(0x9E37_79B9)).collect();
            let mut xqs: Vec<[i8; 32]> =
                (0..kb * rows).map(|b| std::array::from_fn(|j| (b * 13 + j * 29) as u8 as i8)).collect();
            // Extremes: a block of -128s and one of 127s.
            xqs[0] = [-128; 32];
            xqs[kb * rows - 1] = [127; 32];
            let (xd, xs): (Vec<f32>, Vec<f32>) = (0..kb * rows).map(|_| (f(0.1), f(0.1))).unzip();
            let sums: Vec<(i32, i32, [i32; 8])> = xqs.iter().map(block_sums).collect();
            let (sum, base5, base8): (Vec<i32>, Vec<i32>, Vec<[i32; 8]>) = (
                sums.iter().map(|s| s.0).collect(),
                sums.iter().map(|s| s.1).collect(),
                sums.iter().map(|s| s.2).collect(),
            );
            let x = ActRows { qs: &xqs, d: &xd, s: &xs, sum: &sum, base5: &base5, base8: &base8 };
            for q4 in [true, false] {
                let row = |j: usize| WeightRow {
                    qs: &qs[j * kb..(j + 1) * kb],
                    d: &d[j * kb..(j + 1) * kb],
                    m: if q4 { &m[j * kb..(j + 1) * kb] } else { &[] },
                    qh: if q4 { &[] } else { &qh[j * kb..(j + 1) * kb] },
                };
                let t = Tiles::new(n, kb, row);
                assert_eq!(t.len(), n.div_ceil(TILE));
                for tile in 0..t.len() {
                    let slow = fast_equals_portable(&t, tile, &x, rows);
                    for l in 0..TILE.min(n - tile * TILE) {
                        let mut one = vec![0f32; rows];
                        dot_rows_portable(&row(tile * TILE + l), &x, &mut one);
                        let col: Vec<f32> = (0..rows).map(|i| slow[i * TILE + l]).collect();
                        assert_eq!(
                            bits(&col),
                            bits(&one),
                            "q4 {q4}, {n} x {kb} blocks, {rows} rows, column {}",
                            tile * TILE + l
                        );
                    }
                }
            }
            // Q8_0 (bytes -128 and 127 included): the tiles against the portable loop, which
            // qlinear's tests hold to candle's own kernel.
            let bytes: Vec<[i8; 32]> =
                (0..n * kb).map(|b| std::array::from_fn(|j| (b * 37 + j * 11) as u8 as i8)).collect();
            let t = Tiles::q8_0(n, kb, |j| (&bytes[j * kb..(j + 1) * kb], &d[j * kb..(j + 1) * kb]));
            for tile in 0..t.len() {
                fast_equals_portable(&t, tile, &x, rows);
            }
        }
    }
}
