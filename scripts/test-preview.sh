#!/usr/bin/env bash
# End-to-end test of the in-browser preview (npm/preview/test/) in Debian's Chromium, driven by
# playwright-core: build the wasm core (scripts/build-wasm.sh, idempotent; it also runs npm ci),
# build and serve the page, ingest examples/notes, recall, remember, reload, go offline, clear.
# Screenshots: target/preview/screenshot.png (laptop), screenshot-phone.png (phone width).
# When ../shared/eval/nodejs-docs is present, a second test ingests its corpus in the page and
# writes ingest time, recall latency and main-thread long tasks to target/preview/perf.json
# (about 2 minutes; MEMLOOM_PREVIEW_BENCH=0 skips it).
# Chromium is installed with apt-get when missing (as root); otherwise the tests are skipped.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { echo "test-preview: $*" >&2; }

bash "$ROOT/scripts/build-wasm.sh"

if [ ! -x "${MEMLOOM_CHROMIUM:-/usr/bin/chromium}" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    log "installing chromium (Debian)"
    apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >&2
  else
    log "warning: /usr/bin/chromium missing and not root: the preview tests will be skipped"
  fi
fi

mkdir -p "$ROOT/target/preview"
cd "$ROOT/npm"
node --test --test-concurrency=1 preview/test/
log "screenshots: $ROOT/target/preview/screenshot.png, $ROOT/target/preview/screenshot-phone.png"
