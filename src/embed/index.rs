//! Exact top-k retrieval by cosine similarity: unit vectors stored row-major in one contiguous
//! `Vec<f32>`, scored with an 8-lane dot product the compiler vectorises, and a bounded
//! selection of the best k. `search_prefix` searches only the first n rows — the episodes that
//! came before the current one in an append-only bank.

/// An append-only matrix of unit vectors.
#[derive(Clone, Debug, Default)]
pub struct VectorIndex {
    dim: usize,
    data: Vec<f32>,
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
        VectorIndex { dim, data: Vec::new() }
    }

    /// With room for `n` vectors.
    pub fn with_capacity(dim: usize, n: usize) -> VectorIndex {
        VectorIndex { dim, data: Vec::with_capacity(dim * n) }
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
        let better = |a: &(usize, f32), b: &(usize, f32)| a.1 > b.1 || (a.1 == b.1 && a.0 < b.0);
        for (i, row) in self.data[..n * self.dim].chunks_exact(self.dim).enumerate() {
            let s = dot(q, row);
            if best.len() == k && !better(&(i, s), &best[k - 1]) {
                continue;
            }
            let pos = best.iter().position(|b| better(&(i, s), b)).unwrap_or(best.len());
            best.insert(pos, (i, s));
            best.truncate(k);
        }
        best
    }
}

/// Rows per block in [`VectorIndex::search_many`]: 512 x 384 floats = 768 KiB, cache-resident
/// while every query of a worker is scored against it.
const BLOCK_ROWS: usize = 512;

impl VectorIndex {
    /// Top-k for many queries at once, query `i` over the first `prefixes[i]` rows. Rows stream
    /// through in cache-sized blocks, each read once per worker for all its queries (memory
    /// traffic divided by the batch size); queries are split over `jobs` threads. Results equal
    /// [`VectorIndex::search_prefix`] per query. Retrieval in the memory loop depends only on the
    /// task order and the embeddings, so a seed's retrieved sets can all be computed this way.
    pub fn search_many(&self, queries: &[&[f32]], prefixes: &[usize], k: usize, jobs: usize) -> Vec<Vec<(usize, f32)>> {
        assert_eq!(queries.len(), prefixes.len(), "one prefix per query");
        let items: Vec<usize> = (0..queries.len()).collect();
        let per = queries.len().div_ceil(jobs.max(1)).max(1);
        let chunks: Vec<&[usize]> = items.chunks(per).collect();
        let parts =
            crate::par::par_map_with(&chunks, jobs, || (), |_, chunk| self.search_block(queries, prefixes, chunk, k));
        parts.into_iter().flatten().collect()
    }

    fn search_block(
        &self,
        queries: &[&[f32]],
        prefixes: &[usize],
        which: &[usize],
        k: usize,
    ) -> Vec<Vec<(usize, f32)>> {
        let mut best: Vec<Vec<(usize, f32)>> = vec![Vec::with_capacity(k + 1); which.len()];
        let longest = which.iter().map(|&q| prefixes[q].min(self.len())).max().unwrap_or(0);
        let better = |a: &(usize, f32), b: &(usize, f32)| a.1 > b.1 || (a.1 == b.1 && a.0 < b.0);
        let mut start = 0;
        while start < longest {
            let end = (start + BLOCK_ROWS).min(longest);
            for (slot, &q) in which.iter().enumerate() {
                let stop = end.min(prefixes[q]);
                let b = &mut best[slot];
                for i in start..stop {
                    let s = dot(queries[q], self.row(i));
                    if k == 0 || (b.len() == k && !better(&(i, s), &b[k - 1])) {
                        continue;
                    }
                    let pos = b.iter().position(|x| better(&(i, s), x)).unwrap_or(b.len());
                    b.insert(pos, (i, s));
                    b.truncate(k);
                }
            }
            start = end;
        }
        best
    }
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
        let qs: Vec<Vec<f32>> = (0..11).map(|_| (0..dim).map(|_| next()).collect()).collect();
        let refs: Vec<&[f32]> = qs.iter().map(Vec::as_slice).collect();
        let prefixes = [0, 1, 2, 5, 512, 513, 700, 1024, 1100, 3, 1099];
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
