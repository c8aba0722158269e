//! The agent program's box, part 2 (#68): hostile programs written before the fixes. No socket
//! but a TCP stream (no MPTCP, no Unix socket of a host service, no netlink, ...), no descriptor
//! lucid's caller left open, a relative interpreter path found in the pipeline's folder; the
//! proxy bounded in connections and bodies; no episode served another's cached answer; CPU,
//! memory and disk bounds ending an episode and named in its record.

use crate::support::agent::{model, pipeline, query, run};
use crate::support::fake_server::{FakeServer, Reply};
use crate::support::{lucid, stderr, stdout};

/// Tries every socket the kernel offers and every way out of the box; answers `clean` or
/// `LEAK-<what>` (all of them). `{PORT}`: a loopback service that is not the proxy; `{SOCK}`: a
/// host service's Unix socket.
const SOCKETS: &str = r#"import json, os, socket, sys
json.loads(sys.stdin.readline())
leaks = []
allowed = {(f, socket.SOCK_STREAM, p) for f in (socket.AF_INET, socket.AF_INET6) for p in (0, 6)}
for fam in range(0, 64):
    for typ in (1, 2, 3, 4, 5, 6, 10, 1 | socket.SOCK_NONBLOCK, 1 | socket.SOCK_CLOEXEC):
        for proto in (0, 1, 2, 6, 17, 41, 58, 132, 136, 255, 256, 262, 263):
            try:
                s = socket.socket(fam, typ, proto)
            except OSError:
                continue
            if (fam, typ & 0xf, proto) not in allowed:
                leaks.append("socket:%d/%d/%d" % (fam, typ, proto))
            s.close()
def refused(f):
    try:
        f()
        return False
    except OSError:
        return True
def tcp():
    s = socket.socket(); s.settimeout(5); s.connect(("127.0.0.1", {PORT}))
def mptcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.settimeout(5); s.connect(("127.0.0.1", {PORT}))
def mptcp_listen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.bind(("0.0.0.0", 0)); s.listen()
def tcp_listen():
    s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen()
def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(5); s.connect("{SOCK}"); s.sendall(b"LEAK")
def unix_dgram():
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"LEAK", "{SOCK}")
for name, f in [("tcp", tcp), ("mptcp", mptcp), ("mptcp-listen", mptcp_listen), ("tcp-listen", tcp_listen),
                ("unix", unix), ("unix-dgram", unix_dgram)]:
    if not refused(f):
        leaks.append(name)
# A pair of its own still works (asyncio and multiprocessing use one).
a, b = socket.socketpair()
a.sendall(b"x")
if b.recv(1) != b"x":
    leaks.append("socketpair-broken")
a.close()
b.close()
# Descriptors it was not given (lucid's caller left one open at 7).
for fd in range(3, 1024):
    try:
        os.write(fd, b"LEAK")
        leaks.append("fd:%d" % fd)
    except OSError:
        pass
print(json.dumps({"protocol": 1, "artifact": "Answer: " + ("clean" if not leaks else "LEAK-" + ",".join(leaks))}))
"#;

#[test]
fn no_socket_but_tcp_to_the_proxy_and_no_inherited_descriptor_reach_the_box() {
    let server = FakeServer::start(vec![], Reply::func(model));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A host service on a Unix socket, outside the box.
    let sock_path = d.join("service.sock");
    let service = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    service.set_nonblocking(true).unwrap();
    let port = server.url.rsplit(':').next().unwrap().trim_end_matches('/').to_string();
    let script = SOCKETS.replace("{PORT}", &port).replace("{SOCK}", &sock_path.display().to_string());
    std::fs::write(d.join("sockets.py"), script).unwrap();
    // The interpreter named by a path relative to the pipeline's folder (a virtual environment).
    let venv = std::process::Command::new("python3").args(["-m", "venv", "--without-pip"]).arg(d.join("venv")).output();
    assert!(venv.as_ref().is_ok_and(|o| o.status.success()), "python3 -m venv: {venv:?}");
    let model_cfg = format!("{{backend: openai, model: m, base_url: '{}/v1'}}", server.url);
    let agent = "{command: [venv/bin/python, sockets.py], files: [sockets.py], timeout_secs: 120}";
    std::fs::write(d.join("agent.yaml"), pipeline(d, &model_cfg, agent, "[memento]", "[0]")).unwrap();
    // A file left open for writing at descriptor 7 by lucid's caller (a shell's `exec 7>>`).
    let leak = d.join("leak");
    let inner = lucid(&d.join("cache"));
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c").arg("exec 7>>\"$LEAK\"; exec \"$0\" \"$@\"").arg(inner.get_program()).args([
        "run",
        "agent.yaml",
        "--quiet",
    ]);
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let o = cmd.current_dir(d).env("LEAK", &leak).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let eps = query(d, "SELECT step, answer FROM episodes ORDER BY step");
    assert_eq!(eps.len(), 4);
    for e in &eps {
        assert_eq!(e["answer"], "clean", "{e}");
    }
    assert!(service.accept().is_err(), "the host's Unix service was reached");
    assert_eq!(std::fs::read_to_string(&leak).unwrap(), "", "the caller's descriptor reached the box");
}

