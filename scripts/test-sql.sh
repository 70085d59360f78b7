#!/usr/bin/env bash
# The SQL layer's tests on a real PostgreSQL 15 + pgvector: installs it when missing, starts a
# throwaway cluster, runs the regression files (tests/sql/*.sql vs tests/sql/expected/*.out)
# and the memloom-sql integration tests, and stops the cluster at the end, even on failure.
#   UPDATE_EXPECTED=1 bash scripts/test-sql.sh   rewrites the expected outputs (review the diff)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PSQL=/usr/lib/postgresql/15/bin/psql

bash scripts/pg.sh install
# A private state directory: concurrent runs each get their own cluster.
MEMLOOM_PG_STATE="$(mktemp -d /tmp/memloom-test-sql.XXXXXX)"
export MEMLOOM_PG_STATE
cleanup() {
  bash "$ROOT/scripts/pg.sh" stop || true
  rm -rf "$MEMLOOM_PG_STATE"
}
trap cleanup EXIT
URL="$(bash scripts/pg.sh start)"

status=0
mkdir -p target/sql-tests
for sql in tests/sql/*.sql; do
  [ -e "$sql" ] || continue
  name="$(basename "$sql" .sql)"
  db="memloom_regress_${name}"
  "$PSQL" -X -q "$URL" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  db_url="${URL%/*}/$db"
  # The schema as a fresh install has it: the current definition in one transaction
  # (crates/memloom-sql's catalog test proves the frozen migrations give the same).
  parts=()
  for f in sql/memloom/[0-9][0-9]_*.sql; do parts+=(-f "$f"); done
  "$PSQL" -X -q -v ON_ERROR_STOP=1 -1 "$db_url" "${parts[@]}" >/dev/null
  out="target/sql-tests/$name.out"
  "$PSQL" -X -a -q "$db_url" -v VERBOSITY=terse -f "$sql" >"$out" 2>&1 || true
  expected="tests/sql/expected/$name.out"
  if [ "${UPDATE_EXPECTED:-}" = 1 ]; then
    cp "$out" "$expected"
    echo "test-sql: wrote $expected" >&2
  elif diff -u "$expected" "$out"; then
    echo "test-sql: $name ok" >&2
  else
    echo "test-sql: $name FAILED (output differs from $expected)" >&2
    status=1
  fi
done

MEMLOOM_REQUIRE_PG=1 MEMLOOM_TEST_DATABASE_URL="$URL" cargo test -p memloom-sql || status=1
exit "$status"
