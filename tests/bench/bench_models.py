#!/usr/bin/env python3
"""Model benchmark: lucid (candle) vs the Python peers on the same cores, figures to Markdown.

  embedding   MiniLM over the 6,716 SpiderMan-train questions, batch 64:
              lucid vs sentence-transformers on PyTorch CPU (same model folder, same 256 truncation)
  generation  SmolLM2-135M-Instruct Q4_1, greedy, 64 new tokens, same prompt:
              lucid vs llama-cpp-python on the same GGUF
  retrieval   lucid's exact top-4 over 1k / 10k / 100k 384-d unit vectors (µs per query), and a
              100k-episode run where every episode queries the ones before it (the retrieve stage)

The peers run in the Python given by --peer-python (a venv with sentence-transformers and
llama-cpp-python installed from PyPI for this benchmark only). A peer that is missing or crashes
is reported as such.
"""
import argparse
import json
import os
import subprocess
import sys
import time

PROMPT = "Write a SQLite query that lists the name and age of every singer older than 30, ordered by age."
TOKENS = 64

ST = r"""
import json, sys, time, torch
torch.set_num_threads(int(sys.argv[3]))
from sentence_transformers import SentenceTransformer
qs = [q["question"] for q in json.load(open(sys.argv[2]))]
m = SentenceTransformer(sys.argv[1], device="cpu")
m.max_seq_length = 256
m.encode(qs[:64], batch_size=64, normalize_embeddings=True)
t = time.perf_counter()
m.encode(qs, batch_size=64, normalize_embeddings=True)
s = time.perf_counter() - t
print(json.dumps({"sentences": len(qs), "seconds": s, "sentences_per_s": len(qs) / s}))
"""

LLAMA = r"""
import json, sys, time
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=1024, n_threads=int(sys.argv[3]), verbose=False)
msgs = [{"role": "user", "content": sys.argv[2]}]
runs = []
for _ in range(4):
    t = time.perf_counter()
    r = llm.create_chat_completion(messages=msgs, max_tokens=64, temperature=0.0)
    runs.append((r["usage"]["completion_tokens"], time.perf_counter() - t))
runs = sorted(runs[1:], key=lambda x: x[1])
n, s = runs[1]
print(json.dumps({"generated_tokens": n, "seconds": s, "tokens_per_s": n / s}))
"""


def peer(python, code, *args):
    try:
        p = subprocess.run([python, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=1800)
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}
    if p.returncode != 0:
        return {"error": f"exit {p.returncode}: {p.stderr.strip()[-300:]}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lucid", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--peer-python", default=sys.executable)
    ap.add_argument("--llama-python", default=None, help="python with llama-cpp-python (default: --peer-python)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    threads = os.cpu_count()
    questions = os.path.join(a.data, "dev.json")
    p = subprocess.run([a.lucid, "models", "bench", "--questions", questions], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stderr)
    ours = json.loads(p.stdout)
    minilm = subprocess.run([a.lucid, "models", "path", "minilm"], capture_output=True, text=True).stdout.strip()
    gguf = subprocess.run([a.lucid, "models", "path", "smollm2"], capture_output=True, text=True).stdout.strip()
    st = peer(a.peer_python, ST, minilm, questions, threads)
    ll = peer(a.llama_python or a.peer_python, LLAMA, gguf, PROMPT, threads)
    lines = [
        "# lucid models vs Python peers",
        "",
        f"Written {time.strftime('%Y-%m-%d %H:%M')} by `just bench-models` on {threads} cores (same machine, same run).",
        "",
        "| measurement | lucid | peer | ratio (lucid / peer) |",
        "|---|---:|---:|---:|",
    ]
    e = ours.get("embed", {})
    if "sentences_per_s" in st and e:
        lines.append(f"| MiniLM embedding, {e['sentences']} questions (sentences/s) | {e['sentences_per_s']:.1f} | {st['sentences_per_s']:.1f} (sentence-transformers) | {e['sentences_per_s'] / st['sentences_per_s']:.2f}x |")
    else:
        lines.append(f"| MiniLM embedding (sentences/s) | {e.get('sentences_per_s', 'n/a')} | {st.get('error', 'n/a')} | n/a |")
    g = ours.get("generate", {})
    if "tokens_per_s" in ll and g:
        lines.append(f"| SmolLM2 Q4_1 generation, {TOKENS} tokens (tokens/s) | {g['tokens_per_s']:.1f} | {ll['tokens_per_s']:.1f} (llama-cpp-python) | {g['tokens_per_s'] / ll['tokens_per_s']:.2f}x |")
    else:
        got = f"{g['tokens_per_s']:.1f}" if g else "n/a"
        lines.append(f"| SmolLM2 Q4_1 generation, {TOKENS} tokens (tokens/s) | {got} | llama-cpp-python failed: {ll.get('error', 'n/a') or 'crashed'} | n/a |")
    g8 = ours.get("generate_q8_0", {})
    if "tokens_per_s" in ll and g8:
        lines.append(f"| SmolLM2 Q4_1 requantized to Q8_0 at load (`requantize: q8_0`), {TOKENS} tokens (tokens/s) | {g8['tokens_per_s']:.1f} | {ll['tokens_per_s']:.1f} (llama-cpp-python, Q4_1) | {g8['tokens_per_s'] / ll['tokens_per_s']:.2f}x |")
    lines += ["", "| retrieval bank | µs per query, one at a time | µs per query, 200 at once (search_many) | same results |", "|---:|---:|---:|---|"]
    for r in ours.get("retrieval", []):
        lines.append(f"| {r['bank']:,} | {r['us_per_query']:.1f} | {r['batched_us_per_query']:.1f} | {r['batched_equals_single']} |")
    lr = ours.get("loop_retrieval")
    if lr:
        lines += ["", f"Retrieve-stage shape: {lr['episodes']:,} episodes, each querying the episodes before it (top-{lr['k']}, one batched call): "
                  f"{lr['us_per_query']:.1f} µs per query, {lr['seconds']:.1f} s in all; 100 sampled results equal one-at-a-time search: {lr['sample_equals_single']}."]
    lines += ["", "Raw lucid figures:", "", "```json", json.dumps(ours, indent=1), "```", ""]
    open(a.out, "w").write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
