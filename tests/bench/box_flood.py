"""The held-out flood of issue #68 as an agent program (tests/bench/bench_box.sh): in each
episode, 1,500 idle connections to its endpoint opened and held, then closed; then 20
connections each sending a 64 MiB body and 20 more each sending a body just under the body
limit (8 MiB), all at once; then one
honest model call, whose answer it returns. Prints what the endpoint did as the trace."""
import json, os, resource, socket, sys, threading, time, urllib.error, urllib.request

json.loads(sys.stdin.readline())
base = os.environ["OPENAI_BASE_URL"]
host, port = base.split("//")[1].split("/")[0].rsplit(":", 1)
port = int(port)
path = "/" + base.split("/", 3)[3] + "/chat/completions"
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
idle, opened = [], 0
for _ in range(1500):
    try:
        idle.append(socket.create_connection((host, port), timeout=30))
        opened += 1
    except OSError:
        break
for c in idle:
    c.close()
statuses = {}
lock = threading.Lock()
def send(size):
    try:
        c = socket.create_connection((host, port), timeout=30)
        c.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (path, size)).encode())
        chunk = b" " * (1 << 20)
        for _ in range(size >> 20):
            c.sendall(chunk)
        line = c.recv(64)
    except OSError as e:
        # The endpoint answered and closed while the body was still being sent: its status line
        # may still be readable.
        try:
            line = c.recv(64) or b"X closed"
        except OSError:
            line = b"X " + type(e).__name__.encode()
    code = line.split(b" ")[1].decode() if b" " in line else "closed"
    with lock:
        statuses[code] = statuses.get(code, 0) + 1
threads = [threading.Thread(target=send, args=(64 << 20,)) for _ in range(20)]
threads += [threading.Thread(target=send, args=((8 << 20) - 1,)) for _ in range(20)]
for t in threads:
    t.start()
for t in threads:
    t.join()
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Question: ok"}], "max_tokens": 8}).encode()
answer = "?"
for _ in range(400):
    r = urllib.request.Request(base + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
    try:
        answer = json.loads(urllib.request.urlopen(r).read())["choices"][0]["message"]["content"]
        break
    except urllib.error.HTTPError as e:
        if e.code != 503:
            raise
        time.sleep(0.05)
print(json.dumps({"protocol": 1, "artifact": "Answer: " + answer.splitlines()[0],
                  "trace": {"idle_opened": opened, "statuses": statuses}}))
