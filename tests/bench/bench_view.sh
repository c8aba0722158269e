#!/usr/bin/env bash
# `lucid view` over a generated run of ROWS episodes (default 10,000; tests/bench/gen_report_run.rs
# plus a tasks table, a gold table and a calls table of three calls an episode, each reply about
# 750 characters): the server's start (the run read and every row computed, each memory's later
# life included), the page's open in headless Chromium (the rows fetched and parsed, the table's
# first page drawn: the page's own performance.now() when its first view is drawn), a filter's
# recompute and redraw, one episode's body as the server answers it, and `--export DIR` (every
# body assembled from one query per table), wall and CPU time. Best and median of RUNS each.
# Writes tests/bench/results/view.md.
# usage: tests/bench/bench_view.sh [ROWS] [OUT]   (LUCID=path/to/lucid: the binary; default release;
#        BEFORE=path/to/an/older/lucid adds its export time on the same run — an export that
#        queries per episode takes minutes per thousand episodes: pick ROWS to match)
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
"$LUCID" query "$tmp/run" "COPY (SELECT DISTINCT question_id, 'SELECT ' || CAST(question_id AS VARCHAR) || ' AS gold' AS gold_sql FROM episodes) TO '$tmp/run/gold.parquet'" >/dev/null
"$LUCID" query "$tmp/run" "COPY (SELECT e.seed, e.arm, e.step, e.question_id, c.role, 'scripted' AS backend, 'bench' AS model, CAST(NULL AS VARCHAR) AS endpoint, e.arm || '/' || CAST(e.seed AS VARCHAR) || '/' || CAST(e.step AS VARCHAR) || '/' || c.role AS key, c.role || ' reply for step ' || CAST(e.step AS VARCHAR) || ': ' || repeat('lorem ipsum ', 60) AS text, CAST(NULL AS VARCHAR) AS error, CAST(900 AS INT UNSIGNED) AS tokens_in, CAST(120 AS INT UNSIGNED) AS tokens_out, CAST(0 AS DOUBLE) AS latency_ms, CAST(1 AS INT UNSIGNED) AS attempts, false AS cache_hit FROM episodes e CROSS JOIN (VALUES ('planner'), ('executor'), ('grader')) AS c(role)) TO '$tmp/run/calls.parquet'" >/dev/null
calls=$("$LUCID" query "$tmp/run" "SELECT count(*) AS n FROM calls" --format json | python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['n'])")
now() { date +%s.%N; }
since() { python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(now)" "$1"; }
start=$(now)
"$LUCID" view "$tmp/run" --address 127.0.0.1:0 > "$tmp/url.txt" &
server=$!
until grep -q "http://" "$tmp/url.txt" 2>/dev/null; do sleep 0.05; done
serve=$(since "$start")
url=$(sed 's/.* at //' "$tmp/url.txt")
# The server's API answers its own page only: the secret in the page's <meta name="lucid-view">.
secret=$(curl -s "$url" | grep -o 'name="lucid-view" content="[^"]*"' | sed 's/.*content="//; s/"$//')
bytes=$(curl -s -H "X-Lucid-View: $secret" "${url%/}/api/data" | wc -c)
shown=$(chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/chromium" --dump-dom "$url" 2>/dev/null | grep -o "— [0-9]* episodes" | head -1)
measure() { # URL -> "open_ms render_ms" of one page load
  chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --user-data-dir="$tmp/chromium" --dump-dom "$1" 2>/dev/null |
    python3 -c "import re,sys; t=sys.stdin.read(); print(re.search(r'data-open-ms=\"([0-9.]+)\"', t).group(1), re.search(r'data-render-ms=\"([0-9.]+)\"', t).group(1))"
}
stats() { python3 -c "import statistics,sys; v=sorted(float(x) for x in sys.argv[1:]); print(f'{v[0]:.0f} ms | {statistics.median(v):.0f} ms')" "$@"; }
# The middle episode of seed 0's memento arm (the generated run is named after its folder).
key="run%7C0%7Cmemento%7C$((rows / 12))"
opens=(); lists=(); filters=(); bodies=()
for _ in $(seq $runs); do
  read -r o r <<<"$(measure "$url")"; opens+=("$o"); lists+=("$r")
  read -r _o f <<<"$(measure "$url#arm=memento&u=0&flagged=true")"; filters+=("$f")
  bodies+=("$(curl -s -o /dev/null -w '%{time_total}' -H "X-Lucid-View: $secret" "${url%/}/api/episode?key=$key" | python3 -c "import sys; print(float(sys.stdin.read()) * 1000)")")
done
kill "$server" 2>/dev/null || true # the export runs alone
export_time() { # LUCID DIR -> "wall_s cpu_s" of one `lucid view --export`
  local TIMEFORMAT='%R %U %S'
  { time "$1" view "$tmp/run" --export "$2" >/dev/null 2>&1; } 2>&1 | awk '{printf "%.2f %.2f\n", $1, $2 + $3}'
}
read -r ex_wall ex_cpu <<<"$(export_time "$LUCID" "$tmp/export")"
ex_files=$(find "$tmp/export/details" -name '*.js' | wc -l)
ex_kb=$(du -sk "$tmp/export" | cut -f1)
if [ -n "${BEFORE:-}" ]; then
  read -r before_wall before_cpu <<<"$(export_time "$BEFORE" "$tmp/export-before")"
fi
{
  echo "# lucid view over a generated run"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores, \`$LUCID\`, $(chromium --version 2>/dev/null | head -1). \`just bench-view\` (tests/bench/bench_view.sh)."
  echo
  echo "| episodes (the page says) | rows (api/data) | server start (read + rows) | page open, best | median of $runs | filter + redraw, best | median | one episode's body (served), best | median |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf "| %s (%s) | %s KB | %.2f s | %s | %s | %s |\n" "$rows" "${shown#— }" "$((bytes / 1024))" "$serve" "$(stats "${opens[@]}")" "$(stats "${filters[@]}")" "$(stats "${bodies[@]}")"
  echo
  echo "| export (\`lucid view RUN --export DIR\`) | episodes | calls rows | wall | CPU (user + sys) | details files | size |"
  echo "|---|---|---|---|---|---|---|"
  printf "| this binary | %s | %s | %s s | %s s | %s | %s MB |\n" "$rows" "$calls" "$ex_wall" "$ex_cpu" "$ex_files" "$((ex_kb / 1024))"
  if [ -n "${BEFORE:-}" ]; then
    printf "| \`%s\` (before) | %s | %s | %s s | %s s | | |\n" "$BEFORE" "$rows" "$calls" "$before_wall" "$before_cpu"
  fi
  echo
  echo "## Method"
  echo
  echo "The run: tests/bench/gen_report_run.rs's episodes and evaluation (2 seeds x 3 arms, up to"
  echo "4 memories shown an episode), with a tasks table, a gold table and a calls table of three"
  echo "calls an episode (planner, executor, grader; replies of about 750 characters) written by"
  echo "\`lucid query ... COPY\`. Server start: from launching \`lucid view RUN\` to its printed URL"
  echo "(the run read, every row computed, each memory's shown-later and later-right counts"
  echo "included). Page open: from navigation to the first view drawn (the rows fetched and parsed,"
  echo "every row indexed, the first 200 rows drawn), the page's own performance.now(). Filter:"
  echo "arm = memento, U = 0, flagged, recomputed over every row and redrawn. One episode's body:"
  echo "curl's total time for \`api/episode\` of one memento episode of seed 0 (the body's queries"
  echo "restricted to that episode). Export: bash's \`time\` of \`lucid view RUN --export DIR\`, one"
  echo "run after the server's (page cache warm), wall and user + system CPU; every episode's body"
  echo "is assembled from one query per table (episodes, tasks, gold, evaluation, calls, each"
  echo "verifier table, draws) grouped by episode in Rust — the code that answers \`api/episode\`,"
  echo "restricted there to one episode — so the number of queries does not grow with the"
  echo "episodes. Before this, the export asked the server's per-episode queries once per episode:"
  echo "64 s wall (8.7 s CPU) for 132 episodes and about 26 minutes for 8,208 (the issue's"
  echo "figures; \`BEFORE=path/to/older/lucid\` measures an older binary on this run). Targets: open"
  echo "under 1 s, filter under 100 ms on 2 cores; the export in seconds, not minutes."
} > "$out"
cat "$out"
