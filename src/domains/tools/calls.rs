//! The calls in a model's text, read as BFCL reads a prompting model's reply
//! (`default_decode_ast_prompting` and `ast_parse` in `bfcl_eval/model_handler/utils.py`): the
//! text without surrounding backticks, newlines and spaces, bracketed (`[` and `]` added where
//! missing), then without surrounding whitespace and single quotes, parsed as one Python
//! expression: a call, or a list or tuple of calls. Each
//! call becomes `{name: {keyword: value}}` (its positional arguments are dropped, as BFCL drops
//! them); a value resolves as BFCL's `resolve_ast_by_type` resolves it: a constant as itself, a
//! name as its text, a call without keywords as its source text, a call with keywords as a
//! nested call, arithmetic evaluated, a unary operator as the negated constant.

use super::syntax::{self, Expr};
use super::value::{Py, assign, key_text};
use crate::error::Invalid;

/// The calls in `text`, or why BFCL's decoder would fail on it.
pub fn decode(text: &str) -> Result<Vec<Py>, Invalid> {
    let text = text.trim_matches(|c| c == '`' || c == '\n' || c == ' ');
    let mut text = text.to_string();
    if !text.starts_with('[') {
        text.insert(0, '[');
    }
    if !text.ends_with(']') {
        text.push(']');
    }
    // Python's `str.strip()`: `str.isspace` holds for Unicode's white space and for the
    // separators U+001C..U+001F, which Rust's `trim` keeps.
    let cleaned =
        text.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)).trim_matches('\'');
    match syntax::parse(cleaned)? {
        call @ Expr::Call(..) => Ok(vec![resolve_call(&call)?]),
        Expr::List(items) | Expr::Tuple(items) => items
            .iter()
            .map(|e| match e {
                Expr::Call(..) => resolve_call(e),
                _ => Err("an item that is not a call".into()),
            })
            .collect(),
        _ => Err("'...' object has no attribute 'elts'".into()),
    }
}

/// `{name: {keyword: value}}` of a call.
fn resolve_call(call: &Expr) -> Result<Py, Invalid> {
    let Expr::Call(func, _, keywords) = call else { return Err("not a call".into()) };
    let mut parts = Vec::new();
    let mut f = func.as_ref();
    while let Expr::Attribute(value, attr) = f {
        parts.push(attr.clone());
        f = value;
    }
    if let Expr::Name(n) = f {
        parts.push(n.clone());
    }
    parts.reverse();
    // A repeated keyword: the last value, in the first one's place (a dict assigned in order).
    let mut args: Vec<(Py, Py)> = Vec::new();
    for (k, v) in keywords {
        assign(&mut args, Py::Str(k.clone()), resolve(v)?);
    }
    Ok(Py::Dict(vec![(Py::Str(parts.join(".")), Py::Dict(args))]))
}

/// A value as `resolve_ast_by_type` resolves it.
fn resolve(e: &Expr) -> Result<Py, Invalid> {
    Ok(match e {
        Expr::Int(i) => Py::Int(*i),
        Expr::Float(f) => Py::Float(*f),
        Expr::Str(s) => Py::Str(s.clone()),
        Expr::Bool(b) => Py::Bool(*b),
        Expr::None => Py::None,
        Expr::Ellipsis => Py::Str("...".into()),
        Expr::Unary(_, operand) => negate(&constant(operand)?)?,
        Expr::List(items) => Py::List(items.iter().map(resolve).collect::<Result<_, _>>()?),
        Expr::Tuple(items) => Py::Tuple(items.iter().map(resolve).collect::<Result<_, _>>()?),
        Expr::Dict(pairs) => {
            let mut out: Vec<(Py, Py)> = Vec::new();
            for (k, v) in pairs {
                let (k, v) = (resolve(k)?, resolve(v)?);
                if matches!(k, Py::List(_) | Py::Dict(_)) {
                    return Err("unhashable type".into());
                }
                assign(&mut out, k, v);
            }
            Py::Dict(out)
        }
        Expr::Binary(..) => evaluate(e)?,
        Expr::Name(n) => Py::Str(n.clone()),
        Expr::Call(_, _, keywords) if keywords.is_empty() && e.has_opaque() => {
            return Err("a source text lucid does not write back".into());
        }
        Expr::Call(_, _, keywords) if keywords.is_empty() => Py::Str(unparse(e)),
        Expr::Call(..) => resolve_call(e)?,
        Expr::Subscript(..) if e.has_opaque() => return Err("a source text lucid does not write back".into()),
        Expr::Subscript(value, index) => Py::Str(format!("{}[{}]", unparse(value), unparse_index(index))),
        Expr::Attribute(..) => return Err("Unsupported AST type: <class 'ast.Attribute'>".into()),
        Expr::Opaque(what) => return Err(format!("{what} is not resolved").into()),
    })
}

