//! A real S3-compatible server for the shared-store tests: SeaweedFS's `weed mini` on loopback,
//! started once per test process on free ports, stopped when the process ends (a watchdog shell
//! kills it when this process is gone: nothing is left running after the tests).

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A running server.
pub struct Seaweed {
    /// `http://127.0.0.1:<s3 port>`.
    pub endpoint: String,
    _dir: tempfile::TempDir,
    /// The watchdog shell (it outlives the tests by design: it stops weed when they end).
    _watchdog: std::process::Child,
}

pub const KEY_ID: &str = "lucid-test";
pub const SECRET: &str = "lucid-test-secret";
pub const BUCKET: &str = "lucid";

/// A free loopback port whose +10000 (SeaweedFS's gRPC port) is free too.
fn free_port() -> u16 {
    loop {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let p = l.local_addr().unwrap().port();
        if p < 55_000 && TcpListener::bind(("127.0.0.1", p + 10_000)).is_ok() {
            return p;
        }
    }
}

/// The server, started on first use; None (after the probe's skip line) when `weed` is absent.
pub fn server() -> Option<&'static Seaweed> {
    static S: OnceLock<Option<Seaweed>> = OnceLock::new();
    if !super::probes::require(super::probes::Probe::SeaweedFs) {
        return None;
    }
    S.get_or_init(|| Some(start())).as_ref()
}

fn start() -> Seaweed {
    let dir = tempfile::tempdir().unwrap();
    let mut ports = Vec::new();
    while ports.len() < 7 {
        let p = free_port();
        if !ports.contains(&p) {
            ports.push(p);
        }
    }
    let [s3, master, volume, filer, admin, debug, webdav] = ports[..] else { unreachable!() };
    let weed = format!(
        "weed mini -dir={d} -ip=127.0.0.1 -ip.bind=127.0.0.1 -bucket={BUCKET} -s3.port={s3} -master.port={master} \
         -volume.port={volume} -filer.port={filer} -admin.port={admin} -debug.port={debug} -webdav.port={webdav}",
        d = dir.path().display()
    );
    // The watchdog: stop weed when this test process is gone.
    let script = format!(
        "{weed} > {log} 2>&1 & W=$!; while kill -0 {me} 2>/dev/null && kill -0 $W 2>/dev/null; do sleep 1; done; kill $W 2>/dev/null; sleep 2; kill -9 $W 2>/dev/null",
        log = dir.path().join("weed.log").display(),
        me = std::process::id()
    );
    let watchdog = Command::new("sh")
        .args(["-c", &script])
        .env("AWS_ACCESS_KEY_ID", KEY_ID)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let endpoint = format!("http://127.0.0.1:{s3}");
    let server = Seaweed { endpoint, _dir: dir, _watchdog: watchdog };
    // Ready when an authenticated create-only put works.
    let start = Instant::now();
    loop {
        let ok = server
            .remote("ready")
            .and_then(|r| r.create(&format!("probe/{}", lucid::remote::unique_name()), b"ok".to_vec()))
            .is_ok();
        if ok {
            return server;
        }
        let log = std::fs::read_to_string(server._dir.path().join("weed.log")).unwrap_or_default();
        assert!(start.elapsed() < Duration::from_secs(120), "SeaweedFS did not come up in 120 s:\n{log}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

impl Seaweed {
    /// The store URL of a fresh prefix named `name` (unique per call).
    pub fn url(&self, name: &str) -> String {
        format!("s3://{BUCKET}/{name}-{}", lucid::remote::unique_name())
    }

    /// The settings a lucid process needs to reach the server (environment variables).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID", KEY_ID.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }

    /// A store client in this process for prefix `name`.
    pub fn remote(&self, name: &str) -> lucid::Result<lucid::remote::Remote> {
        self.open(&format!("s3://{BUCKET}/{name}"))
    }

    /// Open `url` on this server from this process.
    pub fn open(&self, url: &str) -> lucid::Result<lucid::remote::Remote> {
        lucid::remote::Remote::open_with(
            url,
            &[
                ("aws_endpoint", &self.endpoint),
                ("aws_access_key_id", KEY_ID),
                ("aws_secret_access_key", SECRET),
                ("aws_region", "us-east-1"),
            ],
        )
    }
}
