#!/usr/bin/env bash
# Fault injection (separate from `make test`: it restarts databases and kills processes).
#   1. SIGKILL the CLI in the middle of a large ingest, on an embedded store and on a server
#      store: the store is consistent and a re-run completes it (tests/faults/kill-ingest.test.mjs).
#   2. Mixed commands on ONE key through 8 CLI processes (remember, forget by key and by id,
#      history, recall): FAULTS_CLI_OPS (default 125, so 1,000 commands) each against the
#      server, FAULTS_EMBEDDED_OPS (default 25) each on an embedded store, where the lock
#      refuses all but one process at a time (npm/test/concurrency.test.js, "mixed commands").
#   3. The same mix through the worker: FAULTS_LOAD_REQUESTS (default 1000) REST and MCP
#      requests on one key, FAULTS_LOAD_IN_FLIGHT (default 16) in flight
#      (tests/worker/one-key-load.test.mjs; `make test` runs 400 of them).
#   4. A bounded load against the local worker (loopback; FAULTS_REQUESTS, default 3000, with
#      FAULTS_CONCURRENCY, default 8, in flight) while PostgreSQL is stopped for FAULTS_DOWN_MS
#      (default 3000) and started again on the same data directory and port: 503 while down,
#      recovery by itself, no acknowledged write lost (tests/faults/load.test.mjs, run through
#      scripts/test-worker.sh, which builds and starts the worker and a throwaway cluster).
# Figures go to stderr as `faults: ...` lines. Exit 0 when every check passes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { echo "faults: $*" >&2; }

bash scripts/pg.sh install
[ -f npm/wasm/memloom_wasm_bg.wasm ] || bash scripts/build-wasm.sh

log "1/4 SIGKILL during ingest"
export MEMLOOM_PG_STATE
MEMLOOM_PG_STATE="$(mktemp -d /tmp/memloom-faults-pg.XXXXXX)"
trap 'bash scripts/pg.sh stop 2>/dev/null || true; rm -rf "$MEMLOOM_PG_STATE"' EXIT
URL="$(bash scripts/pg.sh start)"
DATABASE_URL="$URL" node --test --test-reporter=spec tests/faults/kill-ingest.test.mjs

log "2/4 mixed commands on one key from 8 CLI processes (server and embedded)"
(cd npm && MEMLOOM_TEST_DATABASE_URL="$URL" MEMLOOM_LOAD_CLI_OPS="${FAULTS_CLI_OPS:-125}" \
  MEMLOOM_LOAD_EMBEDDED_OPS="${FAULTS_EMBEDDED_OPS:-25}" \
  node --test --test-reporter=spec --test-name-pattern "mixed commands" test/concurrency.test.js)
bash scripts/pg.sh stop 2>/dev/null || true
rm -rf "$MEMLOOM_PG_STATE"
trap - EXIT
unset MEMLOOM_PG_STATE

log "3/4 and 4/4: mixed requests on one key through the worker, then load with a PostgreSQL restart"
MEMLOOM_LOAD_REQUESTS="${FAULTS_LOAD_REQUESTS:-1000}" MEMLOOM_LOAD_IN_FLIGHT="${FAULTS_LOAD_IN_FLIGHT:-16}" \
  MEMLOOM_WORKER_TESTS="$ROOT/tests/worker/one-key-load.test.mjs $ROOT/tests/faults/load.test.mjs" \
  bash scripts/test-worker.sh
log "passed"
