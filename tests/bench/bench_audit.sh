#!/usr/bin/env bash
# `lucid audit` of a generated bank of MEMORIES memories x 8 verifiers (default 1,000,000) with
# 2,000 bootstrap resamples and 200 random prunes: wall time and peak memory, for a bank whose
# grades and flags are binary (few distinct cells) and one whose scores are all distinct (every
# memory its own cell: the bootstrap's worst case). Written to tests/bench/results/audit.md.
# usage: tests/bench/bench_audit.sh [MEMORIES] [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-1000000}"
out="${2:-tests/bench/results/audit.md}"
cargo build --release --quiet --bin lucid --example gen_bank
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
rows=""
for kind in binary continuous; do
  flag=""
  [ "$kind" = continuous ] && flag="--continuous"
  target/release/examples/gen_bank "$tmp/$kind.parquet" "$n" 8 $flag 2>/dev/null
  /usr/bin/time -v target/release/lucid audit "$tmp/$kind.parquet" --bootstrap 2000 --out "$tmp/$kind" \
    >/dev/null 2>"$tmp/time.txt"
  wall=$(grep "Elapsed (wall clock)" "$tmp/time.txt" | awk '{print $NF}')
  rss=$(grep "Maximum resident set size" "$tmp/time.txt" | awk '{printf "%.0f", $NF / 1024}')
  rows+="| $kind | $n | 8 (+2 ensembles, gold-fit, oracle, calibration) | $wall | $rss MiB |"$'\n'
done
{
  echo "# lucid audit of a generated bank"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores, release build. \`just bench-audit\` (tests/bench/bench_audit.sh)."
  echo
  echo "| scores | memories | verifiers | lucid audit (wall) | peak memory |"
  echo "|---|---|---|---|---|"
  printf "%s" "$rows"
  echo
  echo "Every table (grader, EIA, error correlations, payoff with 2,000 bootstrap resamples,"
  echo "controls with 200 random prunes, Proposition 2, calibration, leave-one-seed-out over 3 seeds)"
  echo "and audit.md / audit.json / audit.html. Target: under 60 s on 2 cores."
} > "$out"
cat "$out"
