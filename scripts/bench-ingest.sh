#!/usr/bin/env bash
# Ingest throughput before and after, in one process (npm/bench/ingest.js): the Node docs
# (../shared/eval/nodejs-docs when present) and a generated corpus of many small files, on the
# embedded store and on a throwaway PostgreSQL 15 + pgvector cluster of its own (stopped at the
# end, even on failure); then the same ingest through a stand-in embeddings API with 1 and 4
# requests in flight (npm/bench/embed-api.js). Figures and ratios go to stdout; nothing is
# asserted but correctness (the runs compared must store the same items and recall the same
# results).
#
#   bash scripts/bench-ingest.sh                       baseline: the commit before sql/0013
#   MEMLOOM_BENCH_BASELINE=<git ref>                   another baseline (a commit of this repo)
#   MEMLOOM_BENCH_ARGS="--rounds 3 --small 5000 --probe"   extra arguments for npm/bench/ingest.js
#   MEMLOOM_BENCH_DATABASE_URL=postgres://...          use that server instead of a private cluster
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { echo "bench-ingest: $*" >&2; }

bash scripts/build-wasm.sh

# The baseline package: the npm/ and sql/ of that commit, with this checkout's wasm build and
# node_modules (the core is the same; only the store's write path is compared).
ref="${MEMLOOM_BENCH_BASELINE:-}"
if [ -z "$ref" ]; then
  added="$(git log --format=%H --diff-filter=A -1 -- sql/migrations/0013_bulk_writes.sql sql/0013_bulk_writes.sql)"
  ref="${added}^"
fi
sha="$(git rev-parse --short "$ref")"
base="$ROOT/target/bench-ingest/baseline-$sha"
if [ ! -f "$base/npm/sql/migrations.js" ]; then
  log "preparing the baseline package from $ref ($sha)"
  rm -rf "$base" && mkdir -p "$base"
  git archive "$ref" npm sql | tar -x -C "$base"
  ln -s "$ROOT/npm/node_modules" "$base/npm/node_modules"
  cp -r "$ROOT/npm/wasm" "$ROOT/npm/data" "$base/npm/"
  mkdir -p "$base/npm/sql"
  cp "$base"/sql/[0-9]*.sql "$base/npm/sql/"
  node "$ROOT/npm/src/gen-migrations.js" "$base/npm/sql" > "$base/npm/sql/migrations.js"
fi

url="${MEMLOOM_BENCH_DATABASE_URL:-}"
if [ -z "$url" ]; then
  bash scripts/pg.sh install
  MEMLOOM_PG_STATE="$ROOT/target/pg-bench-ingest"
  export MEMLOOM_PG_STATE
  trap 'bash "$ROOT/scripts/pg.sh" stop || true' EXIT
  url="$(bash scripts/pg.sh start)"
fi

# shellcheck disable=SC2086
node npm/bench/ingest.js --baseline "$base/npm" --url "$url" ${MEMLOOM_BENCH_ARGS:-}

# Through an embeddings API that answers in network time: requests one at a time against the
# default number in flight (npm/bench/embed-api.js; a stand-in API on 127.0.0.1).
node npm/bench/embed-api.js
