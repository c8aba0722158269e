//! A score's value as Inspect AI reads it: `inspect_ai.scorer._metric.value_to_float` with its
//! default sentinels (0.3.285): "C" -> 1, "P" -> 0.5, "I" and "N" -> 0 (compared exactly, case
//! and all); a number or boolean as its float; a string lower-cased, "yes"/"true" -> 1,
//! "no"/"false" -> 0, else parsed as Python's `float` parses it when finite. Anything else
//! (a list, an object, "nan", "c") Inspect logs a warning about and reads as 0: here it is
//! [`Read::Unknown`], so the importer can name the file and sample instead of a bare 0.

use serde_json::Value;

/// What a value reads as.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Read {
    /// A float, as `value_to_float` returns it.
    Float(f64),
    /// A value `value_to_float` cannot convert (it warns and returns 0).
    Unknown,
}

/// `value_to_float()(value)` with Inspect's default sentinels.
pub fn value_to_float(value: &Value) -> Read {
    match value {
        Value::String(s) => match s.as_str() {
            "C" => Read::Float(1.0),
            "P" => Read::Float(0.5),
            "I" | "N" => Read::Float(0.0),
            _ => {
                let lower = s.to_lowercase();
                match lower.as_str() {
                    "yes" | "true" => Read::Float(1.0),
                    "no" | "false" => Read::Float(0.0),
                    _ => python_float(&lower).filter(|x| x.is_finite()).map_or(Read::Unknown, Read::Float),
                }
            }
        },
        Value::Bool(b) => Read::Float(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64().map_or(Read::Unknown, Read::Float),
        _ => Read::Unknown,
    }
}

/// `float(s)` as Python reads a string: surrounding whitespace ignored, `_` allowed between
/// digits, "inf"/"nan" spelled any way (they are not finite, and the caller drops them).
fn python_float(s: &str) -> Option<f64> {
    let t = s.trim();
    let b = t.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let underscores_ok = (0..b.len()).filter(|&i| b[i] == b'_').all(|i| i > 0 && digit(i - 1) && digit(i + 1));
    if !underscores_ok {
        return None;
    }
    let t = t.replace('_', "");
    // Rust reads "infinity" and "nan" too; a hex float or "1." Python reads as Rust does.
    t.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::{Read, value_to_float};
    use serde_json::json;

    #[test]
    fn reads_as_inspects_value_to_float() {
        let f = |v| value_to_float(&v);
        assert_eq!(f(json!("C")), Read::Float(1.0));
        assert_eq!(f(json!("P")), Read::Float(0.5));
        assert_eq!(f(json!("I")), Read::Float(0.0));
        assert_eq!(f(json!("N")), Read::Float(0.0));
        // The sentinels compare exactly: a lower-case "c" is no sentinel and no number.
        assert_eq!(f(json!("c")), Read::Unknown);
        assert_eq!(f(json!("Yes")), Read::Float(1.0));
        assert_eq!(f(json!("FALSE")), Read::Float(0.0));
        assert_eq!(f(json!(" 0.25 ")), Read::Float(0.25));
        assert_eq!(f(json!("1_000")), Read::Float(1000.0));
        assert_eq!(f(json!("1__0")), Read::Unknown);
        assert_eq!(f(json!("nan")), Read::Unknown);
        assert_eq!(f(json!("-inf")), Read::Unknown);
        assert_eq!(f(json!(true)), Read::Float(1.0));
        assert_eq!(f(json!(3)), Read::Float(3.0));
        assert_eq!(f(json!([1, 0])), Read::Unknown);
        assert_eq!(f(json!({"a": "C"})), Read::Unknown);
        assert_eq!(f(json!(null)), Read::Unknown);
    }
}
