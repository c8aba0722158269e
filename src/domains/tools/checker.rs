//! BFCL's AST checker (`bfcl_eval/eval_checker/ast_eval/ast_checker.py`, bfcl-eval 2026.3.23)
//! for Python's single-turn categories, ported rule for rule, with the same verdict and the same
//! `error_type` on every prediction a test feeds both (`tests/tools_domain.rs` runs BFCL's own
//! code beside it). A call is right when its function is the gold's, every required parameter is
//! there, no parameter is unknown to the function or the gold, each value has the documented type
//! (an `int` passes for a `float`; a value of the gold's own type passes as a "variable") and is
//! one of the gold's possible values (strings compared after dropping ` ,./-_*^` and case; a
//! dict's keys and values and a list of dicts checked entry by entry), and every gold parameter
//! the call leaves out is optional (`""` among its possible values). `parallel` categories match
//! calls to gold in any order, `multiple` ones check the first call against the gold's function.
//!
//! Where BFCL's Python would raise (a function document without `required`, a gold naming a
//! function that no document has), this answers `Err` with Python's reason: a prediction that
//! crashes BFCL's checker has no verdict to match.

use crate::error::Invalid;
use serde_json::Value;

use super::value::{Py, PyType, lookup};

/// A checker's answer: right or not, and BFCL's name for why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BfclVerdict {
    /// Whether the prediction is right.
    pub valid: bool,
    /// BFCL's `error_type` (`simple_function_checker:missing_required`, `type_error:simple`,
    /// ...); empty when right.
    pub error_type: String,
}

type Checked = Result<BfclVerdict, Invalid>;

fn valid() -> Checked {
    Ok(BfclVerdict { valid: true, error_type: String::new() })
}

fn invalid(error_type: &str) -> Checked {
    Ok(BfclVerdict { valid: false, error_type: error_type.into() })
}

/// BFCL's verdict on one reply of a single-turn task (`_evaluate_single_ast_entry` and
/// `_evaluate_single_relevance_entry` in `eval_checker/eval_runner.py`): `decoded` is the reply
/// decoded, None when it does not decode. In the irrelevance categories a reply is right when it
/// holds no call (it does not decode, or decodes to `[]` or `[{}]`); elsewhere it must decode
/// (else `decode`, BFCL's `ast_decoder:decoder_failed`), have the shape of calls, and pass
/// [`check`].
pub fn evaluate(functions: &Value, decoded: Option<&[Py]>, gold: &Value, category: &str) -> Checked {
    if category.contains("irrelevance") {
        let called = decoded.is_some_and(|d| !empty_output(d));
        return if called { invalid("irrelevance_error:decoder_success") } else { valid() };
    }
    let Some(decoded) = decoded else { return invalid("decode") };
    if !calls_shape(decoded) {
        return invalid("ast_decoder:decoder_wrong_output_format");
    }
    check(functions, decoded, gold, category)
}

/// `is_function_calling_format_output`: every item a dict of one function to a dict.
fn calls_shape(decoded: &[Py]) -> bool {
    decoded.iter().all(|item| matches!(item, Py::Dict(pairs) if pairs.len() == 1 && matches!(pairs[0].1, Py::Dict(_))))
}

/// `is_empty_output`: not the shape of calls, `[]`, or `[{}]`.
fn empty_output(decoded: &[Py]) -> bool {
    !calls_shape(decoded) || decoded.is_empty() || matches!(decoded, [Py::Dict(d)] if d.is_empty())
}

/// Check `output` (the decoded calls: a list of `{function: {parameter: value}}`) against
/// `functions` (the task's function documents) and `gold` (its `ground_truth`: possible values
/// per parameter) as BFCL does for `category`.
pub fn check(functions: &Value, output: &[Py], gold: &Value, category: &str) -> Checked {
    let gold: Vec<&Value> = gold.as_array().ok_or("the ground truth is not a list")?.iter().collect();
    if category.contains("parallel") {
        parallel_no_order(functions, output, &gold)
    } else if category.contains("multiple") {
        if output.len() != gold.len() {
            return invalid("multiple_function_checker:wrong_count");
        }
        let first = gold.first().ok_or("list index out of range")?;
        let doc = find_description(functions, first_key(first)?)?;
        simple(doc, &output[0], first)
    } else {
        if output.len() != 1 {
            return invalid("simple_function_checker:wrong_count");
        }
        let doc = functions.as_array().and_then(|f| f.first()).ok_or("list index out of range")?;
        simple(doc, &output[0], gold.first().ok_or("list index out of range")?)
    }
}

