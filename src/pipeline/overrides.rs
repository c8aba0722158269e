//! `--set key.path=value` on the YAML tree. Path segments address mapping keys; inside `stages`
//! a segment addresses the stage with that `id` (or a list index). The value is parsed as YAML,
//! so `--set seeds=[0,1,2]` gives a list and `--set stages.evaluate.config.chunk_size=64` a number.

use crate::error::Invalid;
use serde_norway::Value;

/// Apply one override.
pub fn apply(tree: &mut Value, assignment: &str) -> std::result::Result<(), Invalid> {
    let (path, raw) = assignment.split_once('=').ok_or("expected key.path=value")?;
    let value: Value = serde_norway::from_str(raw).map_err(|e| format!("value is not YAML: {e}"))?;
    let segments: Vec<&str> = path.split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(Invalid(format!("bad key path '{path}'")));
    }
    let mut node = tree;
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        node = match node {
            Value::Mapping(m) => {
                let key = Value::String(seg.to_string());
                if last {
                    m.insert(key, value);
                    return Ok(());
                }
                m.entry(key).or_insert_with(|| Value::Mapping(Default::default()))
            }
            Value::Sequence(items) => {
                let idx = match seg.parse::<usize>() {
                    Ok(n) => Some(n),
                    Err(_) => items.iter().position(|it| it.get("id").and_then(Value::as_str) == Some(seg)),
                };
                let idx = idx.filter(|&n| n < items.len()).ok_or_else(|| format!("no item '{seg}' in '{path}'"))?;
                if last {
                    items[idx] = value;
                    return Ok(());
                }
                &mut items[idx]
            }
            _ => return Err(Invalid(format!("'{}' is not a mapping", segments[..i].join(".")))),
        };
    }
    Err(Invalid(format!("bad key path '{path}'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_reach_top_level_and_stage_configs() {
        let mut v: Value = serde_norway::from_str("seeds: [0]\nstages:\n  - id: ev\n    config: {k: 1}\n").unwrap();
        apply(&mut v, "seeds=[0,1,2]").unwrap();
        apply(&mut v, "stages.ev.config.k=4").unwrap();
        assert_eq!(v["seeds"].as_sequence().unwrap().len(), 3);
        assert_eq!(v["stages"][0]["config"]["k"].as_u64(), Some(4));
        assert!(apply(&mut v, "stages.nope.config.k=4").is_err());
        assert!(apply(&mut v, "seeds").is_err());
    }
}
