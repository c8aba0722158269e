#!/usr/bin/env bash
# Pipeline overhead benchmark: cold run, identical rerun (must do no work), one more seed.
# Usage: tests/bench/bench_pipeline.sh target/release/lucid OUT.md
set -euo pipefail
lucid=$(realpath "$1"); out=$(realpath -m "$2")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r pipelines "$work/"; mkdir -p "$work/data"; cp -r data/mini "$work/data/"
cd "$work"
sed -i "s#source: bundled#source: bundled\n      path: data/mini#" pipelines/eval.yaml
export LUCID_CACHE_DIR="$work/cache"
t() { local s=$(date +%s.%N); "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }; printf '%.3f' "$(echo "$(date +%s.%N) - $s" | bc)"; }
cold=$(t "$lucid" run pipelines/eval.yaml -q)
warm=$(t "$lucid" run pipelines/eval.yaml -q)
seed=$(t "$lucid" run pipelines/eval.yaml -q --set 'seeds=[0,1,2]')
done_warm=$(grep -c '"state": "done"' runs/eval-sample/manifest.json || true)
{
  echo "# lucid run overhead (pipelines/eval.yaml: bundled benchmark, 2 seeds, 62 episodes each)"
  echo
  echo "Written $(date -u +%Y-%m-%dT%H:%MZ) by \`just bench-pipeline\` on $(nproc) cores."
  echo
  echo "| run | seconds |"
  echo "|---|---:|"
  echo "| cold (7 instances) | $cold |"
  echo "| identical rerun (0 computed) | $warm |"
  echo "| --set seeds=[0,1,2] (3 computed) | $seed |"
} > "$out"
cat "$out"