/// The `.value` of a unary operator's operand: only a constant has one.
fn constant(e: &Expr) -> Result<Py, Invalid> {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Str(_) | Expr::Bool(_) | Expr::None => resolve(e),
        Expr::Ellipsis => Err("bad operand type for unary -: 'ellipsis'".into()),
        _ => Err("the operand of a unary operator has no attribute 'value'".into()),
    }
}

/// `-value` (BFCL negates whatever the unary operator was).
fn negate(v: &Py) -> Result<Py, Invalid> {
    match v {
        Py::Bool(b) => Ok(Py::Int(-i128::from(*b))),
        Py::Int(i) => Ok(Py::Int(-i)),
        Py::Float(f) => Ok(Py::Float(-f)),
        other => Err(format!("bad operand type for unary -: {:?}", other.kind()).into()),
    }
}

/// `eval(ast.unparse(e))` for arithmetic on numbers and strings.
fn evaluate(e: &Expr) -> Result<Py, Invalid> {
    match e {
        Expr::Binary(a, op, b) => arithmetic(&evaluate(a)?, op, &evaluate(b)?),
        Expr::Unary(op, x) => {
            let v = evaluate(x)?;
            match *op {
                "-" => negate(&v),
                "+" => match v {
                    Py::Bool(b) => Ok(Py::Int(i128::from(b))),
                    Py::Int(_) | Py::Float(_) => Ok(v),
                    _ => Err("bad operand type for unary +".into()),
                },
                "~" => match v {
                    Py::Bool(b) => Ok(Py::Int(!i128::from(b))),
                    Py::Int(i) => Ok(Py::Int(!i)),
                    _ => Err("bad operand type for unary ~".into()),
                },
                _ => Err(format!("`{op}` is not evaluated").into()),
            }
        }
        Expr::Int(_) | Expr::Float(_) | Expr::Str(_) | Expr::Bool(_) | Expr::None => resolve(e),
        Expr::List(_) | Expr::Tuple(_) | Expr::Dict(_) => resolve(e),
        _ => Err(format!("name '{}' is not defined", unparse(e)).into()),
    }
}

/// `a op b` on two values, as Python computes it for numbers and strings.
fn arithmetic(a: &Py, op: &str, b: &Py) -> Result<Py, Invalid> {
    let int = |v: &Py| match v {
        Py::Bool(x) => Some(i128::from(*x)),
        Py::Int(x) => Some(*x),
        _ => None,
    };
    let float = |v: &Py| match v {
        Py::Float(x) => Some(*x),
        v => int(v).map(|x| x as f64),
    };
    let overflow = || Invalid::from("an integer too large");
    if let (Py::Bool(x), Py::Bool(y)) = (a, b) {
        match op {
            "&" => return Ok(Py::Bool(x & y)),
            "|" => return Ok(Py::Bool(x | y)),
            "^" => return Ok(Py::Bool(x ^ y)),
            _ => {}
        }
    }
    if let (Some(x), Some(y)) = (int(a), int(b)) {
        return match op {
            "&" => Ok(Py::Int(x & y)),
            "|" => Ok(Py::Int(x | y)),
            "^" => Ok(Py::Int(x ^ y)),
            "<<" | ">>" if y < 0 => Err("negative shift count".into()),
            "<<" if x == 0 => Ok(Py::Int(0)),
            "<<" => u32::try_from(y)
                .ok()
                .filter(|y| *y < 127 && (x << y) >> y == x)
                .map(|y| Py::Int(x << y))
                .ok_or_else(overflow),
            ">>" => Ok(Py::Int(x >> y.min(127))),
            "+" => x.checked_add(y).map(Py::Int).ok_or_else(overflow),
            "-" => x.checked_sub(y).map(Py::Int).ok_or_else(overflow),
            "*" => x.checked_mul(y).map(Py::Int).ok_or_else(overflow),
            "/" if y == 0 => Err("division by zero".into()),
            "/" => Ok(Py::Float(x as f64 / y as f64)),
            "//" | "%" if y == 0 => Err("integer division or modulo by zero".into()),
            "//" => Ok(Py::Int(x.div_euclid(y) - i128::from(y < 0 && x.rem_euclid(y) != 0))),
            "%" => Ok(Py::Int(x - y * (x.div_euclid(y) - i128::from(y < 0 && x.rem_euclid(y) != 0)))),
            "**" if x == 0 && y < 0 => Err("0.0 cannot be raised to a negative power".into()),
            "**" if y >= 0 => u32::try_from(y).ok().and_then(|y| x.checked_pow(y)).map(Py::Int).ok_or_else(overflow),
            "**" => Ok(Py::Float((x as f64).powf(y as f64))),
            _ => Err(format!("`{op}` is not evaluated").into()),
        };
    }
    if let (Some(x), Some(y)) = (float(a), float(b)) {
        return match op {
            "+" => Ok(Py::Float(x + y)),
            "-" => Ok(Py::Float(x - y)),
            "*" => Ok(Py::Float(x * y)),
            "/" | "//" | "%" if y == 0.0 => Err("float division by zero".into()),
            "/" => Ok(Py::Float(x / y)),
            "//" => Ok(Py::Float(float_divmod(x, y).0)),
            "%" => Ok(Py::Float(float_divmod(x, y).1)),
            "**" if x == 0.0 && y < 0.0 => Err("0.0 cannot be raised to a negative power".into()),
            // A negative base to a fractional power is a complex number in Python.
            "**" if x < 0.0 && y.fract() != 0.0 => Err("a complex result lucid does not hold".into()),
            "**" => Ok(Py::Float(x.powf(y))),
            _ => Err(format!("`{op}` is not evaluated").into()),
        };
    }
    match (a, op, b) {
        (Py::Str(x), "+", Py::Str(y)) => Ok(Py::Str(format!("{x}{y}"))),
        (Py::List(x), "+", Py::List(y)) => Ok(Py::List([x.clone(), y.clone()].concat())),
        (Py::Tuple(x), "+", Py::Tuple(y)) => Ok(Py::Tuple([x.clone(), y.clone()].concat())),
        (Py::Str(s), "*", n) | (n, "*", Py::Str(s)) if int(n).is_some() => {
            let n = usize::try_from(int(n).unwrap_or(0)).unwrap_or(0);
            if s.len().saturating_mul(n) > 1 << 20 {
                return Err("a string too long".into());
            }
            Ok(Py::Str(s.repeat(n)))
        }
        _ => Err(format!("unsupported operand types for {op}").into()),
    }
}

