//! The `contract` channel: a reply's calls checked against the function documents alone (no
//! possible answer read). It fires when a call names a function the task does not offer, leaves
//! out a required parameter, passes one the function does not have, gives a value of another type
//! than documented (an `int` passes for a `float`, as Python allows; a list's items checked against
//! `items`), or a value outside the documented `enum`; and when the reply tries a call it does not
//! write well (a listed function's name followed by `(`, but no decodable calls). A reply with no
//! call at all passes: declining is within the contract.

use serde_json::Value;

use super::calls;
use super::value::{Py, lookup};

/// Why `reply` breaks the contract of `functions` (BFCL's JSON documents), or None.
pub fn breach(functions: &Value, reply: &str) -> Option<String> {
    let Ok(decoded) = calls::decode(reply) else {
        let tried =
            documents(functions).into_iter().map(name_of).find(|n| !n.is_empty() && reply.contains(&format!("{n}(")));
        return tried.map(|n| format!("a call of {n} that does not decode"));
    };
    breach_calls(functions, &decoded)
}

/// The function documents: a list of them, or one.
fn documents(functions: &Value) -> Vec<&Value> {
    functions.as_array().map(|d| d.iter().collect()).unwrap_or_else(|| vec![functions])
}

/// A document's function name (empty when it has none).
fn name_of(doc: &Value) -> &str {
    doc.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// Why the decoded `calls` (`[{function: {parameter: value}}]`) break the contract of
/// `functions`, or None.
pub fn breach_calls(functions: &Value, calls: &[Py]) -> Option<String> {
    let docs = documents(functions);
    for call in calls {
        let Py::Dict(pairs) = call else { return Some("a call that is not a call".into()) };
        for (name, args) in pairs {
            let Py::Str(name) = name else { return Some("a call without a name".into()) };
            let Some(doc) = docs.iter().find(|d| name_of(d) == name) else {
                return Some(format!("{name} is not one of the functions offered"));
            };
            let Py::Dict(args) = args else { return Some(format!("{name}: arguments that are not keywords")) };
            if let Some(why) = arguments(doc, args) {
                return Some(format!("{name}: {why}"));
            }
        }
    }
    None
}

/// Why `args` break `doc`'s parameters, or None.
fn arguments(doc: &Value, args: &[(Py, Py)]) -> Option<String> {
    let params = doc.get("parameters");
    let properties = params.and_then(|p| p.get("properties")).and_then(Value::as_object);
    let required = params.and_then(|p| p.get("required")).and_then(Value::as_array);
    for r in required.into_iter().flatten().filter_map(Value::as_str) {
        if lookup(args, &Py::Str(r.into())).is_none() {
            return Some(format!("the required parameter {r} is missing"));
        }
    }
    for (key, value) in args {
        let Py::Str(key) = key else { return Some("a parameter without a name".into()) };
        let Some(spec) = properties.and_then(|p| p.get(key)) else {
            return Some(format!("{key} is not a parameter of the function"));
        };
        if let Some(why) = conforms(spec, value) {
            return Some(format!("{key}: {why}"));
        }
    }
    None
}

/// Why `value` does not conform to the parameter schema `spec`, or None.
fn conforms(spec: &Value, value: &Py) -> Option<String> {
    let kind = spec.get("type").and_then(Value::as_str).unwrap_or("any");
    let ok = match (kind, value) {
        ("string", Py::Str(_)) | ("integer", Py::Int(_)) | ("float" | "number", Py::Int(_) | Py::Float(_)) => true,
        ("boolean", Py::Bool(_)) | ("dict" | "object", Py::Dict(_)) | ("array", Py::List(_)) => true,
        ("tuple", Py::List(_) | Py::Tuple(_)) => true,
        ("any", _) => true,
        (k, _)
            if !matches!(
                k,
                "string" | "integer" | "float" | "number" | "boolean" | "dict" | "object" | "array" | "tuple"
            ) =>
        {
            true
        }
        _ => false,
    };
    if !ok {
        return Some(format!("{} where the document says {kind}", type_name(value)));
    }
    if let Some(allowed) = spec.get("enum").and_then(Value::as_array) {
        let allowed: Vec<Py> = allowed.iter().map(Py::from_json).collect();
        if !value.py_in(&allowed) {
            return Some(format!("{} is not among the documented values", value.repr()));
        }
    }
    if let (Some(items), Py::List(values) | Py::Tuple(values)) = (spec.get("items"), value) {
        return values.iter().find_map(|v| conforms(items, v));
    }
    None
}

/// Python's name of `value`'s type.
fn type_name(value: &Py) -> &'static str {
    match value {
        Py::None => "None",
        Py::Bool(_) => "a bool",
        Py::Int(_) => "an int",
        Py::Float(_) => "a float",
        Py::Str(_) => "a str",
        Py::List(_) => "a list",
        Py::Tuple(_) => "a tuple",
        Py::Dict(_) => "a dict",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_contract_is_the_documents_alone() {
        let docs = json!([{"name": "book", "parameters": {"type": "dict", "properties": {
            "city": {"type": "string", "enum": ["Paris", "Rome"]}, "nights": {"type": "integer"},
            "rate": {"type": "float"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["city"]}}]);
        assert_eq!(breach(&docs, "[book(city='Paris', nights=2, rate=3, tags=['a'])]"), None);
        assert_eq!(breach(&docs, "I cannot book that."), None);
        let fired = |reply: &str| breach(&docs, reply).unwrap_or_default();
        assert!(fired("[fly(city='Paris')]").contains("not one of the functions"));
        assert!(fired("[book(nights=2)]").contains("required parameter city"));
        assert!(fired("[book(city='Paris', pets=1)]").contains("pets is not a parameter"));
        assert!(fired("[book(city='Paris', nights='2')]").contains("a str where the document says integer"));
        assert!(fired("[book(city='Oslo')]").contains("not among the documented values"));
        assert!(fired("[book(city='Paris', tags=[1])]").contains("an int where"));
        assert!(fired("book(city='Paris'").contains("does not decode"));
    }
}
