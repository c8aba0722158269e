//! The AVX-512 VNNI kernels of [`super::Tiles`] (part of the third audited `unsafe` module, see
//! [`super`]): `#[target_feature]` functions, called only after [`present`] has checked the CPU
//! at run time. Their only unsafe operations are unaligned loads and stores of fixed-size arrays
//! (64 bytes, 16 floats) and prefetches (which read nothing into the program and never fault),
//! each with its SAFETY comment.
#![allow(unsafe_code)]

use std::arch::x86_64::*;

use super::{ActRows, TILE, Tiles};

/// Four bytes of `y` from byte 4q on, as one i32 in every lane.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn quad<const N: usize>(y: &[i8; N], q: usize) -> __m512i {
    _mm512_set1_epi32(i32::from_le_bytes([y[4 * q] as u8, y[4 * q + 1] as u8, y[4 * q + 2] as u8, y[4 * q + 3] as u8]))
}

/// Whether the CPU has AVX-512 (F, BW, VL) with VNNI, detected once.
pub fn present() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512vnni")
    })
}

/// Activation rows computed together (their sums stay in registers).
const ROWS: usize = 8;

/// Rows `r0..r0 + R` of `all` (`kb` values a row).
fn rows<T, const R: usize>(all: &[T], kb: usize, r0: usize) -> [&[T]; R] {
    let mut out = [&all[..0]; R];
    for (r, o) in out.iter_mut().enumerate() {
        *o = &all[(r0 + r) * kb..(r0 + r + 1) * kb];
    }
    out
}

/// [`Tiles::dot`] of a Q4_1 or Q5_0 tile with VNNI, up to [`ROWS`] activation rows at a
/// time ([`dot_rows`]).
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vnni")]
pub fn dot(t: &Tiles, tile: usize, x: &ActRows<'_>, out: &mut [f32]) {
    let q4 = !t.m.is_empty();
    for (g, o) in out.chunks_mut(ROWS * TILE).enumerate() {
        if q4 { group::<true>(t, tile, x, g * ROWS, o) } else { group::<false>(t, tile, x, g * ROWS, o) }
    }
}

/// [`dot_rows`] of the rows of `out` (at most [`ROWS`]), from row `r0` on.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vnni")]
fn group<const Q4: bool>(t: &Tiles, tile: usize, x: &ActRows<'_>, r0: usize, o: &mut [f32]) {
    match o.len() / TILE {
        1 => dot_rows::<Q4, 1>(t, tile, x, r0, o),
        2 => dot_rows::<Q4, 2>(t, tile, x, r0, o),
        3 => dot_rows::<Q4, 3>(t, tile, x, r0, o),
        4 => dot_rows::<Q4, 4>(t, tile, x, r0, o),
        5 => dot_rows::<Q4, 5>(t, tile, x, r0, o),
        6 => dot_rows::<Q4, 6>(t, tile, x, r0, o),
        7 => dot_rows::<Q4, 7>(t, tile, x, r0, o),
        _ => dot_rows::<Q4, ROWS>(t, tile, x, r0, o),
    }
}

