#!/usr/bin/env bash
# Each domain's bank study with Qwen2.5-Coder-1.5B as the agent and its own grader (#74), at the
# sizes given below (what fits on 2 cores beside the rest of a session), each as its own run
# (runs/<study>_1_5b), with wall time and peak RSS from GNU time and the audit's tables, all into
# tests/bench/results/bank_1_5b.log. Usage: tests/bench/bank_studies_1_5b.sh [lucid] [study ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
lucid="${1:-target/release/lucid}"; shift || true
log=tests/bench/results/bank_1_5b.log
m=qwen2.5-coder-1.5b
for name in "$m" math tools code facts qwen2.5-coder; do "$lucid" models fetch "$name" >&2 || exit 1; done
declare -A sets
# The agent and the same-model judges are the 1.5B; the other family's judge stays as shipped.
sets[math]="pipelines/math_bank.yaml seeds=[0] stages.benchmark.config.per_topic=2 stages.agent.config.model.model=$m stages.resample.config.model.model=$m stages.adversarial.config.model.model=$m stages.cross_path.config.model.model=$m"
sets[factual]="pipelines/factual_bank.yaml seeds=[0] stages.benchmark.config.per_topic=4 stages.agent.config.model.model=$m stages.resample.config.model.model=$m stages.adversarial.config.model.model=$m stages.reader.config.reader.model.model=$m"
sets[tools]="pipelines/tools_bank.yaml seeds=[0] stages.benchmark.config.per_topic=2 stages.agent.config.model.model=$m stages.resample.config.model.model=$m stages.adversarial.config.model.model=$m"
sets[sql]="pipelines/demo.yaml seeds=[0] stages.benchmark.config.per_db=3 stages.agent.config.model.model=$m stages.oracle.config.model.model=$m"
sets[code]="pipelines/code_bank.yaml seeds=[0] stages.benchmark.config.limit=8 stages.agent.config.model.model=$m stages.selftest.config.model.model=$m stages.resample.config.model.model=$m stages.adversarial.config.model.model=$m"
studies=("$@"); [ ${#studies[@]} -gt 0 ] || studies=(math factual tools sql code)
for s in "${studies[@]}"; do
  read -r -a w <<<"${sets[$s]}"
  pipeline="${w[0]}"; args=(--set "name=${s}_1_5b")
  for kv in "${w[@]:1}"; do args+=(--set "$kv"); done
  { echo "=== $s: lucid run $pipeline ${args[*]}  ($(date -u '+%Y-%m-%d %H:%M') UTC)"; } | tee -a "$log"
  /usr/bin/time -f "wall %e s, peak RSS %M KiB" "$lucid" run "$pipeline" -q "${args[@]}" 2>&1 | tail -5 | tee -a "$log"
  "$lucid" audit "runs/${s}_1_5b" --arm memento 2>&1 | tee -a "$log"
done
