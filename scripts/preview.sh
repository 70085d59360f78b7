#!/usr/bin/env bash
# The in-browser preview: builds the page (npm/preview/build.mjs -> npm/preview/dist, after the
# wasm core via scripts/build-wasm.sh when it is missing) and serves it on 127.0.0.1.
#   bash scripts/preview.sh [--port N]     (default 8787; 0 picks a free port)
# Prints the URL on stdout; Ctrl-C stops the server.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { echo "preview: $*" >&2; }

if [ ! -f "$ROOT/npm/wasm/memloom_wasm_bg.wasm" ] || [ ! -d "$ROOT/npm/node_modules/@electric-sql/pglite" ] || [ ! -d "$ROOT/npm/node_modules/esbuild" ]; then
  log "building the wasm core and installing npm packages (scripts/build-wasm.sh)"
  bash "$ROOT/scripts/build-wasm.sh" >&2
fi
node "$ROOT/npm/preview/build.mjs"
log "open the URL below in a browser; Ctrl-C stops the server"
exec node "$ROOT/npm/preview/serve.mjs" "$@"
