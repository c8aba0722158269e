//! The cache key of a stage instance: everything that can change its output — kind, the stage's
//! code version, the resolved config, matrix values, the content hashes of every input table and
//! the fingerprints of files it reads. Hashed with blake3 over canonical JSON; two keys can be
//! diffed to explain a cache miss in words.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::stage::AxisValue;

/// Bump when the store's layout or meaning changes.
pub const STORE_FORMAT: u32 = 1;

/// What an instance's output depends on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheKey {
    /// Store format.
    pub format: u32,
    /// Stage kind.
    pub kind: String,
    /// Stage code version.
    pub version: u32,
    /// Resolved config (defaults filled in).
    pub config: serde_json::Value,
    /// Matrix values of the instance.
    pub matrix: BTreeMap<String, AxisValue>,
    /// Input table -> content hashes of the bound producer outputs, in order.
    pub inputs: BTreeMap<String, Vec<String>>,
    /// Files the stage reads -> their fingerprints.
    pub fingerprint: BTreeMap<String, String>,
}

impl CacheKey {
    /// The key as a hex digest.
    pub fn digest(&self) -> String {
        let bytes = serde_json::to_vec(self).expect("key serializes");
        blake3::hash(&bytes).to_hex().to_string()
    }

    /// Why `self` differs from an `earlier` key of the same instance, one line per component.
    pub fn explain(&self, earlier: &CacheKey) -> Vec<String> {
        let mut why = Vec::new();
        if self.format != earlier.format {
            why.push(format!("store format {} -> {}", earlier.format, self.format));
        }
        if self.kind != earlier.kind {
            why.push(format!("kind {} -> {}", earlier.kind, self.kind));
        }
        if self.version != earlier.version {
            why.push(format!("code version of {} {} -> {}", self.kind, earlier.version, self.version));
        }
        diff_json("config", &earlier.config, &self.config, &mut why);
        if self.matrix != earlier.matrix {
            why.push(format!("matrix {:?} -> {:?}", earlier.matrix, self.matrix));
        }
        for (name, (a, b)) in pairs(&earlier.inputs, &self.inputs) {
            if a != b {
                why.push(format!("input table '{name}' changed"));
            }
        }
        for (name, (a, b)) in pairs(&earlier.fingerprint, &self.fingerprint) {
            if a != b {
                why.push(format!("file {name} changed"));
            }
        }
        why
    }
}

fn pairs<'a, V: PartialEq>(
    a: &'a BTreeMap<String, V>,
    b: &'a BTreeMap<String, V>,
) -> BTreeMap<&'a String, (Option<&'a V>, Option<&'a V>)> {
    let mut out: BTreeMap<&String, (Option<&V>, Option<&V>)> = BTreeMap::new();
    for (k, v) in a {
        out.entry(k).or_default().0 = Some(v);
    }
    for (k, v) in b {
        out.entry(k).or_default().1 = Some(v);
    }
    out
}

fn diff_json(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value::Object;
    match (a, b) {
        (Object(x), Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let null = serde_json::Value::Null;
                diff_json(&format!("{path}.{k}"), x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null), out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} -> {b}")),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explain_names_the_changed_component() {
        let k = CacheKey {
            format: STORE_FORMAT,
            kind: "some_kind".into(),
            version: 1,
            config: serde_json::json!({"chunk_size": 256, "timeout_secs": 30.0}),
            matrix: BTreeMap::new(),
            inputs: [("gold".to_string(), vec!["a".to_string()])].into(),
            fingerprint: BTreeMap::new(),
        };
        let mut k2 = k.clone();
        k2.config["chunk_size"] = 64.into();
        k2.inputs.insert("gold".into(), vec!["b".into()]);
        assert_ne!(k.digest(), k2.digest());
        assert_eq!(k2.explain(&k), vec!["config.chunk_size: 256 -> 64", "input table 'gold' changed"]);
        assert!(k.explain(&k).is_empty());
    }
}
