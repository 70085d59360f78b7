#!/usr/bin/env bash
# memloom sharded across PostgreSQL servers with PL/Proxy (docs/SCALING.md), end to end on real
# clusters: installs PostgreSQL 15 + pgvector + PL/Proxy when missing (scripts/pg.sh
# install-plproxy), builds the npm package (scripts/build-wasm.sh), starts 2 partitions, a proxy
# and one plain server (the reference) on free 127.0.0.1 ports, sets the proxy up with
# scripts/memloom-shard.mjs setup, runs tests/scale/*.test.mjs and memloom-sql's proxy tests (the
# edge worker's calls) and stops every cluster at the end, even on failure. State under target/scale/ (MEMLOOM_SCALE_DIR to change it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { echo "test-scale: $*" >&2; }

bash scripts/pg.sh install-plproxy
bash scripts/build-wasm.sh

STATE="${MEMLOOM_SCALE_DIR:-$ROOT/target/scale}"
mkdir -p "$STATE"
CLUSTERS=(p0 p1 proxy single)
cleanup() {
  for c in "${CLUSTERS[@]}"; do MEMLOOM_PG_STATE="$STATE/pg-$c" bash scripts/pg.sh stop || true; done
}
trap cleanup EXIT
declare -A URL
for c in "${CLUSTERS[@]}"; do
  URL[$c]="$(MEMLOOM_PG_STATE="$STATE/pg-$c" bash scripts/pg.sh start)"
done
log "partitions ${URL[p0]} ${URL[p1]}, proxy ${URL[proxy]}, one server ${URL[single]}"

node scripts/memloom-shard.mjs setup --proxy "${URL[proxy]}" --partition "${URL[p0]}" --partition "${URL[p1]}"

export MEMLOOM_SCALE_PROXY="${URL[proxy]}"
export MEMLOOM_SCALE_PARTITIONS="${URL[p0]},${URL[p1]}"
export MEMLOOM_SCALE_SINGLE="${URL[single]}"
node --test --test-concurrency=1 tests/scale/

# The edge worker's store path (memloom-sql, as crates/edge-worker calls it) through the proxy.
MEMLOOM_TEST_PROXY_URL="${URL[proxy]}" cargo test -p memloom-sql --test tests proxy:: -- --nocapture
