#!/usr/bin/env bash
# The demo's model-call time on a fixed set of episodes: the first 20 questions of the bundled
# benchmark, seed 0, the memento arm (planner, executor and grader calls of 20 episodes), with an
# empty response cache, so every call is computed. Run it with two binaries (before / after) and
# compare. Prints one JSON line: wall seconds of the agent stage, calls, summed call latency,
# prompt and generated tokens. Each run has its own stage store, cache and run folder under
# ${DEMO20_DIR:-/tmp/demo20}/TAG (kept, to compare answers between binaries).
#   tests/bench/bench_demo_calls.sh LUCID_BIN TAG [--model qwen2.5-coder] [--set KEY=VALUE ...]
set -euo pipefail
bin=$(realpath "$1"); tag=$2; shift 2
models=${LUCID_MODELS:-$HOME/.cache/lucid/models}
root=$(pwd)
work=${DEMO20_DIR:-/tmp/demo20}/$tag
rm -rf "$work"; mkdir -p "$work/cache"
ln -s "$models" "$work/cache/models"
ln -s "$root/pipelines" "$root/data" "$work/"
cd "$work"
cache=$work/cache
name="demo20"
extra=()
if [ "${1:-}" = "--model" ]; then
  extra=(--set "stages.agent.config.model.model=$2"); shift 2
fi
extra+=("$@")
start=$(date +%s.%N)
"$bin" run pipelines/demo.yaml --cache-dir "$cache" --limit 20 --set seeds=[0] --set arms=[memento,oracle] --set "stages.agent.arms=[memento]" \
  --set report=false --set "name=$name" --only agent -q "${extra[@]}" >&2
end=$(date +%s.%N)
"$bin" query "runs/$name" "SELECT count(*) AS calls, sum(latency_ms) / 1000.0 AS call_seconds,
  sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out FROM calls" --format json 2>/dev/null \
  | python3 -c "import json,sys; r=json.loads(sys.stdin.read().splitlines()[0]); r['tag']='$tag'; r['wall_seconds']=round($end-$start,1); print(json.dumps(r))"
