//! Canonical SQLite values and rows: the one normalised form every comparison and hash uses.
//!
//! Equality follows Python's, because BIRD's EX rule compares `sqlite3` rows as Python tuples:
//! an integral float equals the integer (`1 == 1.0`, `-0.0 == 0`), text never equals a blob,
//! NULL equals NULL. Floats that are integral and fit in an i64 are therefore stored as `Int`,
//! so derived `Eq`/`Hash` on `Value` *is* Python equality.

use xxhash_rust::xxh3::Xxh3;

/// One canonical value of a result cell.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// SQL NULL (Python `None`).
    Null,
    /// An integer, or a float with an exact integer value in the i64 range.
    Int(i64),
    /// A non-integral float, stored by its bits (SQLite never yields NaN: it becomes NULL).
    Float(u64),
    /// UTF-8 text.
    Text(String),
    /// A blob (Python `bytes`: never equal to text).
    Blob(Vec<u8>),
}

/// 2^63 as an f64: the first float past the i64 range.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

impl Value {
    /// The canonical value of a float: `Int` when Python would find it equal to an integer.
    pub fn from_f64(f: f64) -> Value {
        if f.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&f) {
            Value::Int(f as i64)
        } else {
            Value::Float(f.to_bits())
        }
    }

    /// Whether this is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Bytes this value holds in memory beyond its enum slot (for the memory cap).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Value::Text(s) => s.len(),
            Value::Blob(b) => b.len(),
            _ => 0,
        }
    }

    /// Feed the value, with a type tag, into a hasher.
    fn hash_into(&self, h: &mut Xxh3) {
        match self {
            Value::Null => h.update(&[0]),
            Value::Int(i) => {
                h.update(&[1]);
                h.update(&i.to_le_bytes());
            }
            Value::Float(bits) => {
                h.update(&[2]);
                h.update(&bits.to_le_bytes());
            }
            Value::Text(s) => {
                h.update(&[3]);
                h.update(&(s.len() as u64).to_le_bytes());
                h.update(s.as_bytes());
            }
            Value::Blob(b) => {
                h.update(&[4]);
                h.update(&(b.len() as u64).to_le_bytes());
                h.update(b);
            }
        }
    }

    /// A short human rendering (for previews shown to a model or a person).
    pub fn render(&self) -> String {
        match self {
            Value::Null => "NULL".to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(bits) => format!("{}", f64::from_bits(*bits)),
            Value::Text(s) => s.clone(),
            Value::Blob(b) => format!("<blob {} bytes>", b.len()),
        }
    }
}

/// One result row.
pub type Row = Vec<Value>;

/// The 128-bit hash of a row: equal rows (under Python equality) hash equal; column order matters.
pub fn row_hash(row: &[Value]) -> u128 {
    let mut h = Xxh3::new();
    h.update(&(row.len() as u64).to_le_bytes());
    for v in row {
        v.hash_into(&mut h);
    }
    h.digest128()
}

/// The hash of a set of rows given their row hashes: sorts and deduplicates in place, so two results
/// that are equal as sets (order and duplicates ignored) get the same hash.
pub fn set_hash(row_hashes: &mut Vec<u128>) -> u128 {
    row_hashes.sort_unstable();
    row_hashes.dedup();
    let mut h = Xxh3::new();
    h.update(&(row_hashes.len() as u64).to_le_bytes());
    for r in row_hashes.iter() {
        h.update(&r.to_le_bytes());
    }
    h.digest128()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_equal_ints_like_python() {
        assert_eq!(Value::from_f64(1.0), Value::Int(1));
        assert_eq!(Value::from_f64(-0.0), Value::Int(0));
        // 2^53 + 1 is not representable: Python says 9007199254740993 != 9007199254740992.0
        assert_ne!(Value::from_f64(9_007_199_254_740_992.0), Value::Int(9_007_199_254_740_993));
        assert_ne!(Value::from_f64(1.5), Value::Int(1));
        assert!(matches!(Value::from_f64(f64::INFINITY), Value::Float(_)));
        assert!(matches!(Value::from_f64(1e20), Value::Float(_)));
    }

    #[test]
    fn set_hash_ignores_order_and_duplicates_but_not_column_order() {
        let a = [vec![Value::Int(1), Value::Text("x".into())], vec![Value::Int(2), Value::Null]];
        let mut h1: Vec<u128> = a.iter().map(|r| row_hash(r)).collect();
        let mut h2: Vec<u128> = a.iter().rev().chain(a.iter()).map(|r| row_hash(r)).collect();
        assert_eq!(set_hash(&mut h1), set_hash(&mut h2));
        let swapped = [vec![Value::Text("x".into()), Value::Int(1)], vec![Value::Int(2), Value::Null]];
        let mut h3: Vec<u128> = swapped.iter().map(|r| row_hash(r)).collect();
        assert_ne!(set_hash(&mut h1.clone()), set_hash(&mut h3));
        assert_ne!(row_hash(&[Value::Text("1".into())]), row_hash(&[Value::Blob(b"1".to_vec())]));
    }
}
