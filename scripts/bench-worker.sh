#!/usr/bin/env bash
# Latency of the edge worker's POST /v1/recall over loopback (wrk, in workerd via wrangler dev)
# next to the same memloom_fuse called directly from native Rust, on BENCH_N chunks of real
# text (the Node.js docs in ../shared/eval/nodejs-docs, repeated with a per-copy suffix until N
# rows are stored), plus cold start. Prints a table and the overhead ratio worker p50 / direct p50.
#
#   BENCH_N=100000 BENCH_SECONDS=20 BENCH_CONNECTIONS=1 bash scripts/bench-worker.sh
#
# Loading is the slow part (about 300 rows/s here: HNSW + GIN + identifier lexemes per row, so
# 100k rows take 5 to 8 minutes on 2 shared cores). Loopback only; every run is time-bounded.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { echo "bench-worker: $*" >&2; }
die() { echo "bench-worker: error: $*" >&2; exit 2; }

N="${BENCH_N:-100000}"
SECS="${BENCH_SECONDS:-20}"
CONNS="${BENCH_CONNECTIONS:-1}"
EVAL="${MEMLOOM_EVAL_DIR:-$ROOT/../shared/eval/nodejs-docs}"
[ -d "$EVAL/corpus" ] || die "no corpus at $EVAL/corpus (set MEMLOOM_EVAL_DIR)"
command -v wrk >/dev/null || { log "installing wrk"; apt-get install -y -q wrk >&2; }

WORK="$(mktemp -d /tmp/memloom-worker-bench.XXXXXX)"
export MEMLOOM_PG_STATE="$WORK/pg"
WRANGLER_PID=""
cleanup() {
  local rc=$?
  if [ -n "$WRANGLER_PID" ]; then
    kill -TERM -- "-$WRANGLER_PID" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$WRANGLER_PID" 2>/dev/null || break; sleep 0.3; done
    kill -KILL -- "-$WRANGLER_PID" 2>/dev/null || true
  fi
  bash "$ROOT/scripts/pg.sh" stop 2>/dev/null || true
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT INT TERM

bash scripts/pg.sh install
bash scripts/build-worker.sh
log "building the seed tool (native, release)"
cargo build -q --release -p edge-worker --example seed >&2
SEED="$ROOT/target/release/examples/seed"

URL="$(bash scripts/pg.sh start)"
t0=$(date +%s)
"$SEED" ingest "$URL" bench "$EVAL/corpus" --repeat-to "$N"
load_s=$(( $(date +%s) - t0 ))

# Queries: the labelled set's query texts, as JSON strings (for wrk) and JSONL (for seed).
node -e '
  const fs = require("fs");
  const lines = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
  fs.writeFileSync(process.argv[2], lines.map((l) => JSON.stringify(JSON.parse(l).query)).join("\n") + "\n");
' "$EVAL/queries.jsonl" "$WORK/queries.txt"

log "direct memloom_fuse, one connection, ${SECS}s"
read -r d50 d95 d99 dn <<<"$("$SEED" fuse "$URL" bench "$EVAL/queries.jsonl" "$SECS")"
log "direct memloom_fuse, a fresh connection per call, ${SECS}s"
read -r f50 f95 f99 fn <<<"$("$SEED" fuse "$URL" bench "$EVAL/queries.jsonl" "$SECS" --fresh)"

TOKEN="mlt_$(node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("hex"))')"
umask 077
printf 'DATABASE_URL=%s\nMEMLOOM_TOKENS={"%s":"bench"}\n' "$URL" \
  "$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)" > "$WORK/worker.env"
PORT=$(( 20000 + RANDOM % 30000 ))
while (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do PORT=$(( 20000 + RANDOM % 30000 )); done
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
unset CLOUDFLARE_API_TOKEN CLOUDFLARE_ACCOUNT_ID
WORKER_URL="http://127.0.0.1:$PORT"
body='{"query":"ERR_REQUIRE_ESM","limit":10}'

start_ns=$(date +%s%N)
(cd "$WORK" && exec setsid "$ROOT/crates/edge-worker/node_modules/.bin/wrangler" dev \
  --config "$ROOT/wrangler.toml" --ip 127.0.0.1 --port "$PORT" --local \
  --env-file "$WORK/worker.env" --persist-to "$WORK/state" \
  --show-interactive-dev-session=false) > "$WORK/wrangler.log" 2>&1 &
WRANGLER_PID=$!
until grep -q "Ready on" "$WORK/wrangler.log" 2>/dev/null; do
  kill -0 "$WRANGLER_PID" 2>/dev/null || die "wrangler exited: $(tail -5 "$WORK/wrangler.log")"
  [ $(( ($(date +%s%N) - start_ns) / 1000000000 )) -lt 60 ] || die "wrangler not ready in 60 s"
  sleep 0.05
done
ready_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
first_ms=$(curl -fsS -o /dev/null -w '%{time_total}' -X POST "$WORKER_URL/v1/recall" \
  -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d "$body" \
  | awk '{printf "%.1f", $1 * 1000}')
cold_total_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
second_ms=$(curl -fsS -o /dev/null -w '%{time_total}' -X POST "$WORKER_URL/v1/recall" \
  -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d "$body" \
  | awk '{printf "%.1f", $1 * 1000}')

log "wrk: ${SECS}s, $CONNS connection(s)"
out="$(BENCH_TOKEN="$TOKEN" BENCH_QUERIES="$WORK/queries.txt" \
  wrk -t1 -c"$CONNS" -d"${SECS}s" --timeout 10s -s "$ROOT/tests/worker/recall.lua" "$WORKER_URL" 2>&1)"
echo "$out" | grep -q "bad answer" && die "the worker returned a bad answer: $(echo "$out" | grep 'bad answer')"
read -r _ w50 w95 w99 wn werr <<<"$(echo "$out" | grep '^wrk:')"
[ "${werr:-1}" = 0 ] || die "wrk saw $werr errors: $out"

size="$(cat "$ROOT/target/edge-worker/size.txt")"
echo
echo "memloom edge worker benchmark: $N chunks (loaded in ${load_s}s), ${SECS}s per run, loopback"
printf '%-44s %8s %8s %8s %8s\n' "" "p50 ms" "p95 ms" "p99 ms" "calls"
printf '%-44s %8s %8s %8s %8s\n' "memloom_fuse direct (one connection)" "$d50" "$d95" "$d99" "$dn"
printf '%-44s %8s %8s %8s %8s\n' "memloom_fuse direct (connection per call)" "$f50" "$f95" "$f99" "$fn"
printf '%-44s %8s %8s %8s %8s\n' "worker POST /v1/recall (wrk, c=$CONNS)" "$w50" "$w95" "$w99" "$wn"
awk -v w="$w50" -v d="$d50" -v f="$f50" 'BEGIN {
  printf "overhead ratio worker p50 / direct p50: %.2fx (vs connection per call: %.2fx)\n", w / d, w / f }'
echo "cold start: wrangler dev start to ready ${ready_ms} ms; first recall ${first_ms} ms (second ${second_ms} ms); start to first answer ${cold_total_ms} ms"
echo "bundle: $size"
