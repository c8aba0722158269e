#!/usr/bin/env python3
"""Model benchmark: lucid (candle) vs the Python peers on the same cores, figures to Markdown.

  embedding   MiniLM over the 6,716 SpiderMan-train questions, batch 64:
              lucid vs sentence-transformers on PyTorch CPU (same model folder, same 256 truncation)
  chat models SmolLM2-135M-Instruct Q4_1 and Qwen2.5-Coder-0.5B Q4_K_M (when fetched): reading a
              1,000-token prompt from scratch, and greedy generation of 64 new tokens: lucid (its own
              Q4_1/Q5_0 kernels; candle's kernels as "before"; SmolLM2 requantized to Q8_0) vs
              llama-cpp-python on the same GGUF, same text, same cores
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
llm = Llama(model_path=sys.argv[1], n_ctx=2048, n_threads=int(sys.argv[3]), verbose=False)
# The same 1,000 tokens lucid reads (src/commands/llm_bench.rs: long_prompt).
text = "".join(f"Row {i}: singer {i} from country {i % 17} is {20 + i % 50} years old.\n" for i in range(400))
toks = llm.tokenize(text.encode(), add_bos=False, special=False)[:1000]
reads = []
for _ in range(3):
    llm.reset()
    t = time.perf_counter()
    llm.eval(toks)
    reads.append(time.perf_counter() - t)
read = min(reads[1:])
msgs = [{"role": "user", "content": sys.argv[2]}]
runs = []
for _ in range(4):
    llm.reset()
    t = time.perf_counter()
    r = llm.create_chat_completion(messages=msgs, max_tokens=64, temperature=0.0)
    runs.append((r["usage"]["completion_tokens"], time.perf_counter() - t))
n, s = min(runs[1:], key=lambda x: x[1])
print(json.dumps({"prompt_tokens": len(toks), "prompt_seconds": read, "prompt_tokens_per_s": len(toks) / read,
                  "generated_tokens": n, "seconds": s, "tokens_per_s": n / s}))
"""


