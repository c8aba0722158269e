//! `lucid query --engine ballista` (cargo feature `ballista`; `just test-ballista`): lucid's SQL
//! functions (scalar and aggregate) planned and run by Ballista, in-process standalone and on a
//! scheduler and an executor started as `lucid ballista scheduler|executor`, give the same answer
//! as DataFusion in-process.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::project::Project;
use crate::support::{stderr, stdout};

const SQL: &str = "SELECT seed, count(*) AS n, sum(u) AS correct, \
    round(wilson_lo(sum(u), count(*)), 6) AS lo, round(wilson_hi(sum(u), count(*)), 6) AS hi, \
    round(boot_lo(CAST(u AS DOUBLE)), 6) AS boot, round(ols2_b1(CAST(u AS DOUBLE), CAST(step AS DOUBLE), CAST(step % 7 AS DOUBLE)), 6) AS b1 \
    FROM evaluation GROUP BY seed ORDER BY seed";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn ballista_answers_as_datafusion_does_with_lucids_functions() {
    let p = Project::new(
        "k",
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mini/sample_predictions.json"),
        16,
    );
    p.run(&[]);
    let run = p.path().join("runs/k").display().to_string();
    let query = |extra: &[&str]| p.cmd().args(["query", &run, SQL, "--format", "csv"]).args(extra).output().unwrap();
    let local = query(&[]);
    assert!(local.status.success(), "{}", stderr(&local));
    let want = stdout(&local);
    assert_eq!(want.lines().count(), 3, "{want}");

    let standalone = query(&["--engine", "ballista"]);
    assert!(standalone.status.success(), "{}", stderr(&standalone));
    assert_eq!(stdout(&standalone), want, "standalone Ballista");

    // A report file as shipped, through standalone Ballista.
    let report =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/reports/ex.sql").display().to_string();
    let file_query =
        |extra: &[&str]| p.cmd().args(["query", &run, &report, "--format", "csv"]).args(extra).output().unwrap();
    let (df, ba) = (file_query(&[]), file_query(&["--engine", "ballista"]));
    assert!(df.status.success() && ba.status.success(), "{}{}", stderr(&df), stderr(&ba));
    assert!(stdout(&df).lines().count() > 2);
    assert_eq!(stdout(&ba), stdout(&df), "pipelines/reports/ex.sql through standalone Ballista");

    let (sched, flight, grpc) = (free_port(), free_port(), free_port());
    let spawn = |args: &[String]| {
        Killed(p.cmd().arg("ballista").args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap())
    };
    let _scheduler = spawn(&["scheduler".into(), "--bind".into(), format!("127.0.0.1:{sched}")]);
    let work = p.path().join("executor");
    std::fs::create_dir_all(&work).unwrap();
    let _executor = spawn(&[
        "executor".into(),
        "--scheduler".into(),
        format!("127.0.0.1:{sched}"),
        "--port".into(),
        flight.to_string(),
        "--grpc-port".into(),
        grpc.to_string(),
        "--work-dir".into(),
        work.display().to_string(),
    ]);
    let url = format!("df://127.0.0.1:{sched}");
    let start = Instant::now();
    let remote = loop {
        let o = query(&["--engine", "ballista", "--ballista", &url]);
        if o.status.success() || start.elapsed() > Duration::from_secs(90) {
            break o;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(remote.status.success(), "{}", stderr(&remote));
    assert_eq!(stdout(&remote), want, "scheduler + executor processes");
}
