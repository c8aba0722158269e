//! Workers that share a pipeline through a store URL, against a real S3-compatible server
//! (SeaweedFS on loopback) and a `file://` folder: one winner per claim, a killed worker's
//! instances taken over from its checkpoints with nothing lost or duplicated, a stalled worker
//! that wakes up after losing its claim publishing nothing, shards that a plain run completes
//! from the store, and queries over a run where it lies.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use lucid::remote::Remote;
use lucid::remote::claims::{ClaimAttempt, try_claim};

use crate::support::project::{Project, computed, slow_predictions, table_hashes};
use crate::support::seaweed::{self, Seaweed};
use crate::support::{run_killed, stderr, stdout};

/// 8 threads, each its own client and worker name, claim one key at once, 20 times: exactly one
/// wins each time, and the others are told who holds it.
fn eight_claimers(open: &(dyn Fn() -> Remote + Sync)) {
    for round in 0..20 {
        let key = format!("round-{round}");
        let barrier = Arc::new(Barrier::new(8));
        let won: Vec<bool> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|w| {
                    let (barrier, key) = (barrier.clone(), key.clone());
                    s.spawn(move || {
                        let remote = open();
                        barrier.wait();
                        match try_claim(&remote, &key, &format!("worker-{w}"), 60_000).unwrap() {
                            ClaimAttempt::Won(c) => {
                                assert_eq!(c.epoch, 1);
                                true
                            }
                            ClaimAttempt::Held { record, .. } => {
                                assert!(record.holder.starts_with("worker-"));
                                false
                            }
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(won.iter().filter(|w| **w).count(), 1, "round {round}: one winner, got {won:?}");
    }
}

#[test]
fn eight_claimers_one_winner_on_s3() {
    let Some(s3) = seaweed::server() else { return };
    let url = s3.url("claims");
    eight_claimers(&|| s3.open(&url).unwrap());
}

#[test]
fn eight_claimers_one_winner_on_a_file_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    eight_claimers(&|| Remote::open(&url).unwrap());
}

/// A worker, as on a cluster: the shared checkout and cache folder (one path on every machine,
/// as a shared home gives), its own runs folder and local stage store (its scratch disk), and
/// the store URL.
struct Worker<'a> {
    project: &'a Project,
    runs: String,
    env: Vec<(&'static str, String)>,
    url: String,
}

impl Worker<'_> {
    fn new<'a>(s3: &Seaweed, url: &str, project: &'a Project, name: &str) -> Worker<'a> {
        Worker::with_env(s3.env(), url, project, name)
    }

    fn with_env<'a>(env: Vec<(&'static str, String)>, url: &str, project: &'a Project, name: &str) -> Worker<'a> {
        Worker { project, runs: format!("runs-{name}"), env, url: url.into() }
    }

    fn cmd(&self, extra: &[&str]) -> Command {
        let mut c = self.project.cmd();
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c.args(["run", "p.yaml", "--store", &self.url, "--lease", "2"])
            .args(["--set", "max_parallel=2", "--set", &format!("runs_dir={}", self.runs)])
            .args(extra);
        c
    }

    fn manifest(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.project.path().join(&self.runs).join("k/manifest.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn run(&self, extra: &[&str]) -> String {
        let o = self.cmd(extra).output().unwrap();
        assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
        format!("{}{}", stdout(&o), stderr(&o))
    }

    fn spawn(&self) -> Child {
        self.cmd(&[]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    }

    fn tables(&self) -> Vec<(String, String)> {
        table_hashes(&self.project.path().join(&self.runs).join("k"))
    }
}

/// Parts per epoch folder in the store's `work/`: (epoch folder, parts).
fn parts_by_epoch(remote: &Remote) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for l in remote.list("work").unwrap() {
        let epoch = l.name.split('/').nth(1).unwrap_or_default().to_string();
        *out.entry(epoch).or_default() += 1;
    }
    out
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < Duration::from_secs(300), "waited 300 s for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The shared checkout, and the tables of a reference run in it on one machine, with no store.
fn checkout(preds: &Path) -> (Project, Vec<(String, String)>) {
    let p = Project::new("k", preds, 2);
    p.run(&["--set", "runs_dir=runs-reference"]);
    let want = table_hashes(&p.path().join("runs-reference/k"));
    (p, want)
}

/// Worker A is killed (as by kill -9) after 7 checkpoint parts while worker B runs beside it:
/// B takes A's instances over when A's lease lapses, resumes from the parts A uploaded, and
/// both end with tables identical to a run on one machine; A, run again, computes nothing.
#[test]
fn two_workers_share_a_pipeline_and_take_over_a_killed_one() {
    let Some(s3) = seaweed::server() else { return };
    let url = s3.url("takeover");
    takeover(&url, &s3.open(&url).unwrap(), s3.env());
}

/// The same on a `file://` store (a folder on NFS or Lustre): the same create-only protocol.
#[test]
fn a_killed_worker_is_taken_over_on_a_file_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().join("store").display());
    takeover(&url, &Remote::open(&url).unwrap(), Vec::new());
}

