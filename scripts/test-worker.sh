#!/usr/bin/env bash
# End-to-end test of the edge worker: builds it (scripts/build-worker.sh), starts a throwaway
# PostgreSQL 15 + pgvector (scripts/pg.sh; installed when missing), migrates and loads
# examples/notes into namespace team-a, makes tokens for team-a and team-b, runs the worker in
# workerd (wrangler dev) on a free 127.0.0.1 port, then runs tests/worker/*.test.mjs
# (node:test, one file at a time: e2e.test.mjs stops the database on purpose), then
# tests/worker/static/ (a static-v1 store) and tests/worker/small/ (the --no-static build).
# Everything started here is stopped on exit. Exit 0 when all tests pass.
# Also runs the native unit tests (cargo test -p edge-worker, with and without static-v1) first.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { echo "test-worker: $*" >&2; }
die() { echo "test-worker: error: $*" >&2; exit 2; }

command -v node >/dev/null || die "node not found: install Node.js 20"
command -v psql >/dev/null || bash scripts/pg.sh install

WORK="$(mktemp -d /tmp/memloom-worker-test.XXXXXX)"
export MEMLOOM_PG_STATE="$WORK/pg"
WRANGLER_PIDS=()
cleanup() {
  local rc=$?
  for pid in "${WRANGLER_PIDS[@]}"; do
    # wrangler was started with setsid: its process group is its own pid (workerd included).
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.3; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  bash "$ROOT/scripts/pg.sh" stop 2>/dev/null || true
  if [ $rc -ne 0 ]; then
    for f in "$WORK"/wrangler*.log; do
      [ -f "$f" ] || continue
      log "$(basename "$f"): errors, then the last 40 lines:"
      grep -nE 'panicked|Uncaught|RuntimeError|\bError\b|exception' "$f" | head -n 40 >&2 || true
      tail -n 40 "$f" >&2
    done
  fi
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT INT TERM

log "native unit tests (with static-v1, then without: the --no-static build's branches)"
cargo test -q -p edge-worker --lib >&2
cargo test -q -p edge-worker --lib --no-default-features >&2

bash scripts/pg.sh install
bash scripts/build-worker.sh
log "building the seed tool"
cargo build -q -p edge-worker --example seed >&2
SEED="$ROOT/target/debug/examples/seed"

URL="$(bash scripts/pg.sh start)"
"$SEED" ingest "$URL" team-a "$ROOT/examples/notes"

# The worker connects as an application role bound by row-level security (sql/memloom/10_security.sql),
# as in production: neither superuser nor BYPASSRLS, no CREATE. The tests keep the superuser
# URL (DATABASE_URL) for their own checks; APP_DATABASE_URL is the worker's.
psql -X -q -v ON_ERROR_STOP=1 "$URL" >&2 <<'SQL'
CREATE ROLE memloom_app LOGIN NOSUPERUSER NOBYPASSRLS;
GRANT USAGE ON SCHEMA public TO memloom_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO memloom_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO memloom_app;
-- The worker is the boundary between its tokens' tenants: its role may work in every
-- namespace (sql/memloom/10_security.sql; docs/SECURITY.md), one per transaction.
SELECT memloom_grant_namespace('memloom_app', '*');
SQL
APP_URL="${URL/postgres@/memloom_app@}"

# static-v2 (tests/worker/static/, run last): a second database, made as `memloom init
# --embedder static-v2` makes a server store (its token table loaded), for a second worker.
STATIC_URL="${URL%/*}/memloom_static"
psql -X -q -v ON_ERROR_STOP=1 "$URL" -c 'CREATE DATABASE memloom_static' >&2
"$SEED" static "$STATIC_URL" "$ROOT/crates/memloom-core/data/static-v1.bin" 2
psql -X -q -v ON_ERROR_STOP=1 "$STATIC_URL" >&2 <<'SQL'
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO memloom_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO memloom_app;
SELECT memloom_grant_namespace('memloom_app', '*');
SQL

# Two fresh random tokens; the worker gets only their SHA-256 hashes.
TOKEN_A="mlt_$(node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("hex"))')"
TOKEN_B="mlt_$(node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("hex"))')"
hash() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
umask 077
# A 2 s connect timeout (default 3 s): the test of a frozen database waits for it. A 30 s query
# deadline (default 5 s): 100 remembers of one key queue on its lock, and on a loaded machine the
# last ones can pass 5 s; a write whose deadline passes during COMMIT may be applied although the
# client got a 503 (docs/WORKER.md), which the concurrency test must not retry blindly.
printf 'DATABASE_URL=%s\nMEMLOOM_TOKENS={"%s":"team-a","%s":"team-b"}\nMEMLOOM_CONNECT_TIMEOUT_MS=2000\nMEMLOOM_QUERY_TIMEOUT_MS=30000\n' \
  "$APP_URL" "$(hash "$TOKEN_A")" "$(hash "$TOKEN_B")" > "$WORK/worker.env"

# shellcheck source=scripts/free-port.sh
source "$(dirname "${BASH_SOURCE[0]}")/free-port.sh"
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
unset CLOUDFLARE_API_TOKEN CLOUDFLARE_ACCOUNT_ID
# start_worker NAME ENV_FILE [ENTRY [STATUS]]: wrangler dev on a free loopback port (its scratch
# state and log under $WORK/NAME*) of the bundle in target/edge-worker/, or of ENTRY (another
# bundle's entry.mjs); ready when /v1/health answers STATUS (default 200; a misconfigured worker
# answers 500). Sets WORKER_URL and appends the pid to WRANGLER_PIDS.
start_worker() {
  local name=$1 env_file=$2 entry=${3:-} want=${4:-200} port started pid
  port="$(free_port)"
  log "starting wrangler dev ($name) on 127.0.0.1:$port"
  started=$(date +%s%N)
  mkdir -p "$WORK/$name"
  # Run from $WORK/NAME so wrangler's .wrangler/ scratch directory lands there.
  (cd "$WORK/$name" && exec setsid "$ROOT/crates/edge-worker/node_modules/.bin/wrangler" dev \
    ${entry:+"$entry"} --config "$ROOT/wrangler.toml" --ip 127.0.0.1 --port "$port" --local \
    --env-file "$env_file" --persist-to "$WORK/$name/state" \
    --show-interactive-dev-session=false --log-level info) > "$WORK/$name.log" 2>&1 &
  pid=$!
  WRANGLER_PIDS+=("$pid")
  WORKER_URL="http://127.0.0.1:$port"
  health() { curl -sS -m 2 -o /dev/null -w '%{http_code}' "$WORKER_URL/v1/health" 2>/dev/null || true; }
  for _ in $(seq 1 120); do
    [ "$(health)" = "$want" ] && break
    kill -0 "$pid" 2>/dev/null || die "wrangler ($name) exited during start"
    sleep 0.25
  done
  [ "$(health)" = "$want" ] || die "worker ($name) did not answer /v1/health with $want within 30 s"
  log "worker ($name) ready in $(( ($(date +%s%N) - started) / 1000000 )) ms (wrangler start + first request)"
}
start_worker wrangler "$WORK/worker.env"

# tests/worker/mcp.test.mjs drives /mcp with the official MCP SDK, from npm/node_modules.
[ -d npm/node_modules/@modelcontextprotocol/sdk ] || (cd npm && npm ci --no-audit --no-fund >&2)
# MEMLOOM_WORKER_TESTS: other test files (space-separated) against the same setup, e.g. the
# fault-injection load test of scripts/faults.sh.
if [ -n "${MEMLOOM_WORKER_TESTS:-}" ]; then read -r -a test_files <<< "$MEMLOOM_WORKER_TESTS"
else test_files=("$ROOT"/tests/worker/*.test.mjs); fi
WORKER_URL="$WORKER_URL" TOKEN_A="$TOKEN_A" TOKEN_B="$TOKEN_B" DATABASE_URL="$URL" APP_DATABASE_URL="$APP_URL" \
  WRANGLER_LOG="$WORK/wrangler.log" \
  node --test --test-concurrency=1 --test-reporter=spec "${test_files[@]}"

# The static-v2 worker (MEMLOOM_EMBEDDER) on the second database (static-v1 is the same code
# with other weights: memloom-sql's static_table test runs its path for both versions).
TOKEN_S="mlt_$(node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("hex"))')"
printf 'DATABASE_URL=%s\nMEMLOOM_TOKENS={"%s":"team-s"}\nMEMLOOM_EMBEDDER=static-v2\n' \
  "${STATIC_URL/postgres@/memloom_app@}" "$(hash "$TOKEN_S")" > "$WORK/worker-static.env"
start_worker wrangler-static "$WORK/worker-static.env"
WORKER_URL="$WORKER_URL" TOKEN_S="$TOKEN_S" DATABASE_URL="$STATIC_URL" \
  node --test --test-concurrency=1 --test-reporter=spec "$ROOT"/tests/worker/static/*.test.mjs

# The small build (build-worker.sh --no-static: no static-v1, the build the 300 KB budget is
# for) in a directory of its own, so target/edge-worker/ keeps the default build: one worker
# on the examples/notes store, one asked for static-v1 on the static-v1 store.
SMALL="$WORK/small-bundle"
MEMLOOM_WORKER_OUT="$SMALL" bash scripts/build-worker.sh --no-static
start_worker wrangler-small "$WORK/worker.env" "$SMALL/entry.mjs"
SMALL_URL="$WORKER_URL"
start_worker wrangler-small-static "$WORK/worker-static.env" "$SMALL/entry.mjs" 500
SMALL_STATIC_URL="$WORKER_URL"
WORKER_URL="$SMALL_URL" STATIC_WORKER_URL="$SMALL_STATIC_URL" TOKEN_A="$TOKEN_A" TOKEN_S="$TOKEN_S" \
  DATABASE_URL="$URL" \
  node --test --test-concurrency=1 --test-reporter=spec "$ROOT"/tests/worker/small/*.test.mjs

# No request may have leaked a token or the database URL into the log.
for f in "$WORK"/wrangler*.log; do
  if grep -qE "$TOKEN_A|$TOKEN_B|$TOKEN_S|postgres://" "$f"; then
    die "the worker log $(basename "$f") contains a token or the database URL"
  fi
done
log "passed"
