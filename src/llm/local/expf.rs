//! The fifth audited `unsafe` module: e^x of many f32 values at once, to the bit the C
//! library's `expf` gives (the call Rust's `f32::exp` makes, and so candle's softmax and SiLU).
//! The decode step spends its softmax and SiLU almost wholly in that call, one value at a time.
//!
//! glibc (2.27 on; on CPUs with FMA its `__expf_fma` build) computes e^x in double precision:
//! k = round(x·32/ln 2) by adding 1.5·2⁵², r = x·32/ln 2 − k, a 32-entry table of 2^(i/32)
//! and a cubic in r, each `a·b + c` fused (read off glibc 2.36's `__expf_fma`: the product
//! x·32/ln 2 is fused into both the rounding and r), then rounded to f32 once. Here the same
//! operations run on eight doubles per AVX-512 register, so every lane gets glibc's bits. Lanes
//! it treats apart (|x| ≥ 88, NaN) and short tails go through `f32::exp` itself.
//!
//! Used only where it agrees: on first use, [`exp_in_place`] compares itself with `f32::exp` on
//! 2¹⁶ values over the whole range (among them inputs glibc's result is not the nearest
//! float for, where another libm would differ) and falls back to `f32::exp` otherwise. The test
//! below holds it to `f32::exp` on 2²⁴ values and checks that the table is 2^(i/32) correctly
//! rounded. The only unsafe operations are calls of the AVX-512 function after the CPU is
//! checked, and unaligned loads and stores of exactly 8 floats.
#![allow(unsafe_code)]

/// 2^(i/32) as a double, less i·2⁴⁷ (so that adding k·2⁴⁷ for k = 32·e + i scales it by 2^e).
const TABLE: [u64; 32] = [
    0x3ff0000000000000,
    0x3fefd9b0d3158574,
    0x3fefb5586cf9890f,
    0x3fef9301d0125b51,
    0x3fef72b83c7d517b,
    0x3fef54873168b9aa,
    0x3fef387a6e756238,
    0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715,
    0x3feef1a7373aa9cb,
    0x3feedea64c123422,
    0x3feece086061892d,
    0x3feebfdad5362a27,
    0x3feeb42b569d4f82,
    0x3feeab07dd485429,
    0x3feea47eb03a5585,
    0x3feea09e667f3bcd,
    0x3fee9f75e8ec5f74,
    0x3feea11473eb0187,
    0x3feea589994cce13,
    0x3feeace5422aa0db,
    0x3feeb737b0cdc5e5,
    0x3feec49182a3f090,
    0x3feed503b23e255d,
    0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47,
    0x3fef199bdd85529c,
    0x3fef3720dcef9069,
    0x3fef5818dcfba487,
    0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da,
    0x3fefd0765b6e4540,
];

/// 32/ln 2 (1/ln 2 rounded to a double, times 32).
const INV_LN2_N: f64 = f64::from_bits(0x3ff71547652b82fe) * 32.0;
/// 1.5·2⁵²: added to round to an integer (ties to even) in the low bits.
const SHIFT: f64 = 6755399441055744.0;
/// The cubic's coefficients for r in units of 1/32 (glibc's, each divided by 32^(3−j)).
const POLY: [f64; 3] = [
    f64::from_bits(0x3fac6af84b912394) / 32768.0,
    f64::from_bits(0x3fcebfce50fac4f3) / 1024.0,
    f64::from_bits(0x3fe62e42ff0c52d6) / 32.0,
];