def peer(python, code, *args):
    try:
        p = subprocess.run([python, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=1800)
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}
    if p.returncode != 0:
        return {"error": f"exit {p.returncode}: {p.stderr.strip()[-300:]}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


BANDWIDTH = r"""
import json, time, numpy as np
a = np.ones(1 << 28, dtype=np.float32)  # 1 GiB
a.sum()
best = min((lambda t: (a.sum(), time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(3))
print(json.dumps({"gb_per_s": a.nbytes / best / 1e9}))
"""


def chat_rows(a, rows, threads):
    """Prompt reading and generation per model: lucid, lucid before (candle's kernels), the peer."""
    out = ["", "| chat model (tokens/s) | lucid | lucid before (candle's kernels) | llama-cpp-python | lucid / peer | lucid / before |",
           "|---|---:|---:|---:|---:|---:|"]
    by = {r["label"]: r for r in rows}
    together = ["", "Sequences decoded together (lucid): 4 chat prompts, 63 greedy steps each, decoded one sequence at a time "
                "and then all 4 in one batch per step (prompts read first, not timed), in 7 paired runs (alone, then together): "
                "tokens per second over all sequences, best of each side; the speedup of the best of each, and the median and "
                "range of the 7 pairs' own ratios (a slow spell of this shared machine touches both sides of a pair).",
                "", "| model | one at a time | 4 together | speedup (best of each) | median of the pairs (range) | same tokens |",
                "|---|---:|---:|---:|---:|---|"]
    for name, label, short in [("smollm2", "SmolLM2 Q4_1", "SmolLM2-135M Q4_1"),
                               ("qwen2.5-coder", "Qwen2.5-Coder-0.5B Q4_K_M", "Qwen2.5-Coder-0.5B Q4_K_M")]:
        ours, before = by.get(f"{label}, lucid kernels"), by.get(f"{label}, candle kernels")
        if not ours:
            out.append(f"| {short} | not fetched | | | | |")
            continue
        gguf = subprocess.run([a.lucid, "models", "path", name], capture_output=True, text=True).stdout.strip()
        ll = peer(a.llama_python or a.peer_python, LLAMA, gguf, PROMPT, threads)
        for what, key, pkey in [(f"prompt reading, {ours['prompt_tokens']} tokens", "prompt_tokens_per_s", "prompt_tokens_per_s"),
                                (f"generation, {TOKENS} tokens", "gen_tokens_per_s", "tokens_per_s")]:
            p = ll.get(pkey)
            peer_s = f"{p:.1f}" if p else f"failed: {ll.get('error', 'n/a')}"
            ratio = f"{ours[key] / p:.2f}x" if p else "n/a"
            out.append(f"| {short} {what} | {ours[key]:.1f} | {before[key]:.1f} | {peer_s} | {ratio} | {ours[key] / before[key]:.2f}x |")
        if a.llama_native_python:
            nat = peer(a.llama_native_python, LLAMA, gguf, PROMPT, threads)
            for what, key, pkey in [("prompt reading", "prompt_tokens_per_s", "prompt_tokens_per_s"),
                                    ("generation", "gen_tokens_per_s", "tokens_per_s")]:
                p = nat.get(pkey)
                peer_s = f"{p:.1f}" if p else f"failed: {nat.get('error', 'n/a')}"
                ratio = f"{ours[key] / p:.2f}x" if p else "n/a"
                out.append(f"| {short} {what}, peer built for this CPU (GGML_NATIVE: AVX-512, VNNI) | {ours[key]:.1f} | | {peer_s} | {ratio} | |")
        size = os.path.getsize(gguf) if gguf and os.path.exists(gguf) else 0
        p = ll.get("tokens_per_s")
        if size and p:
            out.append(f"| {short} generation as weight bytes read per second (the whole {size / 1e6:.0f} MB file per token) | "
                       f"{size * ours['gen_tokens_per_s'] / 1e9:.1f} GB/s | {size * before['gen_tokens_per_s'] / 1e9:.1f} GB/s | "
                       f"{size * p / 1e9:.1f} GB/s | | |")
        tg = ours.get("together")
        if tg:
            pairs = tg["paired_speedups"]
            together.append(f"| {short} | {tg['alone_tokens_per_s']:.1f} | {tg['together_tokens_per_s']:.1f} | "
                            f"{tg['speedup']:.2f}x | {tg['median_paired_speedup']:.2f}x ({min(pairs):.2f}-{max(pairs):.2f}) | "
                            f"{tg['same_tokens']} |")
        q8 = by.get(f"{label} requantized to Q8_0")
        if q8:
            for what, key, pkey in [("prompt reading", "prompt_tokens_per_s", "prompt_tokens_per_s"), ("generation", "gen_tokens_per_s", "tokens_per_s")]:
                p = ll.get(pkey)
                ratio = f"{q8[key] / p:.2f}x" if p else "n/a"
                out.append(f"| {short} requantized to Q8_0 at load, {what} | {q8[key]:.1f} | | {p or 0:.1f} (Q4_1) | {ratio} | |")
    if len(together) > 5:
        out += together
    bw = peer(a.peer_python, BANDWIDTH)
    if "gb_per_s" in bw:
        out += ["", f"Memory read bandwidth of this machine, one thread (numpy sum over 1 GiB): {bw['gb_per_s']:.1f} GB/s. "
                "Where lucid / peer stays under 1.0x, tests/bench/results/demo_calls.md gives the profile of what bounds it."]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lucid", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--peer-python", default=sys.executable)
    ap.add_argument("--llama-python", default=None, help="python with llama-cpp-python (default: --peer-python)")
    ap.add_argument("--llama-native-python", default=None,
                    help="python with llama-cpp-python built with GGML_NATIVE=ON (a second peer row per figure)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    threads = os.cpu_count()
    questions = os.path.join(a.data, "dev.json")
    p = subprocess.run([a.lucid, "models", "bench", "--questions", questions], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stderr)
    ours = json.loads(p.stdout)
    minilm = subprocess.run([a.lucid, "models", "path", "minilm"], capture_output=True, text=True).stdout.strip()
    st = peer(a.peer_python, ST, minilm, questions, threads)
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
    lines += chat_rows(a, ours.get("llm", []), threads)
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
