//! One sequence's keys and values for one layer, in buffers that grow in place: each KV head's
//! positions are one contiguous `len` x `head_dim` matrix (the shape attention multiplies
//! with), so a decode step appends a row instead of copying the whole cache into a new tensor,
//! as `Tensor::cat` did on every step of every layer. A [`super::Cache`] shares these buffers
//! between its copies (prefix states, forced-choice forks) until one of them writes: that copy
//! then takes its own, sized to what it holds plus one chunk.

/// Keys and values of `heads` heads of `dim` values, `len` positions of `cap` reserved.
#[derive(Debug)]
pub struct Kv {
    heads: usize,
    dim: usize,
    cap: usize,
    len: usize,
    /// `heads` slabs of `cap` x `dim` values.
    k: Vec<f32>,
    v: Vec<f32>,
}

/// Positions reserved beyond those held when a buffer is first made or copied.
const HEADROOM: usize = 64;

impl Kv {
    /// An empty buffer for `heads` heads of `dim` values.
    pub fn new(heads: usize, dim: usize) -> Kv {
        Kv { heads, dim, cap: 0, len: 0, k: Vec::new(), v: Vec::new() }
    }

    /// Positions held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before the first position.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes its buffers hold (reserved positions included).
    pub fn bytes(&self) -> usize {
        (self.k.capacity() + self.v.capacity()) * std::mem::size_of::<f32>()
    }

    /// A copy of `self` with room for `cap` positions (at least `len`).
    fn with_cap(&self, cap: usize) -> Kv {
        let cap = cap.max(self.len);
        let (mut k, mut v) = (vec![0f32; self.heads * cap * self.dim], vec![0f32; self.heads * cap * self.dim]);
        let held = self.len * self.dim;
        for h in 0..self.heads {
            let (from, to) = (h * self.cap * self.dim, h * cap * self.dim);
            k[to..to + held].copy_from_slice(&self.k[from..from + held]);
            v[to..to + held].copy_from_slice(&self.v[from..from + held]);
        }
        Kv { heads: self.heads, dim: self.dim, cap, len: self.len, k, v }
    }

    /// Append `s` positions: `k` and `v` laid out head by head, `s` x `dim` values each.
    pub fn push(&mut self, k: &[f32], v: &[f32], s: usize) {
        assert_eq!(k.len(), self.heads * s * self.dim, "keys of {s} positions");
        assert_eq!(v.len(), k.len(), "values as many as keys");
        if self.len + s > self.cap {
            *self = self.with_cap((self.len + s).next_power_of_two().max(HEADROOM));
        }
        let n = s * self.dim;
        for h in 0..self.heads {
            let at = (h * self.cap + self.len) * self.dim;
            self.k[at..at + n].copy_from_slice(&k[h * n..(h + 1) * n]);
            self.v[at..at + n].copy_from_slice(&v[h * n..(h + 1) * n]);
        }
        self.len += s;
    }

    /// Head `h`'s keys: `len` x `dim`, row-major.
    pub fn keys(&self, h: usize) -> &[f32] {
        let at = h * self.cap * self.dim;
        &self.k[at..at + self.len * self.dim]
    }

    /// Head `h`'s values: `len` x `dim`, row-major.
    pub fn values(&self, h: usize) -> &[f32] {
        let at = h * self.cap * self.dim;
        &self.v[at..at + self.len * self.dim]
    }

    /// Every head's keys, then every head's values, as (1, heads, len, dim) tensors.
    pub fn tensors(&self) -> candle_core::Result<(candle_core::Tensor, candle_core::Tensor)> {
        let shape = (1, self.heads, self.len, self.dim);
        let dev = &candle_core::Device::Cpu;
        let k: Vec<f32> = (0..self.heads).flat_map(|h| self.keys(h).iter().copied()).collect();
        let v: Vec<f32> = (0..self.heads).flat_map(|h| self.values(h).iter().copied()).collect();
        Ok((candle_core::Tensor::from_vec(k, shape, dev)?, candle_core::Tensor::from_vec(v, shape, dev)?))
    }
}

impl Clone for Kv {
    /// A copy sized to the positions held plus one chunk (a fork of a long prompt state does
    /// not inherit the original's doubling).
    fn clone(&self) -> Kv {
        self.with_cap(self.len + HEADROOM)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_grow_in_place_and_copies_are_independent() {
        let mut a = Kv::new(2, 3);
        let row = |p: usize| -> Vec<f32> { (0..6).map(|i| (p * 10 + i) as f32).collect() };
        for p in 0..70 {
            a.push(&row(p), &row(p + 100), 1);
        }
        let b = a.clone();
        a.push(&row(70), &row(170), 1);
        assert_eq!((a.len(), b.len()), (71, 70));
        // Head 1's keys at position 69: the second half of row(69).
        assert_eq!(&a.keys(1)[69 * 3..70 * 3], &[693.0, 694.0, 695.0]);
        assert_eq!(&b.values(0)[..3], &[1000.0, 1001.0, 1002.0]);
        assert_eq!(b.keys(1).len(), 70 * 3);
        let (k, v) = b.tensors().unwrap();
        assert_eq!(k.dims(), &[1, 2, 70, 3]);
        assert_eq!(
            v.get(0).unwrap().get(1).unwrap().get(0).unwrap().to_vec1::<f32>().unwrap(),
            vec![1003.0, 1004.0, 1005.0]
        );
    }
}
