//! A reply read by BFCL's own decoder where lucid's reader ([`calls::decode`]) does not read it
//! (issue #69): `default_decode_ast_prompting` and the functions it calls, taken unchanged from
//! the fetched wheel's `bfcl_eval/model_handler/utils.py` and run in lucid's Python sandbox
//! (`data/decode.py`). lucid's reader is the fast path and decides every reply it reads; a reply
//! it refuses (syntax it does not hold, arithmetic it does not evaluate: `abs(x) + 1`, `'%s' % s`,
//! `s[:2] + s[2:]`, an int past 128 bits) goes to Python, whose answer stands.
//!
//! Isolation: replies are decoded many to a process with BFCL's `eval` replaced, so no reply's
//! text runs beside another's; a reply whose decoding needs `eval` (arithmetic, a lambda) is
//! decoded again alone, in a process of its own, under [`LIMITS`] (a reply past them does not
//! decode). Whatever such a reply's code does reaches only its own result, which it could as well
//! have written as a literal; the sandbox holds no gold. Results are kept per reply text, so a
//! reply is sent to Python once per domain.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use super::calls;
use super::value::Py;
use crate::error::Invalid;
use crate::python::{PyLimits, Python};

/// The sandbox's script.
const DECODE: &str = include_str!("data/decode.py");

/// Replies decoded in one process.
const BATCH: usize = 512;

/// One process's limits: a batch, or a reply alone.
pub const LIMITS: PyLimits =
    PyLimits { fuel: 8_000_000_000, memory_bytes: 256 << 20, output_bytes: 16 << 20, wall_secs: 120 };

/// What decoding a reply gave.
pub type Decoded = Result<Vec<Py>, Invalid>;

/// BFCL's decoder in the sandbox, loaded on first use, with the results it gave.
pub struct BfclReader {
    cache_dir: Option<PathBuf>,
    loaded: OnceLock<Result<(Python, String), Invalid>>,
    known: Mutex<HashMap<String, Decoded>>,
}

impl BfclReader {
    /// The reader whose interpreter and wheel are fetched under `cache_dir` (None: lucid's
    /// reader alone, a refused reply refused).
    pub fn new(cache_dir: Option<&Path>) -> BfclReader {
        BfclReader { cache_dir: cache_dir.map(Path::to_path_buf), loaded: OnceLock::new(), known: Mutex::default() }
    }

    /// The calls in `text` as BFCL's decoder reads them.
    pub fn decode(&self, text: &str) -> Decoded {
        match calls::decode(text) {
            Ok(calls) => Ok(calls),
            Err(refused) => {
                if !self.known.lock().unwrap().contains_key(text) {
                    self.read_refused(vec![text]);
                }
                self.known.lock().unwrap().get(text).cloned().unwrap_or(Err(refused))
            }
        }
    }

    /// Decode every reply of `texts` lucid's reader refuses, many to a process, so that later
    /// [`BfclReader::decode`] calls find them.
    pub fn prepare(&self, texts: &[&str]) {
        let pending: Vec<&str> = {
            let known = self.known.lock().unwrap();
            let mut seen = std::collections::HashSet::new();
            texts
                .iter()
                .copied()
                .filter(|t| !known.contains_key(*t) && seen.insert(*t) && calls::decode(t).is_err())
                .collect()
        };
        self.read_refused(pending);
    }

    /// BFCL's reading of `pending`, replies lucid's reader refused and not yet known, kept.
    fn read_refused(&self, pending: Vec<&str>) {
        let Some(cache_dir) = &self.cache_dir else { return };
        if pending.is_empty() {
            return;
        }
        let (py, source) = match self.loaded.get_or_init(|| load(cache_dir)) {
            Ok(l) => (&l.0, &l.1),
            Err(why) => {
                let mut known = self.known.lock().unwrap();
                for t in pending {
                    known.insert(t.to_string(), Err(format!("BFCL's decoder is not at hand: {}", why.0).into()));
                }
                return;
            }
        };
        for chunk in pending.chunks(BATCH) {
            let results = run_batch(py, source, chunk);
            let mut known = self.known.lock().unwrap();
            for (text, result) in chunk.iter().zip(results) {
                known.insert(text.to_string(), result);
            }
        }
    }
}

fn load(cache_dir: &Path) -> Result<(Python, String), Invalid> {
    let utils = super::data::package_dir(cache_dir)
        .map_err(|e| Invalid::from(e.to_string()))?
        .join("bfcl_eval")
        .join("model_handler")
        .join("utils.py");
    let source = std::fs::read_to_string(&utils).map_err(|e| Invalid::from(format!("{}: {e}", utils.display())))?;
    let py = crate::python::package::interpreter(cache_dir).map_err(|e| Invalid::from(e.to_string()))?;
    Ok((py, source))
}

