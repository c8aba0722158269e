#!/usr/bin/env bash
# `lucid report` over a generated run of ROWS episode rows (default 10,000,000: 2 seeds x 3 arms),
# every table but the k-sweep (the generated run has no embeddings; a k-sweep is quadratic in a
# stream's length and BIRD's is 1,534 long): wall time and peak memory, written to
# tests/bench/results/report.md. usage: tests/bench/bench_report.sh [ROWS] [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
rows="${1:-10000000}"
out="${2:-tests/bench/results/report.md}"
cargo build --release --quiet --bin lucid --example gen_report_run
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s.%N)
target/release/examples/gen_report_run "$tmp/run" "$rows" >/dev/null
gen=$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(date +%s.%N)" "$start")
size=$(du -sh "$tmp/run" | cut -f1)
/usr/bin/time -v target/release/lucid report "$tmp/run" --out "$tmp/report" >/dev/null 2>"$tmp/time.txt"
wall=$(grep "Elapsed (wall clock)" "$tmp/time.txt" | awk '{print $NF}')
rss=$(grep "Maximum resident set size" "$tmp/time.txt" | awk '{printf "%.0f", $NF / 1024}')
cpus=$(nproc)
{
  echo "# lucid report over a generated run"
  echo
  echo "$(date -u +%Y-%m-%d), $cpus cores, release build. \`just bench-report\` (tests/bench/bench_report.sh)."
  echo
  echo "| episode rows | Parquet | generate | lucid report (wall) | peak memory |"
  echo "|---|---|---|---|---|"
  printf "| %s | %s | %.1f s | %s | %s MiB |\n" "$rows" "$size" "$gen" "$wall" "$rss"
  echo
  echo "Every table of the report (ex, paired_difference, grader, coupling with bootstrap intervals,"
  echo "coupling_bins, trajectory, detector, echo_gap, attractor) and report.md / report.json /"
  echo "report.html; not the k-sweep (no embeddings in a generated run). Target: under 60 s with"
  echo "bounded memory on 2 cores."
} > "$out"
cat "$out"
