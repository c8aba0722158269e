//! `lucid view` in a real browser (headless Chromium, the Debian package the report test uses):
//! over two runs of the scripted study it filters the table, opens an episode, follows a memory,
//! compares the runs and runs a query, each checked against SQL over the same tables; the server
//! refuses another site's Host and Origin and any SQL that is not a read; the export opens from
//! disk with no server and shows the same episode.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::probes::{Probe, require};
use crate::support::study::{project, query_run, scripted};
use crate::support::{lucid, stderr};

/// A `lucid view` server, killed when dropped.
struct Viewer {
    child: Child,
    url: String,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(d: &Path, runs: &[&str]) -> Viewer {
    let mut child = lucid(&d.join("cache"))
        .current_dir(d)
        .arg("view")
        .args(runs)
        .args(["--address", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split(" at ").nth(1).expect("lucid view prints its URL").trim().to_string();
    Viewer { child, url }
}

/// One raw HTTP request to the viewer: status and body.
fn http(url: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(addr).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| *k == "Host") {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, out.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default())
}

fn chromium(profile: &Path) -> Command {
    let mut c = Command::new("chromium");
    c.args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--window-size=1280,900", "--virtual-time-budget=15000"]);
    c
}

/// The page at `url` after its scripts ran, as HTML.
fn dom(profile: &Path, url: &str) -> String {
    let o = chromium(profile).arg("--dump-dom").arg(url).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `s` as the page's text shows it (the DOM escapes &, <, >).
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn hash(pairs: &[(&str, &str)]) -> String {
    let mut h = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        h.append_pair(k, v);
    }
    format!("#{}", h.finish())
}

/// A second model: "How many" questions answered by a count of nothing, the rest as `scripted`.
fn other_model(prompt: &str) -> String {
    if prompt.contains("Write one SQLite") && prompt.contains("How many") {
        return "```sql\nSELECT 0\n```".into();
    }
    scripted(prompt)
}

#[test]
fn the_viewer_in_chromium_filters_opens_follows_compares_and_queries() {
    if !require(Probe::Chromium) {
        return;
    }
    // Two runs of the study: the scripted model, and one that answers counts wrong.
    let server = FakeServer::start(vec![], Reply::func(scripted));
    let other = FakeServer::start(vec![], Reply::func(other_model));
    let dir = project(&server.url);
    let d = dir.path();
    let yaml = std::fs::read_to_string(d.join("study.yaml")).unwrap();
    std::fs::write(
        d.join("other.yaml"),
        yaml.replace("name: study", "name: other")
            .replace(&server.url, &other.url)
            .replace("model: scripted", "model: other"),
    )
    .unwrap();
    for file in ["study.yaml", "other.yaml"] {
        let o = lucid(&d.join("cache")).current_dir(d).args(["run", file, "--quiet"]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let q = |run: &str, sql: &str| query_run(&d.join("cache"), d, run, sql);
    let viewer = serve(d, &["runs/study", "runs/other"]);
    let profile = d.join("chromium");

    // The table, filtered in the address: memento's wrong answers.
    let want = q("runs/study", "SELECT count(*) AS n FROM evaluation WHERE arm = 'memento' AND u = 0")[0]["n"]
        .as_u64()
        .unwrap();
    let total = 2 * q("runs/study", "SELECT count(*) AS n FROM episodes")[0]["n"].as_u64().unwrap();
    let page = dom(&profile, &format!("{}{}", viewer.url, hash(&[("run", "study"), ("arm", "memento"), ("u", "0")])));
    assert!(page.contains(&format!("{want} of {total} episodes")), "{page}");
    assert_eq!(page.matches("<tr class=\"row").count() as u64, want.min(200));

    // One episode: its question, its memories, its calls; next stays within the filter.
    let ep = &q(
        "runs/study",
        "SELECT e.seed, e.step, t.question, e.sql FROM episodes e JOIN tasks t USING (question_id) \
         WHERE e.arm = 'memento' AND cardinality(e.retrieved) > 0 ORDER BY e.seed, e.step LIMIT 1",
    )[0];
    let key = format!("study|{}|memento|{}", ep["seed"], ep["step"]);
    let page = dom(&profile, &format!("{}{}", viewer.url, hash(&[("arm", "memento"), ("run", "study"), ("ep", &key)])));
    assert!(page.contains(&html_text(ep["question"].as_str().unwrap())), "{page}");
    assert!(page.contains(&html_text(ep["sql"].as_str().unwrap())), "the artifact is shown");
    assert!(page.contains("id=\"memories\"") && page.contains("Model calls (3)"), "{page}");
    let next = page.split("id=\"next\"").next().unwrap().rsplit("href=\"").next().unwrap().to_string();
    assert!(next.contains("arm=memento") && next.contains("ep=study%7C"), "{next}");

    // A memory's life: the later episodes it was shown to, counted as SQL counts them.
    let mem = &q(
        "runs/study",
        "SELECT seed, m.step AS step, count(*) AS n FROM (SELECT seed, unnest(retrieved) AS m FROM episodes \
         WHERE arm = 'memento') GROUP BY seed, m.step ORDER BY n DESC, seed, step LIMIT 1",
    )[0];
    let mem_key = format!("study|{}|memento|{}", mem["seed"], mem["step"]);
    let page = dom(&profile, &format!("{}{}", viewer.url, hash(&[("mem", &mem_key)])));
    assert!(page.contains(&format!("Shown to {} later episodes", mem["n"])), "{page}");

    // Two runs side by side: the questions whose U or answer changed, and the paired difference
    // of the report SQL.
    let page = dom(
        &profile,
        &format!("{}{}", viewer.url, hash(&[("view", "compare"), ("a", "other|lucid"), ("b", "study|lucid")])),
    );
    let both = |sql: &str| -> Vec<Value> {
        let o = lucid(&d.join("cache"))
            .current_dir(d)
            .args(["query", "runs/other", "runs/study", "--format", "json"])
            .arg(sql)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let side = |run: &str| {
        format!(
            "SELECT e.seed, e.question_id, e.sql, v.u FROM episodes e JOIN evaluation v ON v.run = e.run AND v.arm = e.arm \
             AND v.seed = e.seed AND v.step = e.step WHERE e.run = '{run}' AND e.arm = 'lucid'"
        )
    };
    let changed = both(&format!(
        "WITH a AS ({}), b AS ({}) SELECT count(*) AS n FROM a JOIN b ON a.seed = b.seed AND a.question_id = b.question_id \
         WHERE a.u <> b.u OR a.sql <> b.sql OR (a.sql IS NULL) <> (b.sql IS NULL)",
        side("other"),
        side("study")
    ))[0]["n"]
        .as_u64()
        .unwrap();
    assert!(changed > 0, "the other model's counts change some answers");
    assert!(page.contains(&format!("{changed} questions that changed")), "{page}");
    let report = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/reports/compare_runs.sql");
    let stats = both(&report.display().to_string());
    for seed in [0, 1] {
        let s = stats
            .iter()
            .find(|s| {
                s["run_a"] == "other"
                    && s["arm_a"] == "lucid"
                    && s["run_b"] == "study"
                    && s["arm_b"] == "lucid"
                    && s["seed"] == seed
            })
            .unwrap();
        // Numbers as the page's script writes them (2.0 as "2").
        let js = |v: &Value| {
            let x = v.as_f64().unwrap();
            if x.fract() == 0.0 { format!("{}", x as i64) } else { x.to_string() }
        };
        let row = format!(
            "<td>{seed}</td><td>{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td>",
            s["n"],
            s["changed"],
            js(&s["diff"]),
            js(&s["lo"]),
            js(&s["hi"])
        );
        assert!(page.contains(&row), "{row} not in {page}");
    }

    // The SQL box: a read, answered on the page.
    let page = dom(
        &profile,
        &format!("{}{}", viewer.url, hash(&[("view", "sql"), ("sql", "SELECT count(*) AS lucid_n FROM episodes")])),
    );
    assert!(page.contains(&format!("<td>{total}</td>")) && page.contains("lucid_n"), "{page}");

    // The export, from disk, no server: the same episode.
    let export = d.join("export");
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .args(["view", "runs/study", "runs/other", "--export"])
        .arg(&export)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let page = dom(&profile, &format!("file://{}/index.html{}", export.display(), hash(&[("ep", &key)])));
    assert!(page.contains(&html_text(ep["question"].as_str().unwrap())) && page.contains("Model calls (3)"), "{page}");
    assert!(page.contains(&html_text(ep["sql"].as_str().unwrap())));

    if let Some(out) = std::env::var_os("LUCID_VIEW_SCREENSHOTS") {
        let out = Path::new(&out);
        for (name, h) in [
            ("episode", hash(&[("arm", "memento"), ("ep", &key)])),
            ("compare", hash(&[("view", "compare"), ("a", "other|lucid"), ("b", "study|lucid")])),
            (
                "sql",
                hash(&[
                    ("view", "sql"),
                    (
                        "sql",
                        "SELECT arm, count(*) AS episodes, avg(r) AS self_grade FROM episodes GROUP BY arm ORDER BY arm",
                    ),
                ]),
            ),
        ] {
            let png = out.join(format!("view_{name}.png"));
            let o = chromium(&profile)
                .arg(format!("--screenshot={}", png.display()))
                .arg(format!("{}{h}", viewer.url))
                .output()
                .unwrap();
            assert!(o.status.success() && png.is_file());
        }
    }
}

#[test]
fn the_viewer_refuses_other_sites_and_any_sql_that_is_not_a_read() {
    let server = FakeServer::start(vec![], Reply::func(scripted));
    let dir = project(&server.url);
    let d = dir.path();
    let o = lucid(&d.join("cache")).current_dir(d).args(["run", "study.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let viewer = serve(d, &["runs/study"]);
    let (status, body) = http(&viewer.url, "GET", "/data.js", &[], "");
    assert_eq!(status, 200);
    assert!(body.starts_with("window.LUCID_DATA = ") && body.contains("\"arm\":\"memento\""));
    // DNS rebinding and cross-site requests: another Host, another Origin.
    assert_eq!(http(&viewer.url, "GET", "/data.js", &[("Host", "evil.example:80")], "").0, 403);
    assert_eq!(http(&viewer.url, "GET", "/data.js", &[("Origin", "http://evil.example")], "").0, 403);
    // The SQL box reads; it never writes a file, creates a table or sets an option.
    let target = d.join("leak.csv");
    for sql in [
        format!("COPY (SELECT * FROM tasks) TO '{}'", target.display()),
        format!("CREATE EXTERNAL TABLE x STORED AS CSV LOCATION '{}'", d.join("study.yaml").display()),
        "CREATE TABLE y AS SELECT 1".to_string(),
        "SET datafusion.execution.batch_size = 1".to_string(),
        "INSERT INTO tasks SELECT * FROM tasks".to_string(),
    ] {
        let (status, body) = http(&viewer.url, "POST", "/api/query", &[], &sql);
        assert_eq!(status, 400, "{sql}: {body}");
        assert!(body.contains("error"), "{body}");
    }
    assert!(!target.exists(), "COPY wrote a file");
    let (status, body) = http(&viewer.url, "POST", "/api/query", &[], "SELECT count(*) AS n FROM episodes");
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(v["rows"][0]["n"].as_u64().unwrap() > 0);
    // A report file outside the run's report folder is not served.
    assert_eq!(http(&viewer.url, "GET", "/report/study/..%2F..%2Fstudy.yaml", &[], "").0, 404);
}