/// The one key of a gold entry `{function: {...}}`.
fn first_key(entry: &Value) -> Result<&str, Invalid> {
    let o = entry.as_object().ok_or("a gold entry is not a dict")?;
    o.keys().next().map(String::as_str).ok_or_else(|| "list index out of range".into())
}

/// The document of `name` (None in Python, which then fails as `'NoneType' object is not
/// subscriptable`).
fn find_description<'a>(functions: &'a Value, name: &str) -> Result<&'a Value, Invalid> {
    match functions {
        Value::Array(docs) => docs
            .iter()
            .find(|d| d.get("name").and_then(Value::as_str) == Some(name))
            .ok_or_else(|| "'NoneType' object is not subscriptable".into()),
        doc => Ok(doc),
    }
}

fn parallel_no_order(functions: &Value, output: &[Py], gold: &[&Value]) -> Checked {
    if output.len() != gold.len() {
        return invalid("parallel_function_checker_no_order:wrong_count");
    }
    let mut matched: Vec<usize> = Vec::new();
    for entry in gold {
        let doc = find_description(functions, first_key(entry)?)?;
        let mut last = None;
        for (index, call) in output.iter().enumerate() {
            if matched.contains(&index) {
                continue;
            }
            let result = simple(doc, call, entry)?;
            if result.valid {
                matched.push(index);
                last = Some(result);
                break;
            }
            last = Some(result);
        }
        if last.is_some_and(|r| !r.valid) {
            return invalid("parallel_function_checker_no_order:cannot_find_match");
        }
    }
    valid()
}

/// `PYTHON_TYPE_MAPPING`.
fn python_type(name: &str) -> Result<PyType, Invalid> {
    Ok(match name {
        "string" | "any" => PyType::Str,
        "integer" => PyType::Int,
        "float" => PyType::Float,
        "boolean" => PyType::Bool,
        "array" | "tuple" => PyType::List,
        "dict" => PyType::Dict,
        other => return Err(format!("KeyError: '{other}'").into()),
    })
}

/// A JSON list of possible values as Python values (`in` on the gold's list).
fn possible_values(v: &Value) -> Result<Vec<Py>, Invalid> {
    match Py::from_json(v) {
        Py::List(items) => Ok(items),
        other => Err(format!("a gold parameter's possible values are not a list: {}", other.repr()).into()),
    }
}

/// `possible_answer[i][j] for j in range(len(possible_answer[i]))`: a list's or tuple's items, a
/// string's characters, an empty dict's nothing; Python raises on the rest.
fn sequence(v: &Py) -> Result<Vec<Py>, Invalid> {
    match v {
        Py::List(items) | Py::Tuple(items) => Ok(items.clone()),
        Py::Str(s) => Ok(s.chars().map(|c| Py::Str(c.to_string())).collect()),
        Py::Dict(pairs) if pairs.is_empty() => Ok(Vec::new()),
        Py::Dict(_) => Err("KeyError: 0".into()),
        other => Err(format!("TypeError: object of type '{:?}' has no len()", other.kind()).into()),
    }
}

/// Python's `"" in v`: an item of a list or tuple, a substring of a string (always), a key of a
/// dict; Python raises on the rest.
fn holds_empty(v: &Py) -> Result<bool, Invalid> {
    let empty = Py::Str(String::new());
    match v {
        Py::List(items) | Py::Tuple(items) => Ok(empty.py_in(items)),
        Py::Str(_) => Ok(true),
        Py::Dict(pairs) => Ok(lookup(pairs, &empty).is_some()),
        other => Err(format!("TypeError: argument of type '{:?}' is not iterable", other.kind()).into()),
    }
}

