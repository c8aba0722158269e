"""A loopback OpenAI-compatible chat server with a fixed latency per call, for the DAG benchmark
(tests/bench/bench_dag.sh). Answers like the tests' scripted model: a plan; a count over the first
table of the schema; a self-grade that depends on a hash of the prompt (so stored labels vary and
LUCID differs from memento). Prints its port, then serves until killed.

usage: latency_server.py SECONDS
"""
import hashlib
import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LATENCY = float(sys.argv[1])


def answer(prompt: str) -> str:
    if "numbered plan" in prompt:
        return "1. Count the rows of the first table."
    if "VERDICT" in prompt:
        h = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
        return "VERDICT: INCORRECT" if h % 3 == 0 else "VERDICT: CORRECT"
    m = re.search(r"CREATE TABLE\s+[`\"\[]?(\w+)", prompt)
    return f"```sql\nSELECT COUNT(*) FROM {m.group(1) if m else 'missing'}\n```"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        time.sleep(LATENCY)
        text = answer(body["messages"][-1]["content"])
        out = json.dumps({
            "id": "x", "object": "chat.completion", "model": body.get("model", "m"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512


srv = Server(("127.0.0.1", 0), Handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
