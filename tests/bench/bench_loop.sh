#!/usr/bin/env bash
# The memory loop's own overhead: 3 arms x 2 seeds x 6,716 SpiderMan questions with the instant
# scripted backend (everything but model time). Embeddings are computed first and not counted.
# Writes tests/bench/results/loop.md. Needs ../shared/data and the offline models.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d ../shared/data/spiderman-train ] || { echo "skip: ../shared/data/spiderman-train is absent"; exit 0; }
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/lucid
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
models=$("$bin" models path minilm | xargs dirname)
mkdir -p "$work/cache/models" && ln -s "$models"/* "$work/cache/models/"
export LUCID_CACHE_DIR=$work/cache
run() { "$bin" run tests/bench/loop.yaml --quiet --set "runs_dir=$work/runs" "$@"; }
t0=$(date +%s.%N); run --only embed >/dev/null; t1=$(date +%s.%N)
run >/dev/null; t2=$(date +%s.%N)
episodes=$("$bin" query "$work/runs/loop-overhead" "SELECT count(*) AS n FROM episodes" --format csv | tail -1)
calls=$("$bin" query "$work/runs/loop-overhead" "SELECT count(*) AS n FROM calls" --format csv | tail -1)
embed=$(echo "$t1 - $t0" | bc); loop=$(echo "$t2 - $t1" | bc)
mkdir -p tests/bench/results
cat > tests/bench/results/loop.md <<MD
# Memory-loop overhead (tests/bench/bench_loop.sh, $(nproc) cores, $(date -u +%Y-%m-%d))

3 arms (no-memory, memento, LUCID) x 2 seeds over the 6,716 SpiderMan-train questions, scripted
instant backend: retrieval over the growing bank (k = 4), prompt rendering, three calls through
the response cache, every query run twice in the sandbox, self-grade parsing, the detector,
labels, durable chunks and Parquet output.

| what | value |
|---|---|
| episodes | $episodes |
| model calls recorded | $calls |
| loop wall time (retrieve + 6 loop instances + tables), s | $(printf %.1f "$loop") |
| per episode, ms | $(echo "scale=3; 1000 * $loop / $episodes" | bc) |
| target | < 120 s |
| MiniLM embeddings of the questions (not counted), s | $(printf %.1f "$embed") |
MD
cat tests/bench/results/loop.md
