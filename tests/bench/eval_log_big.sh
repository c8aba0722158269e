#!/usr/bin/env bash
# A big Inspect AI log imported (#72): Inspect writes the planted eval offline
# (tests/fixtures/eval_logs/inspect_log.py), inspect_variants.py copies its samples into a log of
# N samples, and `lucid import` reads it, timed by GNU time (wall, peak RSS) into
# tests/bench/results/eval.md's log. Usage: tests/bench/eval_log_big.sh [lucid] [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
lucid="$(realpath "${1:-target/release/lucid}")"
n="${2:-100000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
log="$(python3 "$root/tests/fixtures/eval_logs/inspect_log.py" "$work/logs")"
mkdir v
python3 "$root/tests/fixtures/eval_logs/inspect_variants.py" "$log" v "$n" >/dev/null
size="$(stat -c %s v/big.eval)"
echo "=== $(date -u '+%Y-%m-%d %H:%M') UTC: lucid import of an Inspect .eval of $n samples ($size bytes), $(nproc) cores"
/usr/bin/time -f "wall %e s, peak RSS %M KiB" "$lucid" import v/big.eval --preset inspect --name big \
  --grader model_graded_qa 2>&1 | tail -3
"$lucid" query runs/big "SELECT count(*) AS memories FROM episodes" | tail -2 | head -1