fn simple(doc: &Value, call: &Py, gold_entry: &Value) -> Checked {
    let gold = gold_entry.as_object().and_then(|o| o.values().next()).ok_or("a gold entry is not a dict")?;
    let gold = gold.as_object().ok_or("a gold entry's parameters are not a dict")?;
    let name = doc.get("name").and_then(Value::as_str).ok_or("KeyError: 'name'")?;
    let parameters = doc.get("parameters").ok_or("KeyError: 'parameters'")?;
    let details = parameters.get("properties").and_then(Value::as_object).ok_or("KeyError: 'properties'")?;
    let required = parameters.get("required").and_then(Value::as_array).ok_or("KeyError: 'required'")?;
    let Py::Dict(call) = call else { return Err("a decoded call is not a dict".into()) };
    let Some(Py::Dict(params)) = lookup(call, &Py::Str(name.into())) else {
        return invalid("simple_function_checker:wrong_func_name");
    };
    for r in required {
        if lookup(params, &Py::from_json(r)).is_none() {
            return invalid("simple_function_checker:missing_required");
        }
    }
    for (param, value) in params {
        let Py::Str(p) = param else { return invalid("simple_function_checker:unexpected_param") };
        let (Some(detail), Some(possible)) = (details.get(p), gold.get(p)) else {
            return invalid("simple_function_checker:unexpected_param");
        };
        let possible = possible_values(possible)?;
        let described = detail.get("type").and_then(Value::as_str).ok_or("KeyError: 'type'")?;
        let expected = python_type(described)?;
        let nested = if described == "array" || described == "tuple" {
            let items = detail.get("items").and_then(|i| i.get("type")).and_then(Value::as_str);
            Some(python_type(items.ok_or("KeyError: 'items'")?)?)
        } else {
            None
        };
        let value = match value {
            Py::Tuple(items) if described == "tuple" => Py::List(items.clone()),
            Py::Int(i) if described == "float" => Py::Float(*i as f64),
            v => v.clone(),
        };
        let typed = type_check(&value, &possible, expected, nested);
        if !typed.valid {
            return invalid(&typed.error_type);
        }
        if !typed.variable {
            let special = match (expected, nested) {
                (PyType::Dict, _) => Some(dict_checker(&value, &possible)),
                (PyType::List, Some(PyType::Dict)) => Some(list_dict_checker(&value, &possible)),
                (PyType::Str, _) => Some(string_checker(&value, &possible)),
                (PyType::List, _) => Some(list_checker(&value, &possible)),
                _ => None,
            };
            if let Some(result) = special {
                let result = result?;
                if !result.valid {
                    return Ok(result);
                }
                continue;
            }
        }
        if !value.py_in(&possible) {
            return invalid("value_error:others");
        }
    }
    for (p, possible) in gold {
        if lookup(params, &Py::Str(p.clone())).is_none() && !holds_empty(&Py::from_json(possible))? {
            return invalid("simple_function_checker:missing_optional");
        }
    }
    valid()
}

/// What `type_checker` answers: valid or not, whether the value stands for a variable, and why not.
struct Typed {
    valid: bool,
    variable: bool,
    error_type: String,
}

/// The type of the first possible value that is not `""` (None: only optional marks).
fn possible_type(possible: &[Py]) -> Option<PyType> {
    possible.iter().find(|a| !a.is_empty_str()).map(Py::kind)
}

/// `type_checker`, nested one level as BFCL's is.
fn type_check(value: &Py, possible: &[Py], expected: PyType, nested: Option<PyType>) -> Typed {
    let answer_type = possible_type(possible);
    let variable = answer_type.is_some_and(|t| t != expected);
    let mut error = "type_error:simple";
    let mut nested_failed = false;
    if value.kind() == expected {
        let Some(inner) = nested else { return Typed { valid: true, variable, error_type: String::new() } };
        for item in possible {
            let mut flag = true;
            if let Py::List(item) = item {
                let values = match value {
                    Py::List(v) | Py::Tuple(v) => v.clone(),
                    _ => Vec::new(),
                };
                flag = values.iter().all(|v| type_check(v, item, inner, None).valid);
            }
            if flag {
                return Typed { valid: true, variable, error_type: String::new() };
            }
        }
        nested_failed = true;
        error = "type_error:nested";
    }
    if answer_type.is_some_and(|t| value.kind() == t) {
        return Typed { valid: !nested_failed, variable: true, error_type: error.into() };
    }
    Typed { valid: false, variable, error_type: "type_error:simple".into() }
}

/// `standardize_string`: without ` ,./-_*^`, lower-cased, single quotes made double.
pub fn standardize(s: &str) -> String {
    let kept: String = s.chars().filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^')).collect();
    kept.to_lowercase().replace('\'', "\"")
}

/// A string value standardized; any other value as it is.
fn standardized(v: &Py) -> Py {
    match v {
        Py::Str(s) => Py::Str(standardize(s)),
        other => other.clone(),
    }
}

fn string_checker(value: &Py, possible: &[Py]) -> Checked {
    let Py::Str(s) = value else { return Err("a string parameter's value is not a str".into()) };
    let s = standardize(s);
    let ok = possible.iter().any(|p| matches!(p, Py::Str(p) if standardize(p) == s));
    if ok { valid() } else { invalid("value_error:string") }
}

