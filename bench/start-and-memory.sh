#!/usr/bin/env bash
# Start time and idle memory of the server on a fresh embedded data directory (or DATABASE_URL when set):
# first start to the ready line, idle 10 s, then PSS of the node process and of the embedded PostgreSQL
# (postmaster and its children), then a restart on the same directory. Usage: bash bench/start-and-memory.sh
# It runs the compiled server as npm start does (bin/svc.js with its V8 flag; dist/ built first when stale, the
# build not timed);
# BENCH_RUN=tsx runs the sources through tsx instead (node --import tsx src/main.ts), as npm start did before.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${BENCH_RUN:-dist}" = tsx ]; then
  server=(node --import tsx src/main.ts)
else
  node -e 'import("./scripts/build.mjs").then((b) => b.ensureBuilt())'
  server=(bin/svc.js)
fi
dir=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$dir" "$log"' EXIT
pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
start() {
  : >"$log"
  local t0=$(date +%s.%N)
  SVC_PORT=0 SVC_DATA_DIR="$dir" SVC_LOG_LEVEL=warn "${server[@]}" >"$log" 2>&1 &
  pid=$!
  until grep -q "listening on" "$log"; do
    kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.05
  done
  elapsed=$(echo "$(date +%s.%N) - $t0" | bc)
}
start
first=$elapsed
sleep 10
node_kb=$(pss "$pid")
pg_kb=0
if [ -f "$dir/pg/postmaster.pid" ]; then
  pm=$(head -1 "$dir/pg/postmaster.pid")
  for p in "$pm" $(pgrep -P "$pm"); do pg_kb=$((pg_kb + $(pss "$p"))); done
fi
kill -TERM "$pid"; wait "$pid" || true
start
kill -TERM "$pid"; wait "$pid" || true
printf '%s: first start to ready %.1f s; restart to ready %.1f s; idle PSS: node %d MB, embedded PostgreSQL %d MB\n' \
  "${server[*]}" "$first" "$elapsed" $((node_kb / 1024)) $((pg_kb / 1024))
