#!/usr/bin/env bash
# The kill tests under load: runs the tests that kill and resume runs (and the one that edits a
# prompt mid-run) ROUNDS times in a row (default 20) while a second cargo build (a cold release
# build of lucid in its own target folder, restarted whenever it finishes) loads both cores.
# The kill tests stop a run at a checkpoint part (LUCID_TEST_KILL_AFTER_PARTS), never after a
# measured delay, so they must pass every round whatever the load. Writes the pass count and each
# round's time to tests/bench/results/kill.md.
# usage: tests/bench/bench_kill.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-20}"
tests=(
  pipeline::killed_runs_resume_to_identical_tables
  study::killed_study_resumes_exactly_whatever_the_settings_and_faults
  dag_loop::dag_scheduled_memory_arms_equal_the_sequential_loop
  exactness::a_prompt_edited_during_a_run_is_not_stored_under_the_old_key
)
bin=$(cargo test --test integration --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m["target"]["name"]=="integration" and m.get("executable"): print(m["executable"])')
work=$(mktemp -d)
# Private copies of both binaries, so builds during the benchmark cannot swap them mid-round.
cp "$bin" "$work/integration" && bin="$work/integration"
cargo build --quiet --bin lucid && cp "${CARGO_TARGET_DIR:-target}/debug/lucid" "$work/lucid"
export LUCID_TEST_BIN="$work/lucid"
load_pid=""
cleanup() { [ -n "$load_pid" ] && kill -- -"$load_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
# The load: a second build on both cores, in its own process group so it can be stopped whole.
setsid bash -c "while true; do CARGO_TARGET_DIR='$work/load' cargo build --release --quiet --bin lucid >/dev/null 2>&1; rm -rf '$work/load'; done" &
load_pid=$!
sleep 20  # let the load build reach the compiler before the first round
passed=0
rows=""
for r in $(seq "$rounds"); do
  t0=$(date +%s.%N)
  if "$bin" --exact "${tests[@]}" --test-threads 2 >"$work/round-$r.log" 2>&1; then
    passed=$((passed + 1)); verdict=pass
  else
    verdict=FAIL; cp "$work/round-$r.log" "tests/bench/results/kill-round-$r.log"
  fi
  t1=$(date +%s.%N)
  load=$(cut -d' ' -f1 /proc/loadavg)
  rows+="| $r | $verdict | $(python3 -c "print(f'{$t1-$t0:.1f}')") | $load |"$'\n'
  echo "round $r: $verdict (load $load)"
done
{
  echo "# Kill tests under load"
  echo
  echo "\`tests/bench/bench_kill.sh $rounds\` on $(nproc) cores, $(date -u +%Y-%m-%d): the ${#tests[@]} tests below, all"
  echo "in one test process per round (2 test threads), $rounds rounds in a row, while a cold"
  echo "\`cargo build --release\` of lucid in a second target folder loads both cores."
  echo
  for t in "${tests[@]}"; do echo "- \`$t\`"; done
  echo
  echo "**Passed: $passed of $rounds rounds.**"
  echo
  echo "| round | result | seconds | load average (1 min) |"
  echo "|---|---|---|---|"
  printf '%s' "$rows"
} > tests/bench/results/kill.md
echo "passed $passed of $rounds"
[ "$passed" = "$rounds" ]
