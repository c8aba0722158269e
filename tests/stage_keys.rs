//! Moving code must not change what is cached: the key part a stage computes from its config —
//! kind, code version and resolved config — of every stage of the shipped pipelines, compared
//! with values recorded from main before the domain registry (#34). Every cached stage and every
//! shared store entry depends on them. Record anew (`LUCID_RECORD_FIXTURES=1`) only when a key
//! is meant to change, and say which and why in the commit.

use std::collections::BTreeMap;
use std::path::Path;

use lucid::pipeline::spec::parse;
use lucid::stages::registry::Stages;

const PIPELINES: &[&str] = &[
    "demo",
    "factual",
    "factual_bank",
    "bank",
    "bird",
    "eval",
    "leniency",
    "policies",
    "spiderman",
    // Added before the benchmark's options were typed per domain (#73), recorded from main then.
    "agent",
    "agent-openai",
    "code",
    "code_bank",
    "import",
    "leniency-server",
    "math",
    "math_bank",
    "tools",
    "tools_bank",
    "tools_multiturn",
];

/// Stage id -> blake3 of (kind, version, config) for one pipeline file.
fn keys(name: &str) -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("pipelines/{name}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let spec = parse::<Stages>(&path, &text, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
    spec.stages
        .iter()
        .map(|s| {
            let key = serde_json::json!({
                "kind": s.stage.kind(),
                "version": s.stage.version(),
                "config": s.stage.config_json(),
            });
            (s.id.clone(), blake3::hash(&serde_json::to_vec(&key).unwrap()).to_hex().to_string())
        })
        .collect()
}

#[test]
fn the_shipped_pipelines_keep_their_stage_keys() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stage_keys/keys.json");
    let got: BTreeMap<String, BTreeMap<String, String>> = PIPELINES.iter().map(|p| (p.to_string(), keys(p))).collect();
    if std::env::var_os("LUCID_RECORD_FIXTURES").is_some() {
        std::fs::write(&fixture, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let want: BTreeMap<String, BTreeMap<String, String>> =
        serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let mut changed = Vec::new();
    for (p, stages) in &want {
        for (id, key) in stages {
            if got.get(p).and_then(|s| s.get(id)) != Some(key) {
                changed.push(format!("{p}.yaml: stage {id}"));
            }
        }
    }
    assert!(
        changed.is_empty(),
        "stage keys changed (every cached result of these stages reruns):\n{}",
        changed.join("\n")
    );
}