/// `R` activation rows from row `r0` on against one Q4_1 (`Q4`) or Q5_0 tile: per block,
/// the tile's 16 columns unpacked once into eight registers of four values each, then for
/// each row eight `vpdpbusd` with the row's four bytes broadcast, the block sums converted
/// and scaled lane-wise and added to each column's sum (the rows' sums in registers).
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vnni")]
fn dot_rows<const Q4: bool, const R: usize>(t: &Tiles, tile: usize, x: &ActRows<'_>, r0: usize, out: &mut [f32]) {
    let kb = t.kb;
    let low = _mm512_set1_epi8(0x0F);
    let fifth = _mm512_set1_epi8(0x10);
    let (ys, yd) = (rows::<_, R>(x.qs, kb, r0), rows::<_, R>(x.d, kb, r0));
    // Q4_1: Q8_1's s; Q5_0: −16·Σy as one sum's starting value (the same exact integer).
    let (ym, base) = if Q4 { (rows::<_, R>(x.s, kb, r0), [&[][..]; R]) } else { ([&[][..]; R], rows(x.base5, kb, r0)) };
    let mut acc = [_mm512_setzero_ps(); R];
    for b in 0..kb {
        let at = tile * kb + b;
        if R >= PF_ROWS {
            ahead(&t.qs, 4 * (at + PF), 0, 4);
            ahead(&t.d, at + PF, 0, 1);
            if Q4 {
                ahead(&t.m, at + PF, 0, 1);
            }
        }
        let mut u = [_mm512_setzero_si512(); 8];
        for c in 0..4 {
            let v = load64(&t.qs[4 * at + c]);
            u[c] = _mm512_and_si512(v, low);
            u[c + 4] = _mm512_and_si512(_mm512_srli_epi16::<4>(v), low);
        }
        if !Q4 {
            for (q, u) in u.iter_mut().enumerate() {
                *u = _mm512_mask_add_epi8(*u, t.hi[at][q], *u, fifth);
            }
        }
        let dw = load16(&t.d[at]);
        let mw = if Q4 { load16(&t.m[at]) } else { _mm512_setzero_ps() };
        for r in 0..R {
            let y = &ys[r][b];
            let start = if Q4 { _mm512_setzero_si512() } else { _mm512_set1_epi32(base[r][b]) };
            // One row: two chains of sums, so that each vpdpbusd need not wait for the last;
            // several rows: their chains interleave, and one chain a row saves the addition.
            let s = if R == 1 {
                let (mut s0, mut s1) = (start, _mm512_setzero_si512());
                for q in (0..8).step_by(2) {
                    s0 = _mm512_dpbusd_epi32(s0, u[q], quad(y, q));
                    s1 = _mm512_dpbusd_epi32(s1, u[q + 1], quad(y, q + 1));
                }
                _mm512_add_epi32(s0, s1)
            } else {
                (0..8).fold(start, |s, q| _mm512_dpbusd_epi32(s, u[q], quad(y, q)))
            };
            let scaled = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), dw), _mm512_set1_ps(yd[r][b]));
            let term = if Q4 { _mm512_add_ps(scaled, _mm512_mul_ps(mw, _mm512_set1_ps(ym[r][b]))) } else { scaled };
            acc[r] = _mm512_add_ps(acc[r], term);
        }
    }
    for (acc, o) in acc.iter().zip(out.chunks_exact_mut(TILE)) {
        store16(o, *acc);
    }
}

/// [`Tiles::dot`] of a Q8_0 tile with VNNI, rows in pairs that share each weight load:
/// per row, eight accumulators (candle's eight lanes, here 16 columns each); per block and
/// four bytes q, `Σ(w+128)·y − 128·Σy` is column by column the exact sum candle's lane q
/// gets, advanced by the same fma; the eight added in candle's tree.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vnni,fma")]
pub fn dot_q8_0(t: &Tiles, tile: usize, x: &ActRows<'_>, out: &mut [f32]) {
    let kb = t.kb;
    let (qs, _) = t.qs[8 * tile * kb..8 * (tile + 1) * kb].as_chunks::<8>();
    let d = &t.d[tile * kb..(tile + 1) * kb];
    let row = |i: usize| (&x.qs[i * kb..(i + 1) * kb], &x.d[i * kb..(i + 1) * kb], &x.base8[i * kb..(i + 1) * kb]);
    let rows = out.len() / TILE;
    let passes = rows.div_ceil(2);
    let own = if rows < PF_ROWS { 0 } else { PF };
    let fetch = |p: usize| pass_fetch(p, passes, own, kb);
    let mut pairs = out.chunks_exact_mut(2 * TILE);
    for (p, o) in pairs.by_ref().enumerate() {
        let (o0, o1) = o.split_at_mut(TILE);
        q8_0_rows::<2>(qs, d, [row(2 * p), row(2 * p + 1)], [o0, o1], fetch(p));
    }
    let rest = pairs.into_remainder();
    if !rest.is_empty() {
        q8_0_rows::<1>(qs, d, [row(rows - 1)], [rest], fetch(passes - 1));
    }
}

/// One activation row's blocks for a Q8_0 tile: bytes, scales, starting sums.
type Q8Row<'a> = (&'a [[i8; 32]], &'a [f32], &'a [[i32; 8]]);

