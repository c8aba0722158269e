#!/usr/bin/env bash
# `lucid report` of two builds over one generated run, in turns (previous, current, previous, ...)
# so a slow spell of a shared machine touches both: each run's wall time and peak memory, the
# median of each side and of the pairs' own ratios (current / previous). What a release profile
# costs the analyst's SQL (#58). The builds are folders tests/bench/build_time.sh wrote.
#   tests/bench/report_pair.sh PREVIOUS_DIR CURRENT_DIR [ROWS (2000000)] [PAIRS (5)]
set -euo pipefail
previous=$1 current=$2 rows=${3:-2000000} pairs=${4:-5}
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$current/src" && CARGO_TARGET_DIR="$current/target" cargo build --release --quiet --example gen_report_run)
"$current/target/release/examples/gen_report_run" "$tmp/run" "$rows" >/dev/null
one() {  # dir -> "wall_seconds peak_mib"
  rm -rf "$tmp/report"
  /usr/bin/time -f "%e %M" -o "$tmp/t" "$1/target/release/lucid" report "$tmp/run" --out "$tmp/report" >/dev/null 2>&1
  awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$tmp/t"
}
one "$current" >/dev/null  # warm the page cache
echo "pair previous_s previous_mib current_s current_mib ratio"
for i in $(seq 1 "$pairs"); do
  read -r pw pm <<<"$(one "$previous")"
  read -r cw cm <<<"$(one "$current")"
  echo "$i $pw $pm $cw $cm $(python3 -c "print(f'{$cw / $pw:.3f}')")"
done | tee "$tmp/pairs"
python3 - "$tmp/pairs" "$rows" "$(cat "$previous/rev")" "$(cat "$current/rev")" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("pair")]
col = lambda i: [float(r[i]) for r in rows]
print(f"lucid report over {int(sys.argv[2]):,} generated episode rows, {len(rows)} pairs: "
      f"previous ({sys.argv[3]}) {statistics.median(col(1)):.1f} s, current ({sys.argv[4]}) "
      f"{statistics.median(col(3)):.1f} s, median ratio {statistics.median(col(5)):.2f} "
      f"(pairs {min(col(5)):.2f}-{max(col(5)):.2f}); peak memory {statistics.median(col(2)):.0f} "
      f"and {statistics.median(col(4)):.0f} MiB")
EOF
