#!/usr/bin/env bash
# A cold `cargo build --release` of a commit, timed: a fresh clone of REV (default HEAD) and a
# fresh target folder (the crates' sources come from cargo's registry cache: downloads are not
# timed), with `--timings`. Writes the clone's timing report and `time -v`'s output to OUT
# (default /tmp/lucid-build/REV) for tests/bench/build_report.py. Run it on an idle machine:
# every unit's time is CPU time that other work would share.
#   tests/bench/build_time.sh [REV] [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=$(git rev-parse --short "${1:-HEAD}")
out=${2:-/tmp/lucid-build/$rev}
rm -rf "$out"; mkdir -p "$out"
git clone -q . "$out/src"
git -C "$out/src" checkout -q "$rev"
echo "$rev" >"$out/rev"
(cd "$out/src" && CARGO_TARGET_DIR="$out/target" CARGO_INCREMENTAL=0 CARGO_TERM_COLOR=never \
  /usr/bin/time -v cargo build --release --timings >"$out/build.log" 2>&1)
cp "$out/target/cargo-timings/cargo-timing.html" "$out/timing.html"
grep -E 'Finished|Elapsed' "$out/build.log"
echo "$out"
