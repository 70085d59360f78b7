#!/usr/bin/env bash
# Make sure `wasm-bindgen` on PATH is exactly the wasm-bindgen library version locked in
# Cargo.lock (the CLI and the library must be equal). Installs it with cargo only when it
# differs (about 4 minutes), so repeated runs are instant. Adds the wasm32 target if missing.
# Prints nothing on stdout; callers should `export PATH="$HOME/.cargo/bin:$PATH"` too.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { echo "ensure-wasm-bindgen: $*" >&2; }
die() { echo "ensure-wasm-bindgen: error: $*" >&2; exit 2; }

command -v cargo >/dev/null || die "cargo not found: install Rust (rustup) first"
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown >&2
fi

want="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock")"
[ -n "$want" ] || die "wasm-bindgen not found in Cargo.lock"
export PATH="$HOME/.cargo/bin:$PATH"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have" != "$want" ]; then
  log "installing wasm-bindgen-cli $want (have: ${have:-none}; takes about 4 minutes)"
  # No --locked: one of its locked dependencies is missing from the registry mirror.
  cargo install wasm-bindgen-cli --version "$want" >&2
fi
