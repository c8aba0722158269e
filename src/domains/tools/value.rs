//! A Python value as BFCL's checker sees one: the arguments of a decoded call and the possible
//! answers of its gold. The checker is Python, so its verdicts rest on Python's rules, and these
//! follow them: `type()` is exact (a `bool` is not an `int`), `==` compares numbers by value across
//! `bool`, `int` and `float` (`True == 1 == 1.0`), a list never equals a tuple, a dict equals one
//! with the same keys and equal values in any order, and `x in xs` is any `==`.

use serde_json::Value;

/// A Python value.
#[derive(Clone, Debug)]
pub enum Py {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An `int` (within 128 bits; a longer literal is refused where it is read).
    Int(i128),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `list`.
    List(Vec<Py>),
    /// A `tuple`.
    Tuple(Vec<Py>),
    /// A `dict`, in insertion order, its keys distinct by `==`.
    Dict(Vec<(Py, Py)>),
}

/// A Python type, as `type(value)` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PyType {
    /// `NoneType`.
    None,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `str`.
    Str,
    /// `list`.
    List,
    /// `tuple`.
    Tuple,
    /// `dict`.
    Dict,
}

impl Py {
    /// `type(self)`.
    pub fn kind(&self) -> PyType {
        match self {
            Py::None => PyType::None,
            Py::Bool(_) => PyType::Bool,
            Py::Int(_) => PyType::Int,
            Py::Float(_) => PyType::Float,
            Py::Str(_) => PyType::Str,
            Py::List(_) => PyType::List,
            Py::Tuple(_) => PyType::Tuple,
            Py::Dict(_) => PyType::Dict,
        }
    }

    /// Whether `self == "" ` in Python (BFCL's mark of an optional parameter).
    pub fn is_empty_str(&self) -> bool {
        matches!(self, Py::Str(s) if s.is_empty())
    }

    /// The number a `bool`, `int` or `float` stands for in `==` (None: not a number).
    fn number(&self) -> Option<Num> {
        match self {
            Py::Bool(b) => Some(Num::Int(i128::from(*b))),
            Py::Int(i) => Some(Num::Int(*i)),
            Py::Float(f) => Some(Num::Float(*f)),
            _ => None,
        }
    }

    /// Python's `self == other`.
    pub fn py_eq(&self, other: &Py) -> bool {
        if let (Some(a), Some(b)) = (self.number(), other.number()) {
            return a.eq(b);
        }
        match (self, other) {
            (Py::None, Py::None) => true,
            (Py::Str(a), Py::Str(b)) => a == b,
            (Py::List(a), Py::List(b)) | (Py::Tuple(a), Py::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.py_eq(y))
            }
            (Py::Dict(a), Py::Dict(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| lookup(b, k).is_some_and(|w| v.py_eq(w)))
            }
            _ => false,
        }
    }

    /// Python's `self in items`.
    pub fn py_in(&self, items: &[Py]) -> bool {
        items.iter().any(|x| x.py_eq(self))
    }

    /// The value of a JSON document as Python's `json.loads` gives it (an integer beyond 64 bits
    /// read as a float, where Python keeps an int: BFCL's files hold none).
    pub fn from_json(v: &Value) -> Py {
        match v {
            Value::Null => Py::None,
            Value::Bool(b) => Py::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Py::Int(i128::from(i)),
                (None, Some(u)) => Py::Int(i128::from(u)),
                _ => Py::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Py::Str(s.clone()),
            Value::Array(a) => Py::List(a.iter().map(Py::from_json).collect()),
            Value::Object(o) => {
                if let (1, Some(Value::Array(items))) = (o.len(), o.get("__tuple__")) {
                    return Py::Tuple(items.iter().map(Py::from_json).collect());
                }
                Py::Dict(o.iter().map(|(k, v)| (Py::Str(k.clone()), Py::from_json(v))).collect())
            }
        }
    }

    /// As JSON: a tuple as `{"__tuple__": [...]}`, a float with its point, a dict's non-string
    /// key by its `repr`.
    pub fn to_json(&self) -> Value {
        match self {
            Py::None => Value::Null,
            Py::Bool(b) => Value::Bool(*b),
            Py::Int(i) => i64::try_from(*i).map_or_else(|_| Value::String(i.to_string()), Value::from),
            Py::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Py::Str(s) => Value::String(s.clone()),
            Py::List(items) => Value::Array(items.iter().map(Py::to_json).collect()),
            Py::Tuple(items) => serde_json::json!({"__tuple__": items.iter().map(Py::to_json).collect::<Vec<_>>()}),
            Py::Dict(pairs) => Value::Object(pairs.iter().map(|(k, v)| (key_text(k), v.to_json())).collect()),
        }
    }

    /// Python's `repr(self)`, near enough to read and to compare two values by (strings in
    /// single quotes unless they hold one, floats with their point).
    pub fn repr(&self) -> String {
        let seq = |items: &[Py]| items.iter().map(Py::repr).collect::<Vec<_>>().join(", ");
        match self {
            Py::None => "None".into(),
            Py::Bool(b) => if *b { "True" } else { "False" }.into(),
            Py::Int(i) => i.to_string(),
            Py::Float(f) => float_repr(*f),
            Py::Str(s) => str_repr(s),
            Py::List(items) => format!("[{}]", seq(items)),
            Py::Tuple(items) if items.len() == 1 => format!("({},)", items[0].repr()),
            Py::Tuple(items) => format!("({})", seq(items)),
            Py::Dict(pairs) => {
                let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{}: {}", k.repr(), v.repr())).collect();
                format!("{{{}}}", inner.join(", "))
            }
        }
    }
}

