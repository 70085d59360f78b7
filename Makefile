# memloom: the two commands a fresh machine needs are `make demo` and `make test`.
# Every target installs what it needs itself (wasm target, wasm-bindgen-cli, npm packages,
# PostgreSQL + pgvector, Chromium) and skips what is already there.
SHELL := /bin/bash
.DEFAULT_GOAL := demo
.PHONY: demo test lint test-core test-wasm-build test-sql wasm-target bench

## demo: the main job (for now, the core on the sample notes in examples/notes)
demo:
	cargo run -q -p memloom-core --example demo

## test: every test (the same command CI runs through .ci/run)
test: test-core test-wasm-build test-sql

## lint: formatting and clippy, as CI runs them
lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

test-core:
	cargo test -p memloom-core

# SQL on a real PostgreSQL 15 + pgvector (installed from Debian when missing, throwaway cluster).
test-sql:
	bash scripts/test-sql.sh

wasm-target:
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

# The core must compile for the browser and the edge exactly as it does natively.
test-wasm-build: wasm-target
	cargo build -p memloom-core --target wasm32-unknown-unknown --release

## bench: throughput of the chunker and embedder (reads ../shared/eval when it is there)
bench:
	cargo bench -p memloom-core --bench throughput