fn list_checker(value: &Py, possible: &[Py]) -> Checked {
    let mine = Py::List(sequence(value)?.iter().map(standardized).collect());
    let mut ok = false;
    for p in possible {
        ok |= Py::List(sequence(p)?.iter().map(standardized).collect()).py_eq(&mine);
    }
    if ok { valid() } else { invalid("value_error:list/tuple") }
}

fn dict_checker(value: &Py, possibles: &[Py]) -> Checked {
    let Py::Dict(given) = value else { return Err("'{}' object has no attribute 'items'".into()) };
    let mut result = invalid("dict_checker:unclear")?;
    for possible in possibles {
        if possible.is_empty_str() {
            continue;
        }
        result = invalid("dict_checker:unclear")?;
        let mut flag = true;
        let Py::Dict(want) = possible else { return Err("a possible dict is not a dict".into()) };
        for (key, v) in given {
            let Some(allowed) = lookup(want, key) else {
                result.error_type = "value_error:dict_key".into();
                flag = false;
                break;
            };
            let allowed: Vec<Py> = sequence(allowed)?.iter().map(standardized).collect();
            if !standardized(v).py_in(&allowed) {
                result.error_type = "value_error:dict_value".into();
                flag = false;
                break;
            }
        }
        for (key, allowed) in want {
            if lookup(given, key).is_none() && !holds_empty(allowed)? {
                result.error_type = "value_error:dict_key".into();
                flag = false;
                break;
            }
        }
        if flag {
            return valid();
        }
    }
    Ok(result)
}

fn list_dict_checker(value: &Py, possibles: &[Py]) -> Checked {
    let given = match value {
        Py::List(v) | Py::Tuple(v) => v.as_slice(),
        _ => &[],
    };
    let mut result = invalid("list_dict_checker:unclear")?;
    for possible in possibles {
        let want = sequence(possible)?;
        if given.len() != want.len() {
            result = invalid("value_error:list_dict_count")?;
            continue;
        }
        let mut flag = true;
        for (g, w) in given.iter().zip(&want) {
            result = dict_checker(g, std::slice::from_ref(w))?;
            if !result.valid {
                flag = false;
                break;
            }
        }
        if flag {
            return valid();
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calls(v: Value) -> Vec<Py> {
        match Py::from_json(&v) {
            Py::List(items) => items,
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_rules_of_a_simple_call() {
        let docs = json!([{"name": "area", "parameters": {"type": "dict", "properties": {
            "base": {"type": "integer"}, "unit": {"type": "string"}, "scale": {"type": "float"}},
            "required": ["base"]}}]);
        let gold = json!([{"area": {"base": [10], "unit": ["cm", ""], "scale": [2.0, ""]}}]);
        let verdict = |out: Value| check(&docs, &calls(out), &gold, "simple_python").unwrap();
        assert!(verdict(json!([{"area": {"base": 10}}])).valid);
        assert!(verdict(json!([{"area": {"base": 10, "unit": "C-M", "scale": 2}}])).valid);
        let why = |out: Value| verdict(out).error_type;
        assert_eq!(why(json!([{"perimeter": {"base": 10}}])), "simple_function_checker:wrong_func_name");
        assert_eq!(why(json!([{"area": {"unit": "cm"}}])), "simple_function_checker:missing_required");
        assert_eq!(why(json!([{"area": {"base": 10, "h": 1}}])), "simple_function_checker:unexpected_param");
        assert_eq!(why(json!([{"area": {"base": 10.0}}])), "type_error:simple");
        assert_eq!(why(json!([{"area": {"base": true}}])), "type_error:simple");
        assert_eq!(why(json!([{"area": {"base": 11}}])), "value_error:others");
        assert_eq!(why(json!([{"area": {"base": 10, "unit": "m"}}])), "value_error:string");
        assert_eq!(why(json!([])), "simple_function_checker:wrong_count");
    }

    #[test]
    fn parallel_calls_match_in_any_order() {
        let docs = json!([{"name": "f", "parameters": {"properties": {"x": {"type": "integer"}}, "required": ["x"]}}]);
        let gold = json!([{"f": {"x": [1]}}, {"f": {"x": [2]}}]);
        let verdict = |out: Value| check(&docs, &calls(out), &gold, "parallel").unwrap();
        assert!(verdict(json!([{"f": {"x": 2}}, {"f": {"x": 1}}])).valid);
        assert_eq!(
            verdict(json!([{"f": {"x": 2}}, {"f": {"x": 2}}])).error_type,
            "parallel_function_checker_no_order:cannot_find_match"
        );
    }
}