/// One Q8_0 tile's blocks `qs` (scales `d`) against `R` activation rows, into `out`,
/// fetching the weights `fetch` blocks ahead of each block when not 0 (past the tile's end:
/// the next tile's, laid out after it).
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vnni,fma")]
fn q8_0_rows<const R: usize>(
    qs: &[[[u8; 64]; 8]],
    d: &[[f32; TILE]],
    x: [Q8Row<'_>; R],
    out: [&mut [f32]; R],
    fetch: usize,
) {
    let kb = qs.len();
    assert!(d.len() == kb && x.iter().all(|r| r.0.len() == kb && r.1.len() == kb && r.2.len() == kb));
    let mut lanes = [[_mm512_setzero_ps(); 8]; R];
    for b in 0..kb {
        if fetch > 0 {
            ahead(qs, b + fetch, 0, 8);
            ahead(d, b + fetch, 0, 1);
        }
        let dw = load16(&d[b]);
        let dd: [__m512; R] = std::array::from_fn(|r| _mm512_mul_ps(dw, _mm512_set1_ps(x[r].1[b])));
        for q in 0..8 {
            let wq = load64(&qs[b][q]);
            for r in 0..R {
                // The offset's −128·Σy as the starting value: the same exact sum.
                let s = _mm512_dpbusd_epi32(_mm512_set1_epi32(x[r].2[b][q]), wq, quad(&x[r].0[b], q));
                lanes[r][q] = _mm512_fmadd_ps(dd[r], _mm512_cvtepi32_ps(s), lanes[r][q]);
            }
        }
    }
    for (l, o) in lanes.iter().zip(out) {
        store16(o, lane_tree(l));
    }
}

/// Blocks ahead whose weights are fetched into cache while a block is computed.
const PF: usize = 8;

/// Rows from which the kernels fetch ahead (one row's loop is short enough for the
/// hardware's own prefetch).
const PF_ROWS: usize = 2;

/// Blocks ahead to fetch in pass `p` of `passes` over a tile of `kb` blocks (a pass: a
/// pair of rows, or the last row), 0 for none: the first pass streams the tile from memory,
/// fetching its own blocks `own` ahead; the last of several, computing from cache, fetches
/// the next tile's (laid out after this one, so `kb` ahead), so that memory keeps streaming.
pub(crate) fn pass_fetch(p: usize, passes: usize, own: usize, kb: usize) -> usize {
    if p == 0 {
        own
    } else if p + 1 == passes {
        kb
    } else {
        0
    }
}

/// Ask for `lines` cache lines of `v`, from line `line` of its element `at` on (no fault
/// past the end: a prefetch of any address is harmless).
#[inline]
pub(crate) fn ahead<T>(v: &[T], at: usize, line: usize, lines: usize) {
    let p = v.as_ptr().wrapping_add(at).cast::<i8>().wrapping_add(64 * line);
    for l in 0..lines {
        // SAFETY: a prefetch reads nothing into the program and never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64 * l)) };
    }
}

/// [`super::lane_tree`] lane-wise: 16 columns' sums of their eight lanes.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn lane_tree(lanes: &[__m512; 8]) -> __m512 {
    let l: [__m512; 4] = std::array::from_fn(|j| _mm512_add_ps(lanes[j], lanes[j + 4]));
    _mm512_add_ps(_mm512_add_ps(l[0], l[2]), _mm512_add_ps(l[1], l[3]))
}

/// `v` into a tile's 16 outputs.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn store16(o: &mut [f32], v: __m512) {
    let o: &mut [f32; TILE] = o.try_into().expect("a tile");
    // SAFETY: `o` is exactly 16 f32s; the store is unaligned.
    unsafe { _mm512_storeu_ps(o.as_mut_ptr(), v) };
}

/// [`super::amax`] with AVX-512.
#[target_feature(enable = "avx512f")]
pub fn amax(xs: &[f32; 32]) -> f32 {
    let (a, b) = (load16(xs[..16].try_into().expect("16")), load16(xs[16..].try_into().expect("16")));
    _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(a), _mm512_abs_ps(b)))
}

/// [`super::round_scaled`] with AVX-512: v = x·id, trunc(v + copysign(0.5⁻, v)) (LLVM's own
/// lowering of `round`), converted to i32 exactly and narrowed to i8 with saturation, as
/// `as i8` narrows.
#[target_feature(enable = "avx512f")]
pub fn round_scaled(xs: &[f32; 32], id: f32) -> [i8; 32] {
    let half = _mm512_set1_epi32(0.5f32.next_down().to_bits() as i32);
    let sign = _mm512_set1_epi32(i32::MIN);
    let mut out = [0i8; 32];
    for h in 0..2 {
        let v = _mm512_mul_ps(load16(xs[16 * h..16 * h + 16].try_into().expect("16")), _mm512_set1_ps(id));
        let bias = _mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(v), sign), half);
        let r = _mm512_roundscale_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(_mm512_add_ps(
            v,
            _mm512_castsi512_ps(bias),
        ));
        let bytes = _mm512_cvtsepi32_epi8(_mm512_cvttps_epi32(r));
        let o: &mut [i8; 16] = (&mut out[16 * h..16 * h + 16]).try_into().expect("16");
        // SAFETY: `o` is exactly 16 bytes; the store is unaligned.
        unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), bytes) };
    }
    out
}

/// 64 bytes.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn load64(v: &[u8; 64]) -> __m512i {
    // SAFETY: `v` is exactly 64 bytes; the load is unaligned.
    unsafe { _mm512_loadu_si512(v.as_ptr().cast()) }
}

/// 16 f32s.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn load16(v: &[f32; TILE]) -> __m512 {
    // SAFETY: `v` is exactly 16 f32s; the load is unaligned.
    unsafe { _mm512_loadu_ps(v.as_ptr()) }
}