/// Crowds its own endpoint, sends a body over the limit, then asks the model the same prompt
/// as every other episode; answers what the endpoint said.
const CROWD: &str = r#"import json, os, socket, sys, time, urllib.error, urllib.request
json.loads(sys.stdin.readline())
base = os.environ["OPENAI_BASE_URL"]
host, port = base.split("//")[1].split("/")[0].rsplit(":", 1)
path = "/" + base.split("/", 3)[3]
def status(c):
    return c.recv(64).split(b" ")[1].decode()
idle = [socket.create_connection((host, int(port))) for _ in range(40)]
refused = sum(status(c) == "503" for c in idle[8:])
for c in idle:
    c.close()
big = "?"
for _ in range(1000):
    c = socket.create_connection((host, int(port)))
    c.sendall(("POST %s/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (path, 64 << 20)).encode())
    big = status(c)
    if big != "503":
        break
    time.sleep(0.01)
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Question: What is the capital of Freedonia? (probe)"}], "max_tokens": 8}).encode()
for _ in range(200):
    r = urllib.request.Request(base + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
    try:
        a = json.loads(urllib.request.urlopen(r).read())["choices"][0]["message"]["content"]
        break
    except urllib.error.HTTPError as e:
        if e.code != 503:
            raise
        time.sleep(0.05)
print(json.dumps({"protocol": 1, "artifact": "Answer: %s refused=%d big=%s" % (a, refused, big)}))
"#;

#[test]
fn the_proxy_bounds_each_episode_and_serves_no_episode_another_ones_cached_answer() {
    let server = FakeServer::start(vec![], Reply::func(model));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("crowd.py"), CROWD).unwrap();
    let model_cfg = format!("{{backend: openai, model: m, base_url: '{}/v1'}}", server.url);
    let agent = "{command: [python3, crowd.py], files: [crowd.py], timeout_secs: 120}";
    std::fs::write(d.join("agent.yaml"), pipeline(d, &model_cfg, agent, "[memento, lucid]", "[0]")).unwrap();
    run(d, &[]);
    let eps = query(d, "SELECT arm, step, answer FROM episodes ORDER BY arm, step");
    assert_eq!(eps.len(), 8);
    for e in &eps {
        // 8 connections answered at once, the other 32 refused; the 64 MiB body refused unread.
        assert_eq!(e["answer"], "Fredville refused=32 big=400", "{e}");
    }
    // The same prompt in 8 episodes: 8 model calls, none a cache hit.
    let probes = server.requests().iter().filter(|r| r.body.to_string().contains("(probe)")).count();
    assert_eq!(probes, 8);
    let hits = query(d, "SELECT count(*) AS n FROM calls WHERE role = 'agent' AND cache_hit");
    assert_eq!(hits[0]["n"], 0);
}

/// Step by step: a CPU hog, processes that hold memory together, files that fill the folder,
/// then an honest answer.
const HOGS: &str = r#"import json, os, subprocess, sys, time
req = json.loads(sys.stdin.readline())
step = req["episode"]["step"]
if step == 0:
    while True:
        pass
if step == 1:
    hold = "import time\nb = bytearray(100 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\ntime.sleep(60)"
    kids = [subprocess.Popen([sys.executable, "-c", hold]) for _ in range(4)]
    time.sleep(60)
if step == 2:
    for i in range(5):
        with open("fill%d" % i, "wb") as f:
            f.write(os.urandom(20 << 20))
    time.sleep(60)
print(json.dumps({"protocol": 1, "artifact": "Answer: Fredville"}))
"#;

#[test]
fn cpu_memory_and_disk_bounds_end_an_episode_and_are_named_in_its_record() {
    let server = FakeServer::start(vec![], Reply::func(model));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("hogs.py"), HOGS).unwrap();
    let model_cfg = format!("{{backend: openai, model: m, base_url: '{}/v1'}}", server.url);
    let agent =
        "{command: [python3, hogs.py], files: [hogs.py], timeout_secs: 50, cpu_secs: 2, memory_mb: 256, disk_mb: 64}";
    std::fs::write(d.join("agent.yaml"), pipeline(d, &model_cfg, agent, "[memento]", "[0]")).unwrap();
    run(d, &[]);
    let rows = query(d, "SELECT step, error FROM calls WHERE role = 'program' ORDER BY step");
    let errors: Vec<String> = rows.iter().map(|r| r["error"].as_str().unwrap_or("").to_string()).collect();
    assert_eq!(errors.len(), 4, "{rows:?}");
    assert!(errors[0].starts_with("limit cpu: ") && errors[0].contains("cpu_secs = 2"), "{}", errors[0]);
    assert!(errors[1].starts_with("limit memory: ") && errors[1].contains("256 MiB"), "{}", errors[1]);
    assert!(errors[2].starts_with("limit disk: ") && errors[2].contains("64 MiB"), "{}", errors[2]);
    assert_eq!(errors[3], "", "the honest episode");
}
