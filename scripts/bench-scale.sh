#!/usr/bin/env bash
# The sharded deployment's figures (docs/SCALING.md, docs/BENCHMARKS.md "Sharded"): for 2 and
# then 4 partitions behind a PL/Proxy front, recall p50 through the proxy next to the owning
# partition directly and the hop alone (a trivial routed call), same process, interleaved,
# overhead and ratio; with 4, a bounded mixed recall / remember load through the proxy next to
# one plain server holding the same namespaces, in alternating rounds (ops/s, per core). Every
# server is made quiet (autovacuum done, the pool vacuumed) before each timed phase; the load
# average is printed next to every figure, and all figures again at the end, with `uptime`.
# All clusters on 127.0.0.1 (free ports), started here and stopped at the end. Reads
# ../shared/eval/nodejs-docs when present (says so when absent). Not part of `make test`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/pg.sh install-plproxy
bash scripts/build-wasm.sh

STATE="${MEMLOOM_SCALE_DIR:-$ROOT/target/bench-scale}"
mkdir -p "$STATE"
SUMMARY="$STATE/summary.txt"
: >"$SUMMARY"
echo "start: $(uptime)" >>"$SUMMARY"
started=()
stop_all() {
  for c in "${started[@]}"; do MEMLOOM_PG_STATE="$STATE/pg-$c" bash scripts/pg.sh stop || true; done
  started=()
}
trap stop_all EXIT
# Not in a subshell: the list of started clusters must reach stop_all.
start() {
  started+=("$1")
  MEMLOOM_PG_STATE="$STATE/pg-$1" bash scripts/pg.sh start >"$STATE/url-$1"
  url="$(cat "$STATE/url-$1")"
}

# MEMLOOM_BENCH_PARTITION_COUNTS="2 4" (default) runs each layout on fresh clusters;
# MEMLOOM_BENCH_MIXED=0 measures the latency only (no one-server baseline).
for n in ${MEMLOOM_BENCH_PARTITION_COUNTS:-2 4}; do
  parts=()
  for ((p = 0; p < n; p++)); do start "p$p"; parts+=("$url"); done
  start proxy
  proxy="$url"
  single=""
  if [ "$n" = 4 ] && [ "${MEMLOOM_BENCH_MIXED:-1}" != 0 ]; then start single; single="$url"; fi
  args=()
  for u in "${parts[@]}"; do args+=(--partition "$u"); done
  node scripts/memloom-shard.mjs setup --proxy "$proxy" "${args[@]}"
  MEMLOOM_BENCH_PROXY="$proxy" MEMLOOM_BENCH_PARTITIONS="$(IFS=,; echo "${parts[*]}")" \
    MEMLOOM_BENCH_SINGLE="$single" MEMLOOM_BENCH_LABEL="$n partitions" MEMLOOM_BENCH_SUMMARY="$SUMMARY" \
    node tests/scale/bench.mjs
  stop_all
done
echo "end: $(uptime)" >>"$SUMMARY"
echo "bench-scale: summary ($(nproc) cores; the load average is the 1-minute one)"
cat "$SUMMARY"
