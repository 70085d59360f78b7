#!/usr/bin/env bash
# The memloom demo through the npm CLI, offline, on a fresh embedded (PGlite) store: build what
# is needed, ingest the sample notes (examples/notes), save memories (one superseded, one new
# version), index entities, and run recalls that show the three arms with per-arm ranks.
#   bash npm/demo.sh [NOTES_DIR]      (store in a temp dir, removed at the end)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NOTES="${1:-$ROOT/examples/notes}"
bash "$ROOT/scripts/build-wasm.sh"

STORE="$(mktemp -d)/store"
# The store's warm process (docs/NPM.md) is stopped before its directory goes.
trap 'node "$ROOT/npm/bin/memloom.js" daemon stop --store "$STORE" >/dev/null 2>&1; rm -rf "$(dirname "$STORE")"' EXIT
memloom() { node "$ROOT/npm/bin/memloom.js" "$@" --store "$STORE"; }
say() { printf '\n\033[1m$ memloom %s\033[0m\n' "$*"; }

say init;                 memloom init
say ingest "$NOTES";      memloom ingest "$NOTES"
say remember '"Production runs Node 18.19 on the api-gateway hosts."' --key deploy-node-version
memloom remember "Production runs Node 18.19 on the api-gateway hosts." --key deploy-node-version
say remember '"Production runs Node 20.11 on the api-gateway hosts since the March upgrade."' --key deploy-node-version
memloom remember "Production runs Node 20.11 on the api-gateway hosts since the March upgrade." --key deploy-node-version
say remember '"Priya Nair owns the Postgres primary; page her for failovers."' --key db-owner
memloom remember "Priya Nair owns the Postgres primary; page her for failovers." --key db-owner
say index;                memloom index
say history deploy-node-version; memloom history deploy-node-version

for q in "pg_hba.conf" "ERR_REQUIRE_ESM" "why do we get sporadic 502s from the proxy" "which node version is production on" "who owns the database"; do
  say recall "\"$q\"" --limit 3 --explain
  memloom recall "$q" --limit 3 --explain
done
say stats; memloom stats
