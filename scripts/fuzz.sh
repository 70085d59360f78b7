#!/usr/bin/env bash
# Fuzz memloom-core with cargo-fuzz (libFuzzer): the chunker, the hash-v1 embedder, the entity
# extractor and fusion (targets in fuzz/fuzz_targets/, invariants in each file's header).
#
#   bash scripts/fuzz.sh --short     # FUZZ_SECONDS=5 per target: part of `make test`
#   bash scripts/fuzz.sh --long      # FUZZ_SECONDS=600 per target (override with FUZZ_SECONDS)
#   bash scripts/fuzz.sh --long chunker   # one target
#
# Works on the stable toolchain: libFuzzer's instrumentation needs -Z flags, which
# RUSTC_BOOTSTRAP=1 unlocks (no nightly needed). Built like `cargo fuzz build` without -O:
# optimised, with debug assertions and overflow checks; no sanitizer (memloom-core has no
# unsafe code, and ASan would halve the executions). One process per target, in turn: the
# machine's cores are shared. Seeds come from tests/golden and tests/fixtures; the corpus grows
# in fuzz/corpus/ (git-ignored). A crash stops the run, prints the input's path and the
# command to reproduce it, and exits 1; its regression test goes in
# crates/memloom-core/tests/fuzz_regressions.rs.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:---short}
shift || true
case "$mode" in
  --short) seconds=${FUZZ_SECONDS:-5} ;;
  --long) seconds=${FUZZ_SECONDS:-600} ;;
  *) echo "usage: scripts/fuzz.sh --short|--long [target...]" >&2; exit 2 ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(chunker embedder entities fusion)

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked >&2
fi
export RUSTC_BOOTSTRAP=1
cd fuzz
cargo fuzz build -s none >&2

# Seeds: the golden chunk inputs and the fixture docs (markdown and entity text alike).
for t in chunker embedder entities; do
  mkdir -p "corpus/$t"
  for f in ../tests/golden/chunks/* ../tests/fixtures/nodejs/*.md ../tests/golden/entities/*; do
    [ -f "$f" ] && cp -n "$f" "corpus/$t/seed-$(basename "$f")" 2>/dev/null || true
  done
done
mkdir -p corpus/fusion

declare -A max_len=([chunker]=32768 [embedder]=8192 [entities]=16384 [fusion]=4096)
total=0
status=0
summary=""
for t in "${targets[@]}"; do
  log=$(mktemp)
  echo "fuzz: $t for ${seconds}s" >&2
  if cargo fuzz run -s none "$t" -- -max_total_time="$seconds" -max_len="${max_len[$t]:-8192}" \
      -print_final_stats=1 >"$log" 2>&1; then
    runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
    total=$((total + runs))
    summary+=$(printf '%-9s %12s executions in %ss, no crash\n' "$t" "$runs" "$seconds")$'\n'
  else
    status=1
    grep -E 'panicked|SUMMARY|Test unit written|cargo fuzz (run|tmin)' "$log" >&2 || tail -30 "$log" >&2
    summary+=$(printf '%-9s CRASH (see above)\n' "$t")$'\n'
  fi
  rm -f "$log"
done
printf '%s' "$summary"
echo "fuzz: $total executions in total"
exit $status
