#!/usr/bin/env bash
# Build the WebAssembly core and the npm package `memloom` in npm/. Idempotent and quiet when
# nothing changed: the wasm-bindgen CLI is installed only when its version differs from the
# wasm-bindgen library locked in Cargo.lock (they must be equal), cargo builds incrementally,
# and `npm ci` runs only when npm/node_modules is older than npm/package-lock.json.
#
# Output (gitignored): npm/wasm/ (wasm-bindgen --target web glue + .wasm), npm/schema/ (the
# recall response's JSON Schema as a module), npm/sql/ (the schema, sql/memloom/ and
# sql/migrations/, copied and bundled as npm/sql/migrations.js, the one form the package ships,
# with the migrations' versions and checksums alone in npm/sql/ledger.js), npm/data/ (static-v1's
# token table, the store template), npm/types/ (the .d.ts files, generated from the JSDoc) and
# the licence texts.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { echo "build-wasm: $*" >&2; }
die() { echo "build-wasm: error: $*" >&2; exit 2; }

command -v cargo >/dev/null || die "cargo not found: install Rust (rustup) first"
command -v node >/dev/null || die "node not found: install Node.js 20 or newer"

# The wasm32 target and the wasm-bindgen CLI at the library's locked version (shared helper).
bash "$ROOT/scripts/ensure-wasm-bindgen.sh"
export PATH="$HOME/.cargo/bin:$PATH"

log "cargo build -p memloom-wasm (wasm32, release)"
cargo build -q -p memloom-wasm --target wasm32-unknown-unknown --release >&2

# --target web: plain ES module glue with `initSync({ module })` and an async default `init`,
# which Node (bytes from disk), browsers (fetch) and workerd (imported WebAssembly.Module) all use.
out="$ROOT/npm/wasm"
rm -rf "$out.tmp"
wasm-bindgen --target web --out-dir "$out.tmp" --no-typescript \
  --remove-name-section --remove-producers-section \
  target/wasm32-unknown-unknown/release/memloom_wasm.wasm
rm -rf "$out" && mv "$out.tmp" "$out"

# The package carries the schema it applies (current definition and frozen migrations).
rm -rf "$ROOT/npm/sql" && mkdir -p "$ROOT/npm/sql/migrations" "$ROOT/npm/sql/memloom"
cp "$ROOT"/sql/migrations/[0-9]*.sql "$ROOT/npm/sql/migrations/"
cp "$ROOT"/sql/memloom/[0-9]*.sql "$ROOT/npm/sql/memloom/"
if [ -f "$ROOT/sql/README.md" ]; then cp "$ROOT/sql/README.md" "$ROOT/npm/sql/"; fi
# ... and as an ES module, so browsers and bundlers get them without file system access.
node "$ROOT/npm/src/gen-migrations.js" "$ROOT/npm/sql" > "$ROOT/npm/sql/migrations.js"
# ... and their versions and checksums alone, which is all an open of a current store reads.
node "$ROOT/npm/src/gen-migrations.js" "$ROOT/npm/sql" --ledger > "$ROOT/npm/sql/ledger.js"

# The recall response's JSON Schema and the request limits (schema/README.md), as ES modules:
# tools.js builds the MCP recall tool's output schema and its input limits from them.
rm -rf "$ROOT/npm/schema" && mkdir -p "$ROOT/npm/schema"
for f in recall-response limits; do
  node "$ROOT/npm/src/gen-schema.js" "$ROOT/schema/$f.json" > "$ROOT/npm/schema/$f.js"
done
# The offline embedders' names and the refusal of an unknown one, from the core just built
# (settings.js and the CLI's options need them before any wasm is loaded).
node "$ROOT/npm/src/gen-embedders.js" > "$ROOT/npm/schema/embedders.js"

# static-v1's token table, loaded by the package at first use (never compiled into the wasm).
# (Not a fresh folder: the store template below is kept while its stamp matches.)
mkdir -p "$ROOT/npm/data"
cp "$ROOT/crates/memloom-core/data/static-v1.bin" "$ROOT/npm/data/"
cp "$ROOT/NOTICE" "$ROOT/npm/data/NOTICE" # its attribution (all-MiniLM-L6-v2, Apache-2.0)
# The licence texts ship in the package (MIT OR Apache-2.0).
cp "$ROOT/LICENSE-MIT" "$ROOT/LICENSE-APACHE" "$ROOT/npm/"

cd "$ROOT/npm"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ] || [ package.json -nt node_modules ]; then
  log "installing npm dependencies"
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund >&2; else npm install --no-audit --no-fund >&2; fi
  touch node_modules
fi

# The template data directory a new embedded store starts from (npm/src/template-node.js):
# PGlite's initdb and the migrations run once here instead of in every `memloom init`, and with
# the default embedder's overlay (memloom_init_store done: the pages it changes). Made again only
# when the PGlite version or a migration changed (its stamp).
node "$ROOT/npm/src/gen-template.js" >&2

# The package's TypeScript declarations, generated from the JSDoc of npm/src (types.js holds the
# data shapes) into npm/types/ (build output, not committed: regenerated on every build, so
# they cannot drift from the code; npm/test/types/ pins the public API).
node node_modules/typescript/bin/tsc -p tsconfig.types.json >&2

raw=$(wc -c < "$out/memloom_wasm_bg.wasm")
gz=$(gzip -9c "$out/memloom_wasm_bg.wasm" | wc -c)
log "npm/wasm/memloom_wasm_bg.wasm: $raw bytes, $gz gzipped"
data="$ROOT/npm/data/static-v1.bin"
log "npm/data/static-v1.bin: $(wc -c < "$data") bytes, $(gzip -9c "$data" | wc -c) gzipped"
