#!/usr/bin/env bash
# The memory loop at the speed of its dependency depth: one memory arm over 1,534 SpiderMan
# questions against a loopback server answering every call after a fixed LATENCY (default 0.2 s),
# at concurrency 128, 32, 8 and 1. Reports wall time, the critical path (from the manifest) and
# the bound critical path x 3 calls x LATENCY. Writes tests/bench/results/dag.md.
# usage: tests/bench/bench_dag.sh [LATENCY] [CONCURRENCIES...]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d ../shared/data/spiderman-train ] || { echo "skip: ../shared/data/spiderman-train is absent"; exit 0; }
latency="${1:-0.2}"
shift || true
levels=("${@:-128 32 8 1}")
read -r -a levels <<< "${levels[*]}"
cargo build --release --quiet --bin lucid
bin=${CARGO_TARGET_DIR:-target}/release/lucid
work=$(mktemp -d)
python3 tests/bench/latency_server.py "$latency" > "$work/port" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$work/port")/v1"
models=$("$bin" models path minilm | xargs dirname)
mkdir -p "$work/cache/models" && ln -s "$models"/* "$work/cache/models/"
export LUCID_CACHE_DIR=$work/cache
rows=""
for c in "${levels[@]}"; do
  runs="$work/runs-$c"
  set_args=(--set "runs_dir=$runs" --set "stages.agent.config.model.base_url=$url" --set "stages.agent.config.concurrency=$c")
  "$bin" run tests/bench/dag.yaml --quiet "${set_args[@]}" --only retrieve >/dev/null
  t0=$(date +%s.%N)
  "$bin" run tests/bench/dag.yaml --quiet "${set_args[@]}" >/dev/null
  t1=$(date +%s.%N)
  wall=$(echo "$t1 - $t0" | bc)
  cp=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print([i for i in m['instances'] if i['stage']=='agent'][0]['notes']['critical_path'])" "$runs/dag/manifest.json")
  peak=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print([i for i in m['instances'] if i['stage']=='agent'][0]['notes']['peak_ready'])" "$runs/dag/manifest.json")
  bound=$(echo "$cp * 3 * $latency" | bc)
  rows+="| $c | $(printf %.1f "$wall") | $cp | $peak | $(printf %.1f "$bound") | $(echo "scale=2; $wall / $bound" | bc) |"$'\n'
  echo "concurrency $c: ${wall}s (critical path $cp, bound ${bound}s)" >&2
done
mkdir -p tests/bench/results
{
  echo "# The memory loop scheduled by its retrieval DAG (tests/bench/bench_dag.sh, $(nproc) cores, $(date -u +%Y-%m-%d))"
  echo
  echo "One memory arm (memento), seed 0, the first 1,534 SpiderMan-train questions (BIRD dev's size),"
  echo "MiniLM retrieval with k = 4; every call answered by a loopback OpenAI-compatible server after"
  echo "${latency} s (3 calls per episode); no response cache. Bound = critical path x 3 x ${latency} s: the"
  echo "time at unbounded concurrency."
  echo
  echo "| concurrency | wall, s | critical path (episodes) | peak ready + in flight | bound, s | wall / bound |"
  echo "|---|---|---|---|---|---|"
  printf "%s" "$rows"
} > tests/bench/results/dag.md
cat tests/bench/results/dag.md
