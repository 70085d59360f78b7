#!/usr/bin/env bash
# Latency of the edge worker's POST /v1/recall over loopback (wrk, in workerd via wrangler dev)
# next to the same memloom_fuse called directly from native Rust, on BENCH_N chunks of real
# text (the Node.js docs in ../shared/eval/nodejs-docs, repeated with a per-copy suffix until N
# rows are stored), plus cold start. Everything runs as the production role: memloom_app, bound
# by row-level security (neither superuser nor BYPASSRLS; the superuser's direct figure is a
# comparison row only). The worker runs once straight to PostgreSQL (a new connection per
# request, as a Worker without a pooler) and once through PgBouncer in transaction mode (what
# Hyperdrive provides in production; Debian's pgbouncer, installed when missing). Prints a table
# and the overhead ratio worker p50 / direct memloom_fuse p50 under the same role (target for
# the pooled worker: <= 1.2x). Needs ../shared/eval (says so and exits 2 when it is absent).
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
BOUNCER_PID=""
cleanup() {
  local rc=$?
  stop_wrangler 2>/dev/null || true
  [ -n "$BOUNCER_PID" ] && kill -TERM -- "-$BOUNCER_PID" 2>/dev/null || true
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

# The production role (as scripts/test-worker.sh and docs/SECURITY.md): bound by row-level
# security, granted every namespace because the worker picks each request's namespace.
psql -X -q -v ON_ERROR_STOP=1 "$URL" >&2 <<'SQL'
CREATE ROLE memloom_app LOGIN NOSUPERUSER NOBYPASSRLS;
GRANT USAGE ON SCHEMA public TO memloom_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO memloom_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO memloom_app;
SELECT memloom_grant_namespace('memloom_app', '*');
SQL
APP_URL="${URL/postgres@/memloom_app@}"

log "direct memloom_fuse as the superuser, one connection, ${SECS}s (comparison)"
read -r s50 s95 s99 sn <<<"$("$SEED" fuse "$URL" bench "$EVAL/queries.jsonl" "$SECS")"
log "direct memloom_fuse as memloom_app, one connection, ${SECS}s"
read -r d50 d95 d99 dn <<<"$("$SEED" fuse "$APP_URL" bench "$EVAL/queries.jsonl" "$SECS")"
log "direct memloom_fuse as memloom_app, a fresh connection per call, ${SECS}s"
read -r f50 f95 f99 fn <<<"$("$SEED" fuse "$APP_URL" bench "$EVAL/queries.jsonl" "$SECS" --fresh)"

TOKEN="mlt_$(node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("hex"))')"
HASH="$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)"
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
unset CLOUDFLARE_API_TOKEN CLOUDFLARE_ACCOUNT_ID
# shellcheck source=scripts/free-port.sh
source "$(dirname "${BASH_SOURCE[0]}")/free-port.sh"
stop_wrangler() {
  [ -n "$WRANGLER_PID" ] || return 0
  kill -TERM -- "-$WRANGLER_PID" 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$WRANGLER_PID" 2>/dev/null || break; sleep 0.3; done
  kill -KILL -- "-$WRANGLER_PID" 2>/dev/null || true
  WRANGLER_PID=""
}
body='{"query":"ERR_REQUIRE_ESM","limit":10}'
post_ms() {
  curl -fsS -o /dev/null -w '%{time_total}' -X POST "$1/v1/recall" -H "authorization: Bearer $TOKEN" \
    -H 'content-type: application/json' -d "$body" | awk '{printf "%.1f", $1 * 1000}'
}

# run_worker LABEL DATABASE_URL: start wrangler dev on it, time the cold start, run wrk.
# Sets COLD (a sentence) and W50 W95 W99 WN.
run_worker() {
  local label="$1" db="$2" port url start_ns ready_ms first_ms second_ms out werr
  umask 077
  printf 'DATABASE_URL=%s\nMEMLOOM_TOKENS={"%s":"bench"}\n' "$db" "$HASH" > "$WORK/worker.env"
  port="$(free_port)"
  url="http://127.0.0.1:$port"
  start_ns=$(date +%s%N)
  (cd "$WORK" && exec setsid "$ROOT/crates/edge-worker/node_modules/.bin/wrangler" dev \
    --config "$ROOT/wrangler.toml" --ip 127.0.0.1 --port "$port" --local \
    --env-file "$WORK/worker.env" --persist-to "$WORK/state" \
    --show-interactive-dev-session=false) > "$WORK/wrangler.log" 2>&1 &
  WRANGLER_PID=$!
  until grep -q "Ready on" "$WORK/wrangler.log" 2>/dev/null; do
    kill -0 "$WRANGLER_PID" 2>/dev/null || die "wrangler exited: $(tail -5 "$WORK/wrangler.log")"
    [ $(( ($(date +%s%N) - start_ns) / 1000000000 )) -lt 60 ] || die "wrangler not ready in 60 s"
    sleep 0.05
  done
  ready_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
  first_ms="$(post_ms "$url")"
  second_ms="$(post_ms "$url")"
  COLD="wrangler dev start to ready ${ready_ms} ms; first recall ${first_ms} ms, second ${second_ms} ms"
  log "wrk ($label): ${SECS}s, $CONNS connection(s)"
  out="$(BENCH_TOKEN="$TOKEN" BENCH_QUERIES="$WORK/queries.txt" \
    wrk -t1 -c"$CONNS" -d"${SECS}s" --timeout 10s -s "$ROOT/tests/worker/recall.lua" "$url" 2>&1)"
  if echo "$out" | grep -q "bad answer"; then die "bad answer: $(echo "$out" | grep 'bad answer')"; fi
  read -r _ W50 W95 W99 WN werr <<<"$(echo "$out" | grep '^wrk:')"
  [ "${werr:-1}" = 0 ] || die "wrk saw ${werr:-?} errors: $out"
  stop_wrangler
}

run_worker "direct to PostgreSQL" "$APP_URL"
COLD_PG="$COLD"; P50="$W50"; P95="$W95"; P99="$W99"; PN="$WN"

# Through PgBouncer in transaction mode: what Hyperdrive does in production (warm server
# sessions, a cheap connect for the worker). Skipped when pgbouncer cannot be installed.
B50=""
if command -v pgbouncer >/dev/null || apt-get install -y -q --no-install-recommends pgbouncer >&2; then
  BPORT="$(free_port)"
  PGPORT="$(cat "$MEMLOOM_PG_STATE/port")"
  mkdir -p "$WORK/bouncer" && chmod 755 "$WORK" "$WORK/bouncer"
  printf '"memloom_app" ""\n' > "$WORK/bouncer/userlist.txt"
  cat > "$WORK/bouncer/pgbouncer.ini" <<INI
[databases]
memloom = host=127.0.0.1 port=$PGPORT dbname=memloom user=memloom_app
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BPORT
unix_socket_dir =
auth_type = trust
auth_file = $WORK/bouncer/userlist.txt
pool_mode = transaction
default_pool_size = 4
max_client_conn = 200
logfile = $WORK/bouncer/pgbouncer.log
INI
  chmod 644 "$WORK/bouncer/"*
  [ "$(id -u)" -eq 0 ] && chown -R postgres "$WORK/bouncer"
  if [ "$(id -u)" -eq 0 ]; then
    setsid runuser -u postgres -- pgbouncer "$WORK/bouncer/pgbouncer.ini" >/dev/null 2>&1 &
  else
    setsid pgbouncer "$WORK/bouncer/pgbouncer.ini" >/dev/null 2>&1 &
  fi
  BOUNCER_PID=$!
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$BPORT") 2>/dev/null && break; sleep 0.1; done
  run_worker "through PgBouncer" "postgres://memloom_app@127.0.0.1:$BPORT/memloom"
  COLD_B="$COLD"; B50="$W50"; B95="$W95"; B99="$W99"; BN="$WN"
  kill -TERM -- "-$BOUNCER_PID" 2>/dev/null || true
  BOUNCER_PID=""
fi

size="$(cat "$ROOT/target/edge-worker/size.txt")"
echo
echo "memloom edge worker benchmark: $N chunks (loaded in ${load_s}s), ${SECS}s per run, loopback, c=$CONNS"
echo "every row but the first runs as memloom_app (row-level security applies)"
printf '%-52s %8s %8s %8s %8s\n' "" "p50 ms" "p95 ms" "p99 ms" "calls"
printf '%-52s %8s %8s %8s %8s\n' "memloom_fuse direct, superuser (comparison)" "$s50" "$s95" "$s99" "$sn"
printf '%-52s %8s %8s %8s %8s\n' "memloom_fuse direct (one warm connection)" "$d50" "$d95" "$d99" "$dn"
printf '%-52s %8s %8s %8s %8s\n' "memloom_fuse direct (a new connection per call)" "$f50" "$f95" "$f99" "$fn"
printf '%-52s %8s %8s %8s %8s\n' "worker /v1/recall -> PostgreSQL (new conn/request)" "$P50" "$P95" "$P99" "$PN"
[ -n "$B50" ] && printf '%-52s %8s %8s %8s %8s\n' "worker /v1/recall -> PgBouncer -> PostgreSQL" "$B50" "$B95" "$B99" "$BN"
awk -v w="$P50" -v d="$d50" -v f="$f50" -v b="${B50:-0}" 'BEGIN {
  printf "overhead ratio, worker p50 / direct memloom_fuse p50 (same role, warm connection): %.2fx direct to PostgreSQL", w / d
  if (b > 0) printf ", %.2fx through PgBouncer (target <= 1.20x)", b / d
  printf "; worker direct to PostgreSQL / direct with a new connection per call: %.2fx\n", w / f }'
echo "cold start (to PostgreSQL): $COLD_PG"
[ -n "$B50" ] && echo "cold start (PgBouncer):     $COLD_B"
echo "bundle: $size"
