#!/usr/bin/env bash
# Fault injection (separate from `make test`: it restarts databases and kills processes).
#   1. SIGKILL the CLI in the middle of a large ingest, on an embedded store and on a server
#      store: the store is consistent and a re-run completes it (tests/faults/kill-ingest.test.mjs).
#   2. A bounded load against the local worker (loopback; FAULTS_REQUESTS, default 3000, with
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

log "1/2 SIGKILL during ingest"
export MEMLOOM_PG_STATE
MEMLOOM_PG_STATE="$(mktemp -d /tmp/memloom-faults-pg.XXXXXX)"
trap 'bash scripts/pg.sh stop 2>/dev/null || true; rm -rf "$MEMLOOM_PG_STATE"' EXIT
DATABASE_URL="$(bash scripts/pg.sh start)" node --test --test-reporter=spec tests/faults/kill-ingest.test.mjs
bash scripts/pg.sh stop 2>/dev/null || true
rm -rf "$MEMLOOM_PG_STATE"
trap - EXIT
unset MEMLOOM_PG_STATE

log "2/2 load on the worker with a PostgreSQL restart"
MEMLOOM_WORKER_TESTS="$ROOT/tests/faults/load.test.mjs" bash scripts/test-worker.sh
log "passed"
