//! Exact top-k retrieval by cosine similarity: unit vectors stored row-major in one contiguous
//! `Vec<f32>`, scored with an 8-lane dot product the compiler vectorises, and a bounded
//! selection of the best k. `search_prefix` searches only the first n rows — the episodes that
//! came before the current one in an append-only bank. `search_many` scores many queries at once
//! with a matrix product and returns exactly what `search_prefix` returns for each.

use crate::embed::matmul::{Mat, matmul_add};

/// An append-only matrix of unit vectors.
#[derive(Clone, Debug, Default)]
pub struct VectorIndex {
    dim: usize,
    data: Vec<f32>,
    /// Largest row norm, for the rounding bound of batched scores.
    max_norm: f32,
}

/// Dot product in 8 independent lanes (SIMD-friendly, deterministic order).
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

impl VectorIndex {
    /// An empty index of `dim`-sized vectors.
    pub fn new(dim: usize) -> VectorIndex {
        VectorIndex { dim, data: Vec::new(), max_norm: 0.0 }
    }

    /// With room for `n` vectors.
    pub fn with_capacity(dim: usize, n: usize) -> VectorIndex {
        VectorIndex { dim, data: Vec::with_capacity(dim * n), max_norm: 0.0 }
    }

    /// Vector size.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Rows stored.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Append a vector (it should be L2-normalised); returns its row.
    pub fn push(&mut self, v: &[f32]) -> usize {
        assert_eq!(v.len(), self.dim, "vector size");
        self.max_norm = self.max_norm.max(dot(v, v).sqrt());
        self.data.extend_from_slice(v);
        self.len() - 1
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// The `k` rows most similar to `q` among all rows: (row, similarity), best first; ties go to
    /// the earlier row.
    pub fn search(&self, q: &[f32], k: usize) -> Vec<(usize, f32)> {
        self.search_prefix(q, k, self.len())
    }

    /// The `k` best among the first `n` rows.
    pub fn search_prefix(&self, q: &[f32], k: usize, n: usize) -> Vec<(usize, f32)> {
        let n = n.min(self.len());
        if k == 0 || n == 0 {
            return Vec::new();
        }
        let mut best: Vec<(usize, f32)> = Vec::with_capacity(k + 1);
        for (i, row) in self.data[..n * self.dim].chunks_exact(self.dim).enumerate() {
            offer(&mut best, k, (i, dot(q, row)));
        }
        best
    }
}

/// Bank rows scored per matrix product in [`VectorIndex::search_many`].
const BLOCK_ROWS: usize = 1024;
/// Most queries per matrix product (a 256 x 1024 score block is 1 MiB, cache-resident).
const QUERY_BLOCK: usize = 256;

/// Ordering of hits: higher similarity first, ties to the earlier row.
fn better(a: &(usize, f32), b: &(usize, f32)) -> bool {
    a.1 > b.1 || (a.1 == b.1 && a.0 < b.0)
}

impl VectorIndex {
    /// Top-k for many queries at once, query `i` over the first `prefixes[i]` rows; results equal
    /// [`VectorIndex::search_prefix`] per query. Queries sorted by prefix go in blocks, one block
    /// per worker (`jobs` threads); each block is scored against the bank in one matrix product
    /// per 1,024 rows (gemm: compute-bound, each row read once per block instead of once per
    /// query). A product sums in a different order than [`dot`], so it only short-lists: a row
    /// stays a candidate while its score is within twice the rounding bound of the k-th best,
    /// and candidates are rescored with [`dot`] and ranked as `search_prefix` ranks them. Retrieval
    /// in the memory loop depends only on the task order and the embeddings, so a seed's
    /// retrieved sets are all computed this way.
    pub fn search_many(&self, queries: &[&[f32]], prefixes: &[usize], k: usize, jobs: usize) -> Vec<Vec<(usize, f32)>> {
        assert_eq!(queries.len(), prefixes.len(), "one prefix per query");
        let mut order: Vec<usize> = (0..queries.len()).collect();
        order.sort_by_key(|&i| prefixes[i]);
        let per = queries.len().div_ceil(jobs.max(1)).clamp(1, QUERY_BLOCK);
        let blocks: Vec<&[usize]> = order.chunks(per).collect();
        let found =
            crate::par::par_map_with(&blocks, jobs, || (), |_, block| self.search_block(queries, prefixes, block, k));
        let mut out = vec![Vec::new(); queries.len()];
        for (block, hits) in blocks.iter().zip(found) {
            for (&q, h) in block.iter().zip(hits) {
                out[q] = h;
            }
        }
        out
    }

