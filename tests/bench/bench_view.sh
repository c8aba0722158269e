#!/usr/bin/env bash
# `lucid view` over a generated run of ROWS episodes (default 10,000; tests/bench/gen_report_run.rs
# plus a tasks table): the server's start (the run read and every row computed), the page's open
# in headless Chromium (data.js fetched and parsed, the table's first page drawn: the page's own
# performance.now() when its first view is drawn) and a filter's recompute and redraw, best and
# median of RUNS page loads each. Writes tests/bench/results/view.md.
# usage: tests/bench/bench_view.sh [ROWS] [OUT]   (LUCID=path/to/lucid: the binary; default release)
set -euo pipefail
cd "$(dirname "$0")/../.."
rows="${1:-10000}"
out="${2:-tests/bench/results/view.md}"
runs=5
if [ -z "${LUCID:-}" ]; then
  cargo build --release --quiet --bin lucid --example gen_report_run
  LUCID=target/release/lucid; gen=target/release/examples/gen_report_run
else
  cargo build --quiet --example gen_report_run; gen=target/debug/examples/gen_report_run
fi
tmp="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$gen" "$tmp/run" "$rows" >/dev/null
"$LUCID" query "$tmp/run" "COPY (SELECT DISTINCT question_id, 'Generated question ' || CAST(question_id AS VARCHAR) AS question FROM episodes) TO '$tmp/run/tasks.parquet'" >/dev/null
start=$(date +%s.%N)
"$LUCID" view "$tmp/run" --address 127.0.0.1:0 > "$tmp/url.txt" &
until grep -q "http://" "$tmp/url.txt" 2>/dev/null; do sleep 0.05; done
serve=$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(date +%s.%N)" "$start")
url=$(sed 's/.* at //' "$tmp/url.txt")
bytes=$(curl -s "${url%/}/data.js" | wc -c)
shown=$(chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/chromium" --dump-dom "$url" 2>/dev/null | grep -o "— [0-9]* episodes" | head -1)
measure() { # URL -> "open_ms render_ms" of one page load
  chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --user-data-dir="$tmp/chromium" --dump-dom "$1" 2>/dev/null |
    python3 -c "import re,sys; t=sys.stdin.read(); print(re.search(r'data-open-ms=\"([0-9.]+)\"', t).group(1), re.search(r'data-render-ms=\"([0-9.]+)\"', t).group(1))"
}
stats() { python3 -c "import statistics,sys; v=sorted(float(x) for x in sys.argv[1:]); print(f'{v[0]:.0f} ms | {statistics.median(v):.0f} ms')" "$@"; }
opens=(); lists=(); filters=()
for _ in $(seq $runs); do
  read -r o r <<<"$(measure "$url")"; opens+=("$o"); lists+=("$r")
  read -r _o f <<<"$(measure "$url#arm=memento&u=0&flagged=true")"; filters+=("$f")
done
{
  echo "# lucid view over a generated run"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores, \`$LUCID\`, $(chromium --version 2>/dev/null | head -1). \`just bench-view\` (tests/bench/bench_view.sh)."
  echo
  echo "| episodes (the page says) | data.js | server start (read + rows) | page open, best | median of $runs | filter + redraw, best | median |"
  echo "|---|---|---|---|---|---|---|"
  printf "| %s (%s) | %s KB | %.2f s | %s | %s |\n" "$rows" "${shown#— }" "$((bytes / 1024))" "$serve" "$(stats "${opens[@]}")" "$(stats "${filters[@]}")"
  echo
  echo "Page open: from navigation to the first view drawn (data.js fetched and parsed, every row"
  echo "indexed, the first $((200)) rows drawn), the page's own performance.now(). Filter: arm = memento,"
  echo "U = 0, flagged, recomputed over every row and redrawn. Targets: open under 1 s, filter under"
  echo "100 ms on 2 cores. Episode bodies are fetched when opened, not in data.js."
} > "$out"
cat "$out"
