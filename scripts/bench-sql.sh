#!/usr/bin/env bash
# Recall latency on a real PostgreSQL 15 + pgvector (crates/memloom-sql/benches/latency/):
# installs PostgreSQL + pgvector when missing, starts a throwaway cluster of its own, loads N
# items per size and times memloom_fuse against the other query shapes, and stops the cluster at
# the end, even on failure. Results go to stdout (markdown tables), progress to stderr.
#
#   bash scripts/bench-sql.sh                 sizes 100000 and 1000000 (about an hour on 2 cores:
#                                             every shape runs as the app role and the superuser)
#   bash scripts/bench-sql.sh 20000           one quick size (also: MEMLOOM_BENCH_SIZES=20000)
#   MEMLOOM_BENCH_SHARED_BUFFERS=2GB          the cluster's shared_buffers (default 2GB)
#   MEMLOOM_BENCH_ROLES=app,superuser         who runs the shapes (default: an RLS-bound app
#                                             role, then the superuser as the comparison row)
#   MEMLOOM_BENCH_SCHEMA=7                    only migrations up to 0007 (figures before a migration)
#   MEMLOOM_BENCH_KEEP_DIR=target/pg-bench    keep the cluster and its loaded databases after the
#                                             run (state in that directory) and reuse them next
#                                             time: a 1M load (about 40 min here) happens once;
#                                             pending migrations still apply. Stop it with
#                                             MEMLOOM_PG_STATE=<dir> bash scripts/pg.sh stop
#   MEMLOOM_BENCH_SHAPES=fuse,vector          only these shapes (fuse, vector, keyword,
#                                             keyword-fuse, fixed, client, copied); none = load only
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PG_BIN=/usr/lib/postgresql/15/bin

if [ ! -d "$ROOT/../shared/eval/nodejs-docs/corpus" ]; then
  echo "bench-sql: skipped: $ROOT/../shared/eval/nodejs-docs/corpus is not there (the eval set lives beside the checkout)"
  exit 0
fi

SIZES="${1:-${MEMLOOM_BENCH_SIZES:-100000,1000000}}"
bash scripts/pg.sh install
if [ -n "${MEMLOOM_BENCH_KEEP_DIR:-}" ]; then
  # A kept cluster: started once, reused (with its loaded databases) by later runs.
  mkdir -p "$MEMLOOM_BENCH_KEEP_DIR"
  MEMLOOM_PG_STATE="$(cd "$MEMLOOM_BENCH_KEEP_DIR" && pwd)"
  export MEMLOOM_PG_STATE MEMLOOM_BENCH_REUSE=1
  fresh=1
  [ -f "$MEMLOOM_PG_STATE/url" ] && bash scripts/pg.sh url >/dev/null 2>&1 && fresh=0
  URL="$(bash scripts/pg.sh start)"
  echo "bench-sql: keeping the cluster at $URL (MEMLOOM_BENCH_KEEP_DIR=$MEMLOOM_PG_STATE; stop: MEMLOOM_PG_STATE=$MEMLOOM_PG_STATE bash scripts/pg.sh stop)" >&2
else
  # A private cluster, apart from the test suite's.
  MEMLOOM_PG_STATE="$(mktemp -d /tmp/memloom-bench-sql.XXXXXX)"
  export MEMLOOM_PG_STATE
  cleanup() {
    bash "$ROOT/scripts/pg.sh" stop || true
    rm -rf "$MEMLOOM_PG_STATE"
  }
  trap cleanup EXIT
  URL="$(bash scripts/pg.sh start)"
  fresh=1
fi

if [ "$fresh" = 1 ]; then
  # Room for the 1M-row HNSW index (about 1 GB) in shared buffers; pg_ctl restart keeps the
  # start options (port, socket, fsync off) from postmaster.opts.
  "$PG_BIN/psql" -X -q "$URL" -c "ALTER SYSTEM SET shared_buffers = '${MEMLOOM_BENCH_SHARED_BUFFERS:-2GB}'" \
    -c "ALTER SYSTEM SET max_wal_size = '8GB'" -c "ALTER SYSTEM SET checkpoint_timeout = '30min'"
  DATA="$(cat "$MEMLOOM_PG_STATE/datadir")"
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$DATA" -w -t 120 restart >/dev/null
  else
    "$PG_BIN/pg_ctl" -D "$DATA" -w -t 120 restart >/dev/null
  fi
fi

echo "bench-sql: sizes $SIZES on $("$PG_BIN/psql" -X -qAt "$URL" -c "SELECT version()" | cut -d, -f1), pgvector $("$PG_BIN/psql" -X -qAt "$URL" -c "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"), $(nproc) cores" >&2
MEMLOOM_BENCH_SIZES="$SIZES" MEMLOOM_BENCH_DATABASE_URL="$URL" \
  cargo bench -q -p memloom-sql --bench latency