/// `divmod(x, y)` for floats as CPython computes it (`float_divmod` in `floatobject.c`): from
/// `fmod`, so `1 // 0.1` is 9.0, not `floor(1 / 0.1)` = 10.0.
fn float_divmod(x: f64, y: f64) -> (f64, f64) {
    let mut m = x % y;
    let mut div = (x - m) / y;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m += y;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(y);
    }
    let floordiv = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 { f + 1.0 } else { f }
    } else {
        0.0f64.copysign(x / y)
    };
    (floordiv, m)
}

/// `ast.unparse(e)`, as Python writes an expression back.
pub fn unparse(e: &Expr) -> String {
    let seq = |items: &[Expr]| items.iter().map(unparse).collect::<Vec<_>>().join(", ");
    match e {
        Expr::Int(i) => i.to_string(),
        Expr::Float(_) | Expr::Str(_) | Expr::Bool(_) | Expr::None => resolve(e).map(|v| v.repr()).unwrap_or_default(),
        Expr::Ellipsis => "...".into(),
        Expr::Name(n) => n.clone(),
        Expr::Attribute(v, a) => format!("{}.{a}", unparse(v)),
        Expr::Call(f, args, kw) => {
            let mut parts: Vec<String> = args.iter().map(unparse).collect();
            parts.extend(kw.iter().map(|(k, v)| format!("{k}={}", unparse(v))));
            format!("{}({})", unparse(f), parts.join(", "))
        }
        Expr::List(items) => format!("[{}]", seq(items)),
        Expr::Tuple(items) if items.len() == 1 => format!("({},)", unparse(&items[0])),
        Expr::Tuple(items) => format!("({})", seq(items)),
        Expr::Dict(pairs) => {
            let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{}: {}", unparse(k), unparse(v))).collect();
            format!("{{{}}}", inner.join(", "))
        }
        Expr::Subscript(v, i) => format!("{}[{}]", unparse(v), unparse_index(i)),
        Expr::Unary("not", x) => format!("not {}", unparse(x)),
        Expr::Unary(op, x) => format!("{op}{}", unparse(x)),
        Expr::Binary(a, op, b) => format!("{} {op} {}", unparse(a), unparse(b)),
        Expr::Opaque(what) => format!("<{what}>"),
    }
}

/// A subscript's index as `ast.unparse` writes it (a tuple without its parentheses).
fn unparse_index(e: &Expr) -> String {
    match e {
        Expr::Tuple(items) if !items.is_empty() => items.iter().map(unparse).collect::<Vec<_>>().join(", "),
        e => unparse(e),
    }
}