    fn search_block(
        &self,
        queries: &[&[f32]],
        prefixes: &[usize],
        which: &[usize],
        k: usize,
    ) -> Vec<Vec<(usize, f32)>> {
        let d = self.dim;
        let n = which.iter().map(|&q| prefixes[q].min(self.len())).max().unwrap_or(0);
        if k == 0 || n == 0 || d == 0 {
            return vec![Vec::new(); which.len()];
        }
        let qmat: Vec<f32> = which.iter().flat_map(|&q| queries[q].iter().copied()).collect();
        // |product - dot| <= 2 gamma_d |q| |row| (both sum the same d products), so a short-list
        // margin of twice that keeps every true top-k row; 5 instead of 4 leaves room for the
        // rounding of `kth - margin` itself.
        let unit = f32::EPSILON as f64 / 2.0;
        let gamma = d as f64 * unit / (1.0 - d as f64 * unit);
        let margins: Vec<f32> = which
            .iter()
            .map(|&q| (5.0 * gamma * (dot(queries[q], queries[q]) as f64).sqrt() * self.max_norm as f64) as f32)
            .collect();
        let mut short: Vec<Vec<(usize, f32)>> = vec![Vec::new(); which.len()];
        let mut cut = vec![f32::NEG_INFINITY; which.len()];
        let mut scores = vec![0f32; which.len() * BLOCK_ROWS];
        let mut start = 0;
        while start < n {
            let rows = BLOCK_ROWS.min(n - start);
            let block = &mut scores[..which.len() * rows];
            block.fill(0.0);
            let bank = Mat::new(&self.data[start * d..(start + rows) * d], rows, d);
            matmul_add(block, Mat::new(&qmat, which.len(), d), bank.t(), 1);
            for (slot, &q) in which.iter().enumerate() {
                let stop = prefixes[q].min(start + rows);
                let list = &mut short[slot];
                for (j, &s) in block[slot * rows..].iter().take(stop.saturating_sub(start)).enumerate() {
                    if s >= cut[slot] {
                        list.push((start + j, s));
                    }
                }
                if list.len() >= 8 * k.max(4) {
                    cut[slot] = prune(list, k, margins[slot]);
                }
            }
            start += rows;
        }
        which
            .iter()
            .zip(short)
            .zip(margins)
            .map(|((&q, mut list), margin)| {
                prune(&mut list, k, margin);
                list.sort_unstable_by_key(|c| c.0);
                let mut best = Vec::with_capacity(k + 1);
                for (i, _) in list {
                    offer(&mut best, k, (i, dot(queries[q], self.row(i))));
                }
                best
            })
            .collect()
    }
}

/// Put `hit` in its place in `best` (at most `k` long, best first) if it belongs there.
fn offer(best: &mut Vec<(usize, f32)>, k: usize, hit: (usize, f32)) {
    if best.len() == k && !better(&hit, &best[k - 1]) {
        return;
    }
    let pos = best.iter().position(|b| better(&hit, b)).unwrap_or(best.len());
    best.insert(pos, hit);
    best.truncate(k);
}

/// Keep the candidates within `margin` of the k-th best product score; returns the new cut.
fn prune(list: &mut Vec<(usize, f32)>, k: usize, margin: f32) -> f32 {
    if list.len() <= k {
        return f32::NEG_INFINITY;
    }
    let kth = {
        let mut s: Vec<f32> = list.iter().map(|c| c.1).collect();
        let (_, kth, _) = s.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
        *kth
    };
    let cut = kth - margin;
    list.retain(|c| c.1 >= cut);
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_is_exact_and_prefix_limited() {
        let mut idx = VectorIndex::new(3);
        for v in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.8, 0.0], [1.0, 0.0, 0.0]] {
            idx.push(&v);
        }
        let q = [0.8, 0.6, 0.0];
        let hits = idx.search(&q, 3);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![2, 0, 3], "ties keep the earlier row first");
        assert!((hits[0].1 - 0.96).abs() < 1e-6);
        assert_eq!(idx.search_prefix(&q, 4, 2).iter().map(|h| h.0).collect::<Vec<_>>(), vec![0, 1]);
        assert!(idx.search_prefix(&q, 4, 0).is_empty());
        let many = idx.search_many(&[&q, &q, &[0.0, 1.0, 0.0]], &[4, 2, 3], 2, 2);
        assert_eq!(
            many,
            vec![idx.search_prefix(&q, 2, 4), idx.search_prefix(&q, 2, 2), idx.search_prefix(&[0.0, 1.0, 0.0], 2, 3)]
        );
        // Many queries, prefixes across block boundaries, a dimension with a tail: exact agreement.
        let dim = 37;
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        };
        let mut big = VectorIndex::new(dim);
        for _ in 0..1100 {
            let v: Vec<f32> = (0..dim).map(|_| next()).collect();
            big.push(&v);
        }
        // Exact ties (a row stored twice) and near ties (one ulp apart) after the first block.
        for i in 0..60 {
            let row = big.row(i * 7).to_vec();
            big.push(&row);
            let mut near = row.clone();
            near[3] = f32::from_bits(near[3].to_bits() + 1);
            big.push(&near);
        }
        let mut qs: Vec<Vec<f32>> = (0..11).map(|_| (0..dim).map(|_| next()).collect()).collect();
        qs.extend((0..290).map(|i| big.row(i * 3 % 60 * 7).to_vec()));
        let refs: Vec<&[f32]> = qs.iter().map(Vec::as_slice).collect();
        let mut prefixes = vec![0, 1, 2, 5, 512, 513, 700, 1024, 1100, 3, 1099];
        prefixes.extend((0..290).map(|i| 1025 + i * 7 % 196));
        for jobs in [1, 2] {
            let got = big.search_many(&refs, &prefixes, 4, jobs);
            for (i, q) in refs.iter().enumerate() {
                assert_eq!(got[i], big.search_prefix(q, 4, prefixes[i]), "query {i}, jobs {jobs}");
            }
        }
        let long: Vec<f32> = (0..19).map(|i| i as f32).collect();
        assert_eq!(dot(&long, &long), (0..19).map(|i| (i * i) as f32).sum::<f32>());
    }
}