/// `pairs[key] = value` as Python assigns into a dict: a key equal (`==`) to one there keeps
/// that one's place and takes the new value; a new key goes last.
pub fn assign(pairs: &mut Vec<(Py, Py)>, key: Py, value: Py) {
    match pairs.iter_mut().find(|(have, _)| have.py_eq(&key)) {
        Some(slot) => slot.1 = value,
        None => pairs.push((key, value)),
    }
}

/// A dict key as text: a string as itself, anything else by its `repr`.
pub fn key_text(key: &Py) -> String {
    if let Py::Str(s) = key { s.clone() } else { key.repr() }
}

/// The value of `key` in a dict's pairs, by Python's `==` on keys.
pub fn lookup<'a>(pairs: &'a [(Py, Py)], key: &Py) -> Option<&'a Py> {
    pairs.iter().find(|(k, _)| k.py_eq(key)).map(|(_, v)| v)
}

/// A number as `==` compares it.
#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    /// Python compares an int with a float exactly (not through a rounded float).
    fn eq(self, other: Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a == b,
            (Num::Float(a), Num::Float(b)) => a == b,
            (Num::Int(i), Num::Float(f)) | (Num::Float(f), Num::Int(i)) => {
                f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 && f as i128 == i
            }
        }
    }
}

/// Python's `repr` of a float: the shortest digits that read back, with a point or an exponent.
fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let s = format!("{f:?}");
    if s.contains(['.', 'e', 'E']) { s } else { format!("{s}.0") }
}

/// Python's `repr` of a string.
fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::from(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equality_is_pythons() {
        let (t, one, onef) = (Py::Bool(true), Py::Int(1), Py::Float(1.0));
        assert!(t.py_eq(&one) && one.py_eq(&onef) && t.py_eq(&onef));
        assert!(!Py::Int(2).py_eq(&Py::Float(2.5)));
        assert!(Py::Float(-0.0).py_eq(&Py::Int(0)));
        assert!(!Py::List(vec![one.clone()]).py_eq(&Py::Tuple(vec![one.clone()])));
        assert!(Py::List(vec![t.clone()]).py_eq(&Py::List(vec![onef.clone()])));
        let d1 = Py::from_json(&json!({"a": 1, "b": [2.0]}));
        let d2 = Py::from_json(&json!({"b": [2], "a": true}));
        assert!(d1.py_eq(&d2));
        assert!(!Py::Str("1".into()).py_eq(&one));
        assert!(!Py::None.py_eq(&Py::Str(String::new())));
        assert_eq!(t.kind(), PyType::Bool);
        assert!(Py::Int(9_007_199_254_740_993).py_eq(&Py::Int(9_007_199_254_740_993)));
        assert!(!Py::Int(9_007_199_254_740_993).py_eq(&Py::Float(9_007_199_254_740_992.0)));
    }

    #[test]
    fn json_keeps_floats_and_tuples() {
        let v = json!({"x": 1.0, "y": 2, "t": {"__tuple__": [1, "a"]}});
        let p = Py::from_json(&v);
        assert_eq!(p.to_json(), v);
        assert_eq!(p.repr(), "{'x': 1.0, 'y': 2, 't': (1, 'a')}");
        assert_eq!(Py::Str("it's".into()).repr(), "\"it's\"");
    }
}
