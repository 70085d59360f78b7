#!/usr/bin/env bash
# Tests of the npm package `memloom`: builds the wasm and the package (scripts/build-wasm.sh),
# then runs `node --test` in npm/ (golden vectors through the wasm, the core API, the CLI end
# to end on an embedded PGlite store, and the same data on a real PostgreSQL server).
#
# The server test uses MEMLOOM_TEST_DATABASE_URL when set; otherwise this script installs
# (scripts/pg.sh install, idempotent) and starts a throwaway PostgreSQL 15 + pgvector cluster,
# and stops it at the end. MEMLOOM_TEST_PG=0 skips the server test instead.
# The browser smoke test needs Debian's Chromium: installed with apt-get when missing (as root);
# MEMLOOM_TEST_BROWSER=0 skips it. zsh (the completion test) likewise, when missing and root.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { echo "test-npm: $*" >&2; }

bash "$ROOT/scripts/build-wasm.sh"

if [ -z "${MEMLOOM_TEST_DATABASE_URL:-}" ] && [ "${MEMLOOM_TEST_PG:-1}" != 0 ]; then
  export MEMLOOM_PG_STATE="$ROOT/target/pg-npm"
  bash "$ROOT/scripts/pg.sh" install
  trap 'bash "$ROOT/scripts/pg.sh" stop || true' EXIT
  MEMLOOM_TEST_DATABASE_URL="$(bash "$ROOT/scripts/pg.sh" start)"
  export MEMLOOM_TEST_DATABASE_URL
  log "server tests against $MEMLOOM_TEST_DATABASE_URL"
fi

if [ "${MEMLOOM_TEST_BROWSER:-1}" != 0 ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" -eq 0 ]; then
    log "installing chromium (Debian) for the browser smoke test"
    apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >&2
  else
    log "warning: /usr/bin/chromium missing and not root: the browser test will be skipped"
  fi
fi
if [ "${MEMLOOM_TEST_BROWSER:-1}" = 0 ]; then export MEMLOOM_CHROMIUM=/nonexistent; fi

# zsh, for the test that the zsh completion script loads (cli-ux.test.js skips it, saying so,
# when zsh is absent); bash is always there.
if ! command -v zsh >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then
    log "installing zsh (Debian) for the completion test"
    apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends zsh >&2 || log "warning: could not install zsh: its completion test will be skipped"
  else
    log "warning: zsh missing and not root: its completion test will be skipped"
  fi
fi

cd "$ROOT/npm"
node --test --test-concurrency=1 test/