/// Each value of `xs` replaced by e^value, bit-identical to `f32::exp`.
pub fn exp_in_place(xs: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if avx512::agrees() {
        let mut chunks = xs.chunks_exact_mut(8);
        for c in chunks.by_ref() {
            let c: &mut [f32; 8] = c.try_into().expect("8 values");
            // SAFETY: the CPU has AVX-512 F and DQ, and FMA (checked in `agrees`).
            if !unsafe { avx512::exp8(c) } {
                c.iter_mut().for_each(|v| *v = v.exp());
            }
        }
        chunks.into_remainder().iter_mut().for_each(|v| *v = v.exp());
        return;
    }
    xs.iter_mut().for_each(|v| *v = v.exp());
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{INV_LN2_N, POLY, SHIFT, TABLE};

    /// Whether the CPU has the instructions and this module gives `f32::exp`'s bits on 2¹⁶
    /// values spread over every exponent (decided once).
    pub fn agrees() -> bool {
        static AGREES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AGREES.get_or_init(|| {
            let has = is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512dq")
                && is_x86_feature_detected!("fma");
            has && probe().iter().all(|c| {
                let mut v = *c;
                // SAFETY: the CPU has AVX-512 F and DQ, and FMA (checked just above).
                let fast = unsafe { exp8(&mut v) };
                !fast || v.iter().zip(c).all(|(v, x)| v.to_bits() == x.exp().to_bits())
            })
        })
    }

    /// 2¹⁶ inputs in chunks of eight: bit patterns spread over both signs and every exponent
    /// up to |x| = 88.
    pub(super) fn probe() -> Vec<[f32; 8]> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        (0..8192)
            .map(|_| {
                std::array::from_fn(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let bits = (state >> 32) as u32;
                    let x = f32::from_bits(bits & 0x7fff_ffff) % 88.0;
                    if bits & 0x8000_0000 != 0 { -x } else { x }
                })
            })
            .collect()
    }

    /// `x` replaced by e^x lane by lane in glibc's arithmetic; false (x untouched) when a lane
    /// is one glibc treats apart (|x| ≥ 88 or NaN).
    #[target_feature(enable = "avx2,avx512f,avx512dq,fma")]
    pub fn exp8(x: &mut [f32; 8]) -> bool {
        // SAFETY: `x` is exactly 8 f32s; the load is unaligned.
        let xf = unsafe { _mm256_loadu_ps(x.as_ptr()) };
        let abs = _mm256_and_si256(_mm256_castps_si256(xf), _mm256_set1_epi32(0x7fff_ffff));
        // top12(|x|) ≥ top12(88.0): |x|'s bits ≥ 0x42b00000 (NaN and infinities above).
        let apart = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x42af_ffff));
        if _mm256_movemask_epi8(apart) != 0 {
            return false;
        }
        let xd = _mm512_cvtps_pd(xf);
        let n = _mm512_set1_pd(INV_LN2_N);
        // z = n·x feeds two additions, each fused with the product.
        let kd = _mm512_fmadd_pd(n, xd, _mm512_set1_pd(SHIFT));
        let ki = _mm512_castpd_si512(kd);
        let kd = _mm512_sub_pd(kd, _mm512_set1_pd(SHIFT));
        let r = _mm512_fmsub_pd(n, xd, kd);
        let idx = _mm512_and_si512(ki, _mm512_set1_epi64(31));
        // SAFETY: every index is below 32, the table's length (masked just above).
        let t = unsafe { _mm512_i64gather_epi64::<8>(idx, TABLE.as_ptr().cast()) };
        let s = _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_slli_epi64::<47>(ki)));
        let z = _mm512_fmadd_pd(_mm512_set1_pd(POLY[0]), r, _mm512_set1_pd(POLY[1]));
        let r2 = _mm512_mul_pd(r, r);
        let y = _mm512_fmadd_pd(_mm512_set1_pd(POLY[2]), r, _mm512_set1_pd(1.0));
        let y = _mm512_mul_pd(_mm512_fmadd_pd(z, r2, y), s);
        // SAFETY: `x` is exactly 8 f32s; the store is unaligned.
        unsafe { _mm256_storeu_ps(x.as_mut_ptr(), _mm512_cvtpd_ps(y)) };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a` · `b` of little-endian 64-bit limbs.
    fn mul(a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; a.len() + b.len()];
        for (i, &x) in a.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &y) in b.iter().enumerate() {
                let v = out[i + j] as u128 + x as u128 * y as u128 + carry;
                out[i + j] = v as u64;
                carry = v >> 64;
            }
            out[i + b.len()] = carry as u64;
        }
        while out.len() > 1 && out.last() == Some(&0) {
            out.pop();
        }
        out
    }

    fn pow32(m: u64) -> Vec<u64> {
        (0..5).fold(vec![m], |p, _| mul(&p, &p))
    }

    /// a < b for limb vectors without leading zeros.
    fn less(a: &[u64], b: &[u64]) -> bool {
        a.len() < b.len() || (a.len() == b.len() && a.iter().rev().lt(b.iter().rev()))
    }

    fn power_of_two(e: usize) -> Vec<u64> {
        let mut v = vec![0u64; e / 64 + 1];
        v[e / 64] = 1 << (e % 64);
        v
    }

    #[test]
    fn the_table_is_two_to_the_i_over_32_correctly_rounded() {
        for (i, &t) in TABLE.iter().enumerate() {
            let bits = t + ((i as u64) << 47);
            let d = f64::from_bits(bits);
            assert!((1.0..2.0).contains(&d), "entry {i}");
            // d = m·2⁻⁵², the nearest double to 2^(i/32) exactly when (2m−1)/2⁵³ < 2^(i/32) <
            // (2m+1)/2⁵³, that is (2m−1)³² < 2^(i + 53·32) < (2m+1)³².
            let m = (bits & ((1 << 52) - 1)) | (1 << 52);
            let target = power_of_two(i + 53 * 32);
            assert!(less(&pow32(2 * m - 1), &target) && less(&target, &pow32(2 * m + 1)), "entry {i}");
        }
    }

    #[test]
    fn equals_the_c_librarys_expf_bit_for_bit() {
        // Every 256th f32 bit pattern with |x| < 104 of both signs (2²⁴ values), the probe's
        // values, and the edges glibc treats apart.
        let mut xs: Vec<f32> =
            (0..1u32 << 23).map(|i| f32::from_bits(i << 8)).filter(|x| x.abs() < 104.0).flat_map(|x| [x, -x]).collect();
        #[cfg(target_arch = "x86_64")]
        xs.extend(avx512::probe().into_iter().flatten());
        xs.extend([0.0, -0.0, 88.0, -88.0, 87.99999, -87.99999, 88.72284, -103.97208, f32::NAN, f32::INFINITY]);
        xs.extend([f32::NEG_INFINITY, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e-30, -1e-30, 0.5, -0.5]);
        // Where the CPU runs the vector path, it must be the path taken (glibc's FMA build is
        // what these machines load).
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512dq") {
            assert!(avx512::agrees(), "the AVX-512 expf disagrees with the C library's on the probe");
        }
        let mut fast = xs.clone();
        exp_in_place(&mut fast);
        for (x, v) in xs.iter().zip(&fast) {
            assert_eq!(v.to_bits(), x.exp().to_bits(), "e^{x:e}");
        }
    }
}
