//! A temp project with a pipeline over the bundled benchmark and given predictions, and the
//! manifest's instance states.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{lucid, stderr, stdout};

/// A temp project with a pipeline over the bundled benchmark and the sample predictions.
pub struct Project {
    pub dir: tempfile::TempDir,
    /// lucid's cache folder (bundled databases are built there, so `tasks.db_path` points there).
    pub cache: PathBuf,
}

pub const REPORT_SQL: &str =
    "SELECT seed, arm, count(*) AS n, sum(u) AS correct FROM evaluation GROUP BY seed, arm ORDER BY seed, arm";

impl Project {
    pub fn new(name: &str, predictions: &Path, chunk: usize) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        Project::with_cache(name, predictions, chunk, dir, cache)
    }

    pub fn with_cache(name: &str, predictions: &Path, chunk: usize, dir: tempfile::TempDir, cache: PathBuf) -> Project {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mini");
        std::fs::write(dir.path().join("ex.sql"), REPORT_SQL).unwrap();
        let yaml = format!(
            "name: {name}\nseeds: [0, 1]\narms: [a]\nstages:\n  - id: benchmark\n    kind: benchmark\n    config: {{source: bundled, path: {data}}}\n  - id: order\n    kind: permutation\n    matrix: [seed]\n    inputs: [tasks]\n  - id: predictions\n    kind: predictions\n    matrix: [arm]\n    inputs: [tasks]\n    config: {{path: {pred}}}\n  - id: evaluate\n    kind: evaluate\n    matrix: [seed, arm]\n    inputs: [tasks, gold, predictions, order]\n    config: {{chunk_size: {chunk}, gold_cache: false}}\n  - id: ex\n    kind: report\n    inputs: [evaluation]\n    config: {{sql: ex.sql}}\n",
            data = data.display(),
            pred = predictions.display()
        );
        std::fs::write(dir.path().join("p.yaml"), yaml).unwrap();
        Project { dir, cache }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn cmd(&self) -> Command {
        let mut c = lucid(&self.cache);
        c.current_dir(self.path());
        c
    }

    pub fn run(&self, args: &[&str]) -> std::process::Output {
        let o = self.cmd().args(["run", "p.yaml", "--quiet"]).args(args).output().unwrap();
        assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
        o
    }

    pub fn manifest(&self, name: &str) -> serde_json::Value {
        serde_json::from_str(
            &std::fs::read_to_string(self.path().join("runs").join(name).join("manifest.json")).unwrap(),
        )
        .unwrap()
    }
}

/// (stage[label], state) of every instance in a manifest.
pub fn states(m: &serde_json::Value) -> Vec<(String, String)> {
    m["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!("{}[{}]", r["stage"].as_str().unwrap(), r["label"].as_str().unwrap()),
                r["state"].as_str().unwrap().into(),
            )
        })
        .collect()
}

pub fn computed(m: &serde_json::Value) -> Vec<String> {
    states(m).into_iter().filter(|(_, s)| s == "done").map(|(i, _)| i).collect()
}

/// SHA of every Parquet table file of a run, by relative path.
pub fn table_hashes(run: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir(run).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        for f in std::fs::read_dir(&t).unwrap().map(|e| e.unwrap().path()) {
            let rel = f.strip_prefix(run).unwrap().display().to_string();
            out.push((rel, blake3::hash(&std::fs::read(&f).unwrap()).to_hex().to_string()));
        }
    }
    out.sort();
    out
}

/// Predictions that each take tens of milliseconds (work for a resume to skip).
pub fn slow_predictions(dir: &Path) -> PathBuf {
    let map: serde_json::Map<String, serde_json::Value> = (0..62)
        .map(|i| {
            let sql = format!(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {}) SELECT count(*) % {} FROM c",
                60_000 + i,
                2 + i % 3
            );
            (i.to_string(), serde_json::Value::String(sql))
        })
        .collect();
    let p = dir.join("slow.json");
    std::fs::write(&p, serde_json::to_string(&map).unwrap()).unwrap();
    p
}
