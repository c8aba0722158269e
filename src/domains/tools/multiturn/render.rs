//! A prompting model's reply as BFCL executes it (`default_decode_execute_prompting` in
//! `bfcl_eval/model_handler/utils.py`): the reply decoded as the single-turn categories decode it
//! ([`crate::domains::tools::calls::decode`]), then each call written back as an execution string
//! by BFCL's `decoded_output_to_execution_list` and `parse_nested_value`: `name(k=repr(v), ...)`, a
//! dict whose values are all dicts written as a nested call, any other dict as `{'k': v}`. A dict
//! with no entries makes BFCL's writer raise (`list(value.keys())[0]`), so the reply does not decode.

use crate::domains::tools::calls::decode;
use crate::domains::tools::value::{Py, key_text};
use crate::error::Invalid;

/// The execution strings of `reply`'s calls, or why BFCL's decoder fails on it.
pub fn execution_list(reply: &str) -> Result<Vec<String>, Invalid> {
    let mut out = Vec::new();
    for call in decode(reply)? {
        let Py::Dict(pairs) = call else { return Err("a call that is not a dict".into()) };
        for (name, args) in &pairs {
            out.push(format!("{}({})", key_text(name), keywords(args)?));
        }
    }
    Ok(out)
}

/// `k=v, ...` of a call's keyword dict.
fn keywords(args: &Py) -> Result<String, Invalid> {
    let Py::Dict(pairs) = args else { return Err("'...' object has no attribute 'items'".into()) };
    let parts: Result<Vec<String>, Invalid> =
        pairs.iter().map(|(k, v)| Ok(format!("{}={}", key_text(k), nested(v)?))).collect();
    Ok(parts?.join(", "))
}

/// BFCL's `parse_nested_value`.
fn nested(value: &Py) -> Result<String, Invalid> {
    match value {
        Py::Dict(pairs) if pairs.iter().all(|(_, v)| matches!(v, Py::Dict(_))) => {
            let (name, args) = pairs.first().ok_or("list index out of range")?;
            Ok(format!("{}({})", key_text(name), keywords(args)?))
        }
        Py::Dict(pairs) => {
            let parts: Result<Vec<String>, Invalid> =
                pairs.iter().map(|(k, v)| Ok(format!("'{}': {}", key_text(k), nested(v)?))).collect();
            Ok(format!("{{{}}}", parts?.join(", ")))
        }
        other => Ok(other.repr()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_become_bfcls_execution_strings() {
        assert_eq!(
            execution_list("[cd(folder='document'), mkdir(dir_name=\"temp\")]").unwrap(),
            vec!["cd(folder='document')", "mkdir(dir_name='temp')"]
        );
        assert_eq!(execution_list("mean(numbers=[1, 2.5, -3])").unwrap(), vec!["mean(numbers=[1, 2.5, -3])"]);
        assert_eq!(
            execution_list("post(tags={'a': 1, 'b': 'x'}, ok=True, none=None)").unwrap(),
            vec!["post(tags={'a': 1, 'b': 'x'}, ok=True, none=None)"]
        );
        // A dict of dicts is a nested call; an empty dict makes BFCL's writer raise.
        assert_eq!(execution_list("f(x={'g': {'y': 1}})").unwrap(), vec!["f(x=g(y=1))"]);
        assert!(execution_list("f(x={})").is_err());
        // Positional arguments are dropped, as BFCL's decoder drops them; prose does not decode.
        assert_eq!(execution_list("sort('a.txt')").unwrap(), vec!["sort()"]);
        assert!(execution_list("I cannot do that.").is_err());
    }
}