/// The calls written back as one line of Python (`[f(a=1), g(b='x')]`): two replies agree when
/// this is equal.
pub fn canonical(calls: &[Py]) -> String {
    let one = |call: &Py| match call {
        Py::Dict(pairs) => pairs
            .iter()
            .map(|(name, args)| {
                let name = key_text(name);
                let args = match args {
                    Py::Dict(a) => {
                        a.iter().map(|(k, v)| format!("{}={}", key_text(k), v.repr())).collect::<Vec<_>>().join(", ")
                    }
                    other => other.repr(),
                };
                format!("{name}({args})")
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => other.repr(),
    };
    format!("[{}]", calls.iter().map(one).collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_decode_as_bfcl_decodes_them() {
        let calls = decode("```\n[math.hypot(x=4, y=5, z=-1), g(s='a b', t=(1, 2), u=2*3)]\n```").unwrap();
        assert_eq!(canonical(&calls), "[math.hypot(x=4, y=5, z=-1), g(s='a b', t=(1, 2), u=6)]");
        assert_eq!(canonical(&decode("f(a=x, b=np.array([1]), c=+5)").unwrap()), "[f(a='x', b='np.array([1])', c=-5)]");
        assert_eq!(canonical(&decode("f(1, a={'k': 1, 'k': 2})").unwrap()), "[f(a={'k': 2})]");
        assert_eq!(canonical(&decode("f(a=1, b=2, a=3)").unwrap()), "[f(a=3, b=2)]");
        assert!(decode("I cannot help with that.").is_err());
        assert!(decode("f(a=g.h)").is_err());
    }

    /// Each class where lucid's reader once parted from Python's (issue #69), as Python reads it.
    #[test]
    fn replies_are_read_as_pythons_tokenizer_and_evaluator_read_them() {
        let read = |t: &str| decode(t).map(|c| canonical(&c));
        // Edges: BFCL strips backticks, newlines and spaces only, then brackets the text; a `\r`
        // or a separator at the edge stays inside the brackets.
        assert!(read("[f(a=1)]\r\n").is_err());
        assert!(read("\u{1c}f(a=1)\u{1f}").is_err());
        assert!(read("f(a=1)\t").is_ok());
        // An empty or blank reply decodes to no call.
        assert_eq!(read("").unwrap(), "[]");
        assert_eq!(read(" \n ").unwrap(), "[]");
        // Identifiers NFKC-normalised.
        assert_eq!(read("\u{fb01}le(a=1)").unwrap(), "[file(a=1)]");
        // Keywords are not names.
        assert!(read("f(from=1)").is_err());
        assert!(read("f(class='x')").is_err());
        assert!(read("f(a=None)").is_ok());
        // Bitwise operators, shifts and tuple `+` evaluate; a unary operator at the top of a value
        // is BFCL's `-value.operand.value` whatever it is (`~5` is -5), inside arithmetic Python's.
        assert_eq!(
            read("f(a=1 | 2, b=6 ^ 3, c=1 << 4, d=~5, e=True | False, g=(1,) + (2,), h=0 + ~5)").unwrap(),
            "[f(a=3, b=5, c=16, d=-5, e=True, g=(1, 2), h=-6)]"
        );
        // Floor division and modulo of floats as CPython computes them.
        assert_eq!(read("f(a=1 // 0.1, b=-7.5 % 2)").unwrap(), "[f(a=9.0, b=0.5)]");
        // Underscores only between digits; no-break space is no separator.
        assert!(read("f(a=1__0)").is_err());
        assert!(read("f(a=10_)").is_err());
        assert!(read("f(a=0x_1f)").is_ok());
        assert!(read("f(a=1,\u{a0}b=2)").is_err());
        // Positional arguments BFCL drops unread; the same things as values fail.
        for positional in ["lambda x, y=2: x", "[i for i in range(3) if i]", "*args", "f'{x}!'", &"9".repeat(42)] {
            assert_eq!(read(&format!("f({positional}, a=1)")).unwrap(), "[f(a=1)]", "{positional}");
            // (An int past 128 bits as a value is Python's int, which lucid does not hold: refused.)
            assert!(read(&format!("f(a=[{positional}])")).is_err(), "{positional}");
        }
        assert_eq!(read("f(x for x in y)").unwrap(), "[f()]");
        assert!(read("f(x for x in y, a=1)").is_err());
        assert_eq!(read("f(a=1, *b)").unwrap(), "[f(a=1)]");
        assert_eq!(read("f(a=g(lambda: 0, b=2))").unwrap(), "[f(a={'g': {'b': 2}})]");
    }
}
