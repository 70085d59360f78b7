# memloom: the two commands a fresh machine needs are `make demo` and `make test`.
# Every target installs what it needs itself (wasm target, wasm-bindgen-cli, npm packages,
# PostgreSQL + pgvector, Chromium) and skips what is already there.
SHELL := /bin/bash
.DEFAULT_GOAL := demo
.PHONY: test-scale bench-scale
.PHONY: demo test lint test-core test-fuzz fuzz-long faults bench-sql bench-ingest bench-export bench-worker bench-embedded test-wasm-build test-sql test-npm test-worker test-preview preview wasm-target bench

## demo: the main job: the memloom CLI on a fresh embedded (PGlite) store, offline, over the
## sample notes in examples/notes: ingest, remember (one superseded), index, recall
demo:
	bash npm/demo.sh

## test: every test (the same command CI runs through .ci/run)
test: test-core test-fuzz test-wasm-build test-sql test-npm test-worker test-preview

## lint: formatting and clippy, as CI runs them
lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy -p edge-worker --all-targets --no-default-features -- -D warnings

test-core:
	cargo test -p memloom-core -p memloom-wasm -p edge-worker

# SQL on a real PostgreSQL 15 + pgvector (installed from Debian when missing, throwaway cluster).
test-sql:
	bash scripts/test-sql.sh

# The npm package and CLI: golden vectors through the wasm build, the CLI end to end on the
# embedded store and on a real PostgreSQL, a browser smoke test in Debian's Chromium.
test-npm:
	bash scripts/test-npm.sh

# The edge worker in workerd (wrangler) against a real PostgreSQL: REST and MCP end to end.
test-worker:
	bash scripts/test-worker.sh

# Namespaces sharded across PostgreSQL servers with PL/Proxy: a proxy, 2 partitions and one plain
# server on loopback (installs PL/Proxy from Debian when missing); about 10 minutes, so not in
# `make test` (docs/SCALING.md).
test-scale:
	bash scripts/test-scale.sh

## bench-scale: recall through the PL/Proxy front vs the owning partition (2 and 4 partitions),
## mixed recall/remember throughput with 4 partitions vs one server
bench-scale:
	bash scripts/bench-scale.sh

# The in-browser preview page end to end in Debian's Chromium (screenshots in target/preview/).
test-preview:
	bash scripts/test-preview.sh

## preview: serve the offline in-browser preview page on 127.0.0.1
preview:
	bash scripts/preview.sh

# A short coverage-guided fuzz run of the core (5 s per target; cargo-fuzz on stable).
test-fuzz:
	bash scripts/fuzz.sh --short

## fuzz-long: 600 s per fuzz target; faults: SIGKILL mid-ingest and a PostgreSQL restart under load
fuzz-long:
	bash scripts/fuzz.sh --long

faults:
	bash scripts/faults.sh

wasm-target:
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

# The core must compile for the browser and the edge exactly as it does natively.
test-wasm-build: wasm-target
	cargo build -p memloom-core --target wasm32-unknown-unknown --release

## bench: throughput of the chunker and embedder (reads ../shared/eval when it is there)
bench:
	cargo bench -p memloom-core --bench throughput

## bench-sql: memloom_fuse latency at 100k and 1M items against other query shapes (~25 min)
bench-sql:
	bash scripts/bench-sql.sh

## bench-ingest: ingest MB/s and its time split, before and after sql/0013, embedded and on a server;
## then through a stand-in embeddings API, 1 against 4 requests in flight
bench-ingest:
	bash scripts/bench-ingest.sh

## bench-embedded: the embedded store (PGlite) next to Orama and MiniSearch (Node and Chromium),
## in-process remember, CLI wall times, remember --file of 100k lines (~10 min; reads ../shared/eval)
bench-embedded:
	bash scripts/bench-embedded.sh

## bench-export: export/import of the Node docs store (time, size) and 100k / 1M-line dumps' peak RSS
bench-export:
	bash scripts/bench-export.sh

## bench-worker: /v1/recall latency through the local worker next to direct memloom_fuse
bench-worker:
	bash scripts/bench-worker.sh
