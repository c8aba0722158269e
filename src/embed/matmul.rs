//! The one `unsafe` call in lucid: gemm's f32 matrix product into a caller-owned buffer
//! (accumulated into it, or overwriting it as candle's matmul does: the decoder's attention). Dense layers start the buffer as bias rows, so they neither copy their input into a
//! tensor nor zero, copy and re-add their output; retrieval scores queries against bank rows in
//! place (the bank read as a transposed matrix). Every pointer comes from a slice whose length is
//! checked against the shape first.
#![allow(unsafe_code)]

/// A row-major matrix view: `rows` x `cols` values of `data`, or its transpose.
#[derive(Clone, Copy, Debug)]
pub struct Mat<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    transposed: bool,
}

impl<'a> Mat<'a> {
    /// `data` as a `rows` x `cols` row-major matrix.
    pub fn new(data: &'a [f32], rows: usize, cols: usize) -> Mat<'a> {
        assert_eq!(data.len(), rows * cols, "matrix data holds rows x cols values");
        Mat { data, rows, cols, transposed: false }
    }

    /// The transpose, without moving anything.
    pub fn t(self) -> Mat<'a> {
        Mat { rows: self.cols, cols: self.rows, transposed: !self.transposed, ..self }
    }

    /// (column stride, row stride) of the logical matrix.
    fn strides(&self) -> (isize, isize) {
        if self.transposed { (self.rows as isize, 1) } else { (1, self.cols as isize) }
    }
}

/// dst (a.rows x b.cols, row-major) += a b, on up to `threads` threads.
pub fn matmul_add(dst: &mut [f32], a: Mat<'_>, b: Mat<'_>, threads: usize) {
    gemm_into(dst, a, b, threads, true)
}

/// dst (a.rows x b.cols, row-major) = a b, dst not read: the call candle's CPU matmul makes
/// for each matrix of a batch, so the values are candle's to the bit (the decoder's attention).
pub fn matmul(dst: &mut [f32], a: Mat<'_>, b: Mat<'_>, threads: usize) {
    gemm_into(dst, a, b, threads, false)
}

/// gemm into `dst`: added to it when `add` (gemm's alpha 1), else overwriting it (alpha 0,
/// dst not read).
fn gemm_into(dst: &mut [f32], a: Mat<'_>, b: Mat<'_>, threads: usize, add: bool) {
    assert_eq!(a.cols, b.rows, "inner dimensions agree");
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert_eq!(dst.len(), m * n, "dst holds a.rows x b.cols values");
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    let parallelism = if threads > 1 { gemm::Parallelism::Rayon(threads) } else { gemm::Parallelism::None };
    let ((a_cs, a_rs), (b_cs, b_rs)) = (a.strides(), b.strides());
    // SAFETY: `a.data`, `b.data` and `dst` hold exactly m*k, k*n and m*n values (asserted in
    // `Mat::new` and above); with these strides every index gemm forms, (i, j) -> i*rs + j*cs,
    // lies inside its slice. `dst` is borrowed mutably, so it aliases neither input.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            add,
            a.data.as_ptr(),
            a_cs,
            a_rs,
            b.data.as_ptr(),
            b_cs,
            b_rs,
            if add { 1.0 } else { 0.0 },
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_and_transposes_match_the_definition() {
        let a: Vec<f32> = (0..6).map(|v| v as f32).collect(); // 2 x 3
        let b: Vec<f32> = (0..12).map(|v| v as f32 - 4.0).collect(); // 3 x 4
        let mut dst = vec![1.0; 8];
        matmul_add(&mut dst, Mat::new(&a, 2, 3), Mat::new(&b, 3, 4), 2);
        let want: Vec<f32> =
            (0..8).map(|ij| 1.0 + (0..3).map(|l| a[(ij / 4) * 3 + l] * b[l * 4 + ij % 4]).sum::<f32>()).collect();
        assert_eq!(dst, want);
        // a (2 x 3) times b2^T where b2 is 4 x 3: b2's rows are the columns.
        let b2: Vec<f32> = (0..12).map(|v| (v % 5) as f32).collect();
        let mut dst = vec![0.0; 8];
        matmul_add(&mut dst, Mat::new(&a, 2, 3), Mat::new(&b2, 4, 3).t(), 1);
        let want: Vec<f32> =
            (0..8).map(|ij| (0..3).map(|l| a[(ij / 4) * 3 + l] * b2[(ij % 4) * 3 + l]).sum()).collect();
        assert_eq!(dst, want);
    }
}