/// One reply's record from the script.
enum Record {
    Done(Decoded),
    OwnRun,
}

/// Decode `texts` in one process (eval replaced); the ones that need eval again each alone. A
/// process that ends without a record for a reply (a crash, a limit) leaves that reply to be
/// decoded alone.
fn run_batch(py: &Python, source: &str, texts: &[&str]) -> Vec<Decoded> {
    let records = run(py, source, texts, false);
    records
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let alone = &texts[i..=i];
            let r = match r {
                None => run(py, source, alone, false).pop().flatten(),
                r => r,
            };
            let r = match r {
                Some(Record::OwnRun) => run(py, source, alone, true).pop().flatten(),
                r => r,
            };
            match r {
                Some(Record::Done(d)) => d,
                _ => Err("BFCL's decoder ran past its limits on this reply".into()),
            }
        })
        .collect()
}

/// The script over `texts`: a record per reply it finished.
fn run(py: &Python, source: &str, texts: &[&str], eval: bool) -> Vec<Option<Record>> {
    let mark = crate::python::mark(&[
        "bfcl-decode",
        &texts.len().to_string(),
        &blake3::hash(texts.concat().as_bytes()).to_hex(),
    ]);
    let request = serde_json::json!({"source": source, "texts": texts, "eval": eval, "mark": mark});
    let outcome = py.run_code(DECODE, request.to_string().as_bytes(), &LIMITS);
    let mut out: Vec<Option<Record>> = texts.iter().map(|_| None).collect();
    for line in outcome.stdout.lines() {
        let Some(json) = line.strip_prefix(mark.as_str()).and_then(|l| l.strip_prefix(' ')) else { continue };
        let Ok(v) = serde_json::from_str::<Value>(json) else { continue };
        let Some(slot) = v["i"].as_u64().and_then(|i| out.get_mut(i as usize)) else { continue };
        if slot.is_some() {
            continue; // the first record of a reply stands
        }
        *slot = Some(if v["own_run"].as_bool() == Some(true) {
            Record::OwnRun
        } else if let Some(err) = v["err"].as_str() {
            Record::Done(Err(err.to_string().into()))
        } else {
            Record::Done(calls_of(&v["ok"]))
        });
    }
    out
}

/// The decoded `[{name: {keyword: value}}]` from its tags.
fn calls_of(tagged: &Value) -> Decoded {
    match untag(tagged)? {
        Py::List(items) => Ok(items),
        _ => Err("BFCL's decoder gave something other than a list".into()),
    }
}

fn untag(v: &Value) -> Result<Py, Invalid> {
    let kind = v[0].as_str().unwrap_or("");
    let items = |v: &Value| -> Result<Vec<Py>, Invalid> { v.as_array().into_iter().flatten().map(untag).collect() };
    Ok(match kind {
        "none" => Py::None,
        "bool" => Py::Bool(v[1].as_bool().unwrap_or(false)),
        "int" => Py::Int(v[1].as_str().unwrap_or("").parse().map_err(|_| Invalid::from("an int past 128 bits"))?),
        "float" => Py::Float(parse_float(v[1].as_str().unwrap_or(""))?),
        "str" => Py::Str(v[1].as_str().unwrap_or("").to_string()),
        "list" => Py::List(items(&v[1])?),
        "tuple" => Py::Tuple(items(&v[1])?),
        "dict" => {
            let mut out = Vec::new();
            for pair in v[1].as_array().into_iter().flatten() {
                out.push((untag(&pair[0])?, untag(&pair[1])?));
            }
            Py::Dict(out)
        }
        other => return Err(format!("a value of type {other:?} lucid does not hold").into()),
    })
}

/// A float from Python's `repr` (`inf`, `-inf`, `nan` included).
fn parse_float(text: &str) -> Result<f64, Invalid> {
    text.parse().map_err(|_| format!("float {text:?}").into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_values_come_back_as_python_gave_them() {
        let v: Value = serde_json::from_str(
            r#"["list", [["dict", [[["str", "f"], ["dict", [[["str", "a"], ["tuple", [["int", "1"], ["float", "inf"], ["none"]]]]]]]]]]]"#,
        )
        .unwrap();
        let calls = calls_of(&v).unwrap();
        assert_eq!(calls::canonical(&calls), "[f(a=(1, inf, None))]");
        let big: Value =
            serde_json::from_str(r#"["list", [["int", "1000000000000000000000000000000000000000000"]]]"#).unwrap();
        assert!(calls_of(&big).is_err());
        assert!(calls_of(&serde_json::json!(["other", "bytes"])).is_err());
    }
}
