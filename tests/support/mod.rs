//! Shared test fixtures, imported by the feature test modules (which never import each other):
//! databases built from SQL text in temp folders, the `lucid` binary and its kill hook, the
//! loopback model server, tiny models, the scripted study, a predictions project, the documented
//! schemas and what the tests need from outside the repository (probes).

pub mod agent;
pub mod docs;
pub mod eval_logs;
pub mod fake_server;
pub mod probes;
pub mod project;
pub mod python;
pub mod schemas;
pub mod seaweed;
pub mod study;
pub mod tiny_models;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A BIRD-style database root in a temp folder.
pub struct DbRoot {
    pub dir: tempfile::TempDir,
}

impl DbRoot {
    pub fn new() -> DbRoot {
        DbRoot { dir: tempfile::tempdir().unwrap() }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Create `<root>/<db>/<db>.sqlite` from `script`.
    pub fn add(&self, db: &str, script: &str) -> PathBuf {
        let dir = self.dir.path().join(db);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{db}.sqlite"));
        rusqlite::Connection::open(&path).unwrap().execute_batch(script).unwrap();
        path
    }
}

/// A small table with ints, floats with ties, text and a NULL.
pub const PEOPLE: &str = "
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL, grp TEXT);
INSERT INTO t VALUES (1,'ann',1.0,'a'),(2,'bob',2.5,'a'),(3,'cid',2.5,'b'),(4,'dan',NULL,'b');
";

/// The `lucid` binary with its cache in `cache`: this build's, or `$LUCID_TEST_BIN` (to record
/// the `unchanged` fixtures with another build, e.g. main's before a refactoring).
pub fn lucid(cache: &Path) -> Command {
    let bin = std::env::var_os("LUCID_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_lucid").into());
    let mut c = Command::new(bin);
    c.env("LUCID_CACHE_DIR", cache);
    c
}

/// Run `cmd` (a `lucid` command) with the kill hook set to stop it right after it saves its
/// `parts`-th checkpoint part (`LUCID_TEST_KILL_AFTER_PARTS`, see `lucid::pipeline::checkpoint`):
/// a kill at a deterministic point of its work, whatever the machine's load. True when the kill
/// landed (exit status 137), false when the command finished first (fewer parts left to write).
pub fn run_killed(cmd: &mut Command, parts: usize) -> bool {
    let o = cmd
        .env(lucid::pipeline::checkpoint::KILL_AFTER_PARTS, parts.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    match o.status.code() {
        Some(137) => true,
        _ => {
            assert!(o.status.success(), "the run failed before its kill point: {}", stderr(&o));
            false
        }
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `../shared/data/spiderman-train`, when present (see [`probes::require`]).
pub fn spiderman() -> Option<PathBuf> {
    probes::require(probes::Probe::SpiderMan)
        .then(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/spiderman-train"))
}

/// The YAML stages every memory study shares after its benchmark: the seed's order, embeddings
/// with the BERT folder `bert`, and retrieval.
pub fn order_embed_retrieve(bert: &Path) -> String {
    order_embed_retrieve_k(bert, None)
}

/// Run the pipeline `dir/file` in this process (so domains registered by the test run), with
/// `dir` as the base folder and `dir/cache` as the cache; fails the test on any failed instance.
pub fn run_in_process(dir: &Path, file: &str) {
    let opts = lucid::pipeline::RunOptions {
        overrides: vec![],
        only: vec![],
        dry_run: false,
        explain: false,
        quiet: true,
        cache_dir: dir.join("cache"),
        base_dir: dir.to_path_buf(),
        limit: None,
        sharing: Default::default(),
    };
    let summary = lucid::pipeline::run::<lucid::stages::registry::Stages>(&dir.join(file), &opts).unwrap();
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
}

/// [`order_embed_retrieve`] with the retrieve stage's `k` (its default when None).
pub fn order_embed_retrieve_k(bert: &Path, k: Option<usize>) -> String {
    let stages = "  - id: order
    kind: permutation
    matrix: [seed]
    inputs: [tasks]
  - id: embed
    kind: embed
    inputs: [tasks]
    config: {model: 'BERT'}
  - id: retrieve
    kind: retrieve
    matrix: [seed]
    inputs: [order, embeddings]
";
    let k = k.map(|k| format!("    config: {{k: {k}}}\n")).unwrap_or_default();
    stages.replace("BERT", &bert.display().to_string()) + &k
}

/// blake3 of every file under `dir`, by path.
pub fn hash_tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), blake3::hash(&std::fs::read(&p).unwrap()).to_hex().to_string()));
            }
        }
    }
    out.sort();
    out
}