fn takeover(url: &str, remote: &Remote, env: Vec<(&'static str, String)>) {
    let work = tempfile::tempdir().unwrap();
    let preds = slow_predictions(work.path());
    let (project, want) = checkout(&preds);
    let a = Worker::with_env(env.clone(), url, &project, "a");
    let b = Worker::with_env(env, url, &project, "b");

    let killed = std::thread::scope(|s| {
        let a_run = s.spawn(|| run_killed(&mut a.cmd(&["--quiet"]), 7));
        // B starts once A is inside the evaluation (its first part is in the store).
        wait_for("A's first checkpoint part", || !parts_by_epoch(remote).is_empty());
        let b_out = b.run(&[]);
        (a_run.join().unwrap(), b_out)
    });
    let (landed, b_out) = killed;
    assert!(landed, "A was killed after 7 parts");
    assert!(b_out.contains("took over from"), "B took over A's instances:\n{b_out}");
    assert_eq!(b.tables(), want, "B's tables equal a run on one machine");
    let parts = parts_by_epoch(remote);
    let (first, second) = (parts.get("e000001").copied().unwrap_or(0), parts.get("e000002").copied().unwrap_or(0));
    assert!(first >= 7, "A's parts are in the store: {parts:?}");
    assert!(second < 62, "B resumed from A's parts instead of redoing all 62: {parts:?}");

    a.run(&["--quiet"]);
    assert!(computed(&a.manifest()).is_empty(), "A, run again, takes everything from the store");
    assert_eq!(a.tables(), want);
}

/// Worker A stops (SIGSTOP) inside the evaluation; B takes over and finishes; A, continued
/// (SIGCONT), finds it lost its claim, publishes nothing and ends with B's result.
#[test]
fn a_stalled_worker_loses_its_claim_and_publishes_nothing() {
    let Some(s3) = seaweed::server() else { return };
    let work = tempfile::tempdir().unwrap();
    let preds = slow_predictions(work.path());
    let (project, want) = checkout(&preds);
    let url = s3.url("stall");
    let remote = s3.open(&url).unwrap();
    let (a, b) = (Worker::new(s3, &url, &project, "a"), Worker::new(s3, &url, &project, "b"));

    let child = a.spawn();
    wait_for("A's first checkpoint part", || !parts_by_epoch(&remote).is_empty());
    let signal =
        |sig: &str| assert!(Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap().success());
    signal("-STOP");
    let b_out = b.run(&[]);
    assert!(b_out.contains("took over from"), "B took over the stalled worker's instances:\n{b_out}");
    let stages_before = remote.list("stages").unwrap();
    signal("-CONT");
    let o = child.wait_with_output().unwrap();
    let a_out = format!("{}{}", stdout(&o), stderr(&o));
    assert!(o.status.success(), "A ends well:\n{a_out}");
    assert!(a_out.contains("lost"), "A says it lost its claim:\n{a_out}");
    assert_eq!(remote.list("stages").unwrap(), stages_before, "A published no stage result");
    assert_eq!(b.tables(), want);
    assert_eq!(a.tables(), want, "A ends with B's result");
}

/// Two shards (array jobs, no coordination between them), then a plain run through the store
/// computes nothing; the run's tables read from the store equal the local ones.
#[test]
fn shards_then_a_plain_run_and_remote_queries() {
    let Some(s3) = seaweed::server() else { return };
    let work = tempfile::tempdir().unwrap();
    let preds = slow_predictions(work.path());
    let url = s3.url("shards");
    let (project, want) = checkout(&preds);
    let workers: Vec<Worker> = (0..3).map(|w| Worker::new(s3, &url, &project, &w.to_string())).collect();
    let out0 = workers[0].run(&["--shard", "0/2"]);
    let out1 = workers[1].run(&["--shard", "1/2"]);
    assert!(out0.contains("partial") && out1.contains("partial"), "a shard publishes no listing:\n{out0}\n{out1}");
    workers[2].run(&["--quiet"]);
    assert_eq!(computed(&workers[2].manifest()), ["ex[all]"], "the shards computed all but the report over both");
    assert_eq!(workers[2].tables(), want);

    let sql =
        "SELECT seed, arm, count(*) AS n, sum(u) AS correct FROM evaluation GROUP BY seed, arm ORDER BY seed, arm";
    let query = |run: &str| {
        let mut c = workers[2].project.cmd();
        c.envs(workers[2].env.iter().map(|(k, v)| (k, v)));
        let o = c.args(["query", run, sql, "--format", "csv"]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let local = query("runs-2/k");
    assert!(local.lines().count() == 3, "{local}");
    assert_eq!(query(&format!("{url}/runs/k")), local, "the run read where it lies equals the local run");

    let report = |run: &str, out: &str| {
        let mut c = workers[2].project.cmd();
        c.envs(workers[2].env.iter().map(|(k, v)| (k, v)));
        let o = c.args(["report", run, "--out", out]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = std::fs::read_to_string(workers[2].project.path().join(out).join("report.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    assert_eq!(report(&format!("{url}/runs/k"), "remote-report"), report("runs-2/k", "local-report"), "report.json");
}

/// `lucid status --store` shows every worker's claims; `lucid cache gc --store` refuses while a
/// live claim may still read what it would delete, and goes ahead once the instance is done.
#[test]
fn status_shows_claims_and_gc_waits_for_live_ones() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().join("store").display());
    let remote = Remote::open(&url).unwrap();
    assert!(matches!(try_claim(&remote, "k0000000000001", "worker-elsewhere", 600_000).unwrap(), ClaimAttempt::Won(_)));
    let p = Project::new(
        "k",
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mini/sample_predictions.json"),
        16,
    );
    p.run(&[]);
    let o = p.cmd().args(["status", "runs/k", "--store", &url]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("held") && stdout(&o).contains("worker-elsewhere"), "{}", stdout(&o));
    let gc = p.cmd().args(["cache", "gc", "--store", &url]).output().unwrap();
    assert!(!gc.status.success() && stderr(&gc).contains("gc refused"), "{}", stderr(&gc));
    assert!(remote.create("stages/k0000000000001.json", b"{}".to_vec()).unwrap());
    let o = p.cmd().args(["status", "runs/k", "--store", &url]).output().unwrap();
    assert!(stdout(&o).contains("done"), "{}", stdout(&o));
    let gc = p.cmd().args(["cache", "gc", "--store", &url]).output().unwrap();
    assert!(gc.status.success(), "{}", stderr(&gc));
}

/// A model that counts its calls.
#[derive(Default)]
struct Counting {
    calls: std::sync::atomic::AtomicUsize,
}

impl lucid::llm::ChatModel for Counting {
    fn identity(&self) -> lucid::llm::ModelIdentity {
        lucid::llm::ModelIdentity::new("openai", "counting")
    }

    fn chat(&self, req: &lucid::llm::ChatRequest) -> Result<lucid::llm::Completion, lucid::llm::CallFailure> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let text = format!("answer to {}", req.messages.last().map(|m| m.content.as_str()).unwrap_or_default());
        Ok(lucid::llm::Completion {
            text,
            tokens_in: 3,
            tokens_out: 4,
            latency: Duration::ZERO,
            attempts: 1,
            cache_hit: false,
        })
    }
}

/// Two machines (two local caches) behind one store: an answer paid for on one is not paid for
/// on the other. Two workers that paid for the same answer at the same moment: the second write
/// finds it there and is counted as a duplicate.
#[test]
fn the_shared_response_tier_pays_once_across_machines_and_counts_races() {
    use lucid::llm::{ChatModel, ChatRequest, Message};
    let dir = tempfile::tempdir().unwrap();
    let tier = Arc::new(Remote::open(&format!("file://{}", dir.path().join("store").display())).unwrap());
    let machine = |name: &str| {
        let inner = Arc::new(Counting::default());
        let cached = lucid::llm::cache::CachedModel::new(inner.clone(), &dir.path().join(format!("{name}.sqlite")))
            .unwrap()
            .with_shared_tier(Some(tier.clone()));
        (inner, cached)
    };
    let ask = |q: &str| ChatRequest {
        messages: vec![Message::user(q)],
        decoding: Default::default(),
        sample_index: 0,
        scope: None,
    };
    let load = std::sync::atomic::Ordering::SeqCst;

    let (a_model, a) = machine("a");
    let (b_model, b) = machine("b");
    let first = a.chat(&ask("q1")).unwrap();
    let second = b.chat(&ask("q1")).unwrap();
    assert_eq!((second.text, second.tokens_out), (first.text, first.tokens_out));
    assert_eq!((a_model.calls.load(load), b_model.calls.load(load)), (1, 0), "b took a's answer from the store");
    assert_eq!((b.shared_hits.load(load), b.duplicates.load(load)), (1, 0));
    // b asks again: its own SQLite answers now.
    b.chat(&ask("q1")).unwrap();
    assert_eq!(b.shared_hits.load(load), 1);

    let answer = lucid::remote::responses::SharedAnswer { text: "x".into(), tokens_in: 1, tokens_out: 1 };
    assert!(lucid::remote::responses::offer(&tier, "race-key", &answer).unwrap(), "the first payer stores it");
    assert!(!lucid::remote::responses::offer(&tier, "race-key", &answer).unwrap(), "the second is a duplicate");
}

/// How the first study worker is disturbed.
#[derive(Clone, Copy, PartialEq)]
enum Disturb {
    /// Killed (as by kill -9) after 2 checkpoint parts.
    Kill,
    /// Stopped (SIGSTOP) once it saved a part, continued after the other finished.
    Stop,
}

/// The scripted study (4 arms x 2 seeds over the loopback model server) run by two workers
/// through the store, the first disturbed: the second finishes with every deterministic column of
/// episodes, calls and evaluation equal to a one-process run's, and the two together paid for
/// at most the requests of that one process plus the duplicates the store counted.
fn study_workers(disturb: Disturb) {
    use crate::support::fake_server::{FakeServer, Reply};
    use crate::support::study::{project, scripted, stable_tables_of};
    let Some(s3) = seaweed::server() else { return };
    let server = FakeServer::start(vec![], Reply::Scripted(scripted));
    let reference = {
        let dir = project(&server.url);
        let cache = dir.path().join("cache");
        let o = crate::support::lucid(&cache)
            .current_dir(dir.path())
            .args(["run", "study.yaml", "--quiet"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stable_tables_of(&cache, dir.path(), "runs/study")
    };
    let one_process = server.requests().len();

    // The workers: one checkout, each its own runs folder and cache (another machine's disk).
    let dir = project(&server.url);
    let url = s3.url("study");
    let remote = s3.open(&url).unwrap();
    let worker = |name: &str| {
        let mut c = crate::support::lucid(&dir.path().join(format!("cache-{name}")));
        c.current_dir(dir.path()).envs(s3.env());
        c.args(["run", "study.yaml", "--store", &url, "--lease", "2", "--set", &format!("runs_dir=runs-{name}")]);
        c
    };
    let b_out = match disturb {
        Disturb::Kill => std::thread::scope(|s| {
            let a = s.spawn(|| run_killed(worker("a").arg("--quiet"), 2));
            wait_for("A's first checkpoint part", || !parts_by_epoch(&remote).is_empty());
            let o = worker("b").output().unwrap();
            assert!(a.join().unwrap(), "A was killed after 2 parts");
            o
        }),
        Disturb::Stop => {
            let a = worker("a").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            wait_for("A's first checkpoint part", || !parts_by_epoch(&remote).is_empty());
            let signal =
                |sig: &str| assert!(Command::new("kill").args([sig, &a.id().to_string()]).status().unwrap().success());
            signal("-STOP");
            let o = worker("b").output().unwrap();
            let published = remote.list("stages").unwrap();
            signal("-CONT");
            let a_out = a.wait_with_output().unwrap();
            assert!(a_out.status.success(), "{}", stderr(&a_out));
            assert!(format!("{}{}", stdout(&a_out), stderr(&a_out)).contains("lost"), "A says it lost its claim");
            assert_eq!(remote.list("stages").unwrap(), published, "the stalled worker published nothing");
            let a_tables = stable_tables_of(&dir.path().join("cache-a"), dir.path(), "runs-a/study");
            assert!(a_tables == reference, "the stalled worker ends with the same tables");
            o
        }
    };
    assert!(b_out.status.success(), "{}", stderr(&b_out));
    let b_tables = stable_tables_of(&dir.path().join("cache-b"), dir.path(), "runs-b/study");
    for (table, rows) in &reference {
        assert_eq!(b_tables[table].len(), rows.len(), "{table}: rows lost or duplicated");
        assert!(b_tables[table] == *rows, "{table}: the same deterministic columns as one process");
    }
    let paid = server.requests().len() - one_process;
    let duplicates = lucid::remote::responses::duplicates_in(&remote).unwrap();
    assert!(paid <= one_process + duplicates, "paid {paid}: one process pays {one_process}, {duplicates} duplicates");
}

#[test]
fn study_workers_survive_a_killed_one_and_pay_once() {
    study_workers(Disturb::Kill);
}

#[test]
fn study_workers_fence_a_stalled_one() {
    study_workers(Disturb::Stop);
}
