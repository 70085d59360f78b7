#!/usr/bin/env bash
# Export and import figures (npm/bench/export.js, `make bench-export`): the Node docs store
# (../shared/eval/nodejs-docs when present; said plainly when absent) exported and imported on
# the embedded store, time and size beside building it; then generated dumps of 100k and 1M
# lines imported into a throwaway PostgreSQL 15 + pgvector cluster of its own (stopped at the
# end, even on failure), each by a child process reporting its peak RSS. Not part of make test.
#
#   MEMLOOM_BENCH_DATABASE_URL=postgres://...   use that server (an empty database) instead
#   MEMLOOM_BENCH_ARGS="--lines 200000"         extra arguments for npm/bench/export.js
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { echo "bench-export: $*" >&2; }

bash scripts/build-wasm.sh

url="${MEMLOOM_BENCH_DATABASE_URL:-}"
if [ -z "$url" ]; then
  export MEMLOOM_PG_STATE="$ROOT/target/pg-bench-export"
  bash scripts/pg.sh install
  trap 'bash "$ROOT/scripts/pg.sh" stop || true' EXIT
  url="$(bash scripts/pg.sh start)"
  log "server: $url"
fi
# shellcheck disable=SC2086
node npm/bench/export.js --url "$url" ${MEMLOOM_BENCH_ARGS:-}
