#!/usr/bin/env python3
"""One chat model, lucid against llama-cpp-python, paired in one sitting (#74).

  bench_model_pair.py --lucid target/release/lucid --model qwen2.5-coder-1.5b \
      --llama-python .venv-bench-native/bin/python --rounds 2 --out tests/bench/results/models.md

Each round runs lucid's figures (`lucid models bench NAME`: a 1,000-token prompt read from
scratch, 64 greedy tokens generated, and 4 sequences decoded one at a time and then together in 7
paired runs) and then llama-cpp-python's on the same GGUF, the same text and the same cores, so a
slow spell of the shared machine touches both sides of a round. The best of each side over the
rounds gives the ratio; each round's own ratio is listed too. The section it writes replaces the
one of the same model between its markers in --out, leaving the rest of the file as it is.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_models import LLAMA, PROMPT, TOKENS, peer  # noqa: E402


def lucid_figures(lucid, model):
    p = subprocess.run([lucid, "models", "bench", model], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stderr)
    rows = [r for r in json.loads(p.stdout) if "lucid kernels" in r["label"]]
    if not rows:
        sys.exit(f"lucid models bench {model}: no row (is it fetched?)")
    return rows[0]


def machine():
    cpu = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    flags = open("/proc/cpuinfo").read()
    isa = ", ".join(f for f in ["avx2", "fma", "avx512f", "avx512_vnni"] if re.search(rf"\b{f}\b", flags))
    mem = int(open("/proc/meminfo").readline().split()[1]) / 2**20
    return f"{os.cpu_count()} cores of {cpu} ({isa}), {mem:.0f} GiB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lucid", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--llama-python", required=True, help="python with llama-cpp-python")
    ap.add_argument("--peer-label", default="llama-cpp-python built with GGML_NATIVE=ON (AVX-512, VNNI)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    threads = os.cpu_count()
    gguf = subprocess.run([a.lucid, "models", "path", a.model], capture_output=True, text=True).stdout.strip()
    if not gguf:
        sys.exit(f"{a.model} is not fetched: lucid models fetch {a.model}")
    version = subprocess.run([a.llama_python, "-c", "import llama_cpp; print(llama_cpp.__version__)"],
                             capture_output=True, text=True).stdout.strip() or "unknown"
    rounds = []
    for i in range(a.rounds):
        ours = lucid_figures(a.lucid, a.model)
        theirs = peer(a.llama_python, LLAMA, gguf, PROMPT, threads)
        if "error" in theirs:
            sys.exit(f"llama-cpp-python failed: {theirs['error']}")
        rounds.append({"lucid": ours, "llama": theirs})
        print(f"round {i + 1}: lucid read {ours['prompt_tokens_per_s']:.1f} gen {ours['gen_tokens_per_s']:.1f}; "
              f"llama read {theirs['prompt_tokens_per_s']:.1f} gen {theirs['tokens_per_s']:.1f}", file=sys.stderr)
    best = lambda side, key: max(r[side][key] for r in rounds)  # noqa: E731
    size = os.path.getsize(gguf)
    head = f"<!-- pair {a.model} -->"
    lines = [head, f"## {a.model}, paired against llama.cpp in one sitting (#74)", "",
             f"Written {time.strftime('%Y-%m-%d %H:%M')} by `just bench-model-pair {a.model}` on {machine()}; "
             f"{a.rounds} rounds, each lucid then {a.peer_label} {version}, the same GGUF "
             f"({size:,} bytes), the same text, {threads} threads. Best of each side; each round's own ratio beside.", "",
             "| figure (tokens/s) | lucid | llama.cpp | lucid / llama.cpp (best) | each round's ratio |",
             "|---|---:|---:|---:|---|"]
    for what, ours, theirs in [(f"prompt reading, 1000 tokens", "prompt_tokens_per_s", "prompt_tokens_per_s"),
                               (f"generation, {TOKENS} tokens", "gen_tokens_per_s", "tokens_per_s")]:
        per = ", ".join(f"{r['lucid'][ours] / r['llama'][theirs]:.2f}x" for r in rounds)
        lines.append(f"| {what} | {best('lucid', ours):.1f} | {best('llama', theirs):.1f} | "
                     f"{best('lucid', ours) / best('llama', theirs):.2f}x | {per} |")
    tg = max((r["lucid"]["together"] for r in rounds), key=lambda t: t["median_paired_speedup"])
    pairs = tg["paired_speedups"]
    lines += ["", f"Sequences decoded together (lucid, the round with the higher median): {tg['sequences']} prompts, "
              f"{tg['steps']} greedy steps each, alone then together in {len(pairs)} paired runs: "
              f"{tg['alone_tokens_per_s']:.1f} tokens/s one at a time, {tg['together_tokens_per_s']:.1f} together; "
              f"speedup {tg['speedup']:.2f}x (best of each), median of the pairs {tg['median_paired_speedup']:.2f}x "
              f"({min(pairs):.2f}-{max(pairs):.2f}); the same tokens: {tg['same_tokens']}.",
              f"Generation as weight bytes read per second (the whole file per token): lucid "
              f"{size * best('lucid', 'gen_tokens_per_s') / 1e9:.1f} GB/s, llama.cpp {size * best('llama', 'tokens_per_s') / 1e9:.1f} GB/s.",
              "", "Raw figures:", "", "```json", json.dumps(rounds, indent=1), "```", head]
    section = "\n".join(lines)
    text = open(a.out).read() if os.path.exists(a.out) else ""
    pat = re.compile(re.escape(head) + r".*?" + re.escape(head), re.S)
    text = pat.sub(lambda _: section, text) if pat.search(text) else text.rstrip("\n") + "\n\n" + section + "\n"
    open(a.out, "w").write(text)
    print(section)


if __name__ == "__main__":
    main()
