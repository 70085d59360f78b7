#!/bin/bash
# Fused recall next to every arm alone, on one store per set (docs/EVAL.md's tables).
#
# usage (from the repository root, after `bash scripts/build-wasm.sh`):
#   bash evals/run-arms.sh docs   OUTDIR [recall flags]   ../shared/eval/nodejs-docs, --limit 10
#   bash evals/run-arms.sh locomo OUTDIR [recall flags]   ../shared/eval/locomo-dev, --limit 20
#
# Same steps as ../shared/eval/run.sh and run-locomo.sh (a fresh embedded store: init, ingest
# and/or remember --file, index, recall --batch --json), but the store is built once and recalled
# four times: fused, --arms vector, --arms keyword, --arms entity. The embedder is whatever
# MEMLOOM_EMBEDDER / MEMLOOM_EMBED_* say (unset: hash-v1). Scores in OUTDIR/<run>/score.txt;
# `python3 evals/tables.py docs|locomo LABEL=OUTDIR ...` makes docs/EVAL.md's tables of several.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
eval_dir=${MEMLOOM_EVAL_DIR:-../shared/eval}
set=${1:?usage: run-arms.sh docs|locomo OUTDIR [recall flags]}
out=${2:?usage: run-arms.sh docs|locomo OUTDIR [recall flags]}
shift 2
if [ ! -d "$eval_dir" ]; then
  echo "run-arms: $eval_dir is not here, so there is nothing to evaluate; skipping."
  exit 0
fi
memloom() { node "$root/npm/bin/memloom.js" "$@"; }
queries() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    if l.strip(): d=json.loads(l); print(json.dumps({"id":d["id"],"query":d["query"]}))' "$1"; }
mkdir -p "$out"
case "$set" in
  docs)
    sets=("$eval_dir/nodejs-docs"); limit=10; score=("$eval_dir/score.py" "$eval_dir/nodejs-docs/queries.jsonl") ;;
  locomo)
    sets=("$eval_dir"/locomo-dev/conv-*); limit=${LOCOMO_LIMIT:-20}; score=("$eval_dir/score_locomo.py" "$eval_dir/locomo-dev/queries.jsonl") ;;
  *) echo "run-arms: the set is docs or locomo, not $set" >&2; exit 2 ;;
esac
for dir in "${sets[@]}"; do
  name=$(basename "$dir"); store="$out/store-$name"; rm -rf "$store"
  queries "$dir/queries.jsonl" > "$out/$name.q.jsonl"
  memloom init --store "$store" > /dev/null
  SECONDS=0
  [ -d "$dir/corpus" ] && memloom ingest --store "$store" "$dir/corpus" > /dev/null
  [ -f "$dir/memories.jsonl" ] && memloom remember --store "$store" --file "$dir/memories.jsonl" > /dev/null
  memloom index --store "$store" > /dev/null
  echo "$name: store built in ${SECONDS}s" | tee -a "$out/timings.txt"
done
for run in fused vector keyword entity; do
  flags=(); [ "$run" != fused ] && flags=(--arms "$run")
  mkdir -p "$out/$run"; : > "$out/$run/results.jsonl"
  for dir in "${sets[@]}"; do
    name=$(basename "$dir")
    memloom recall --store "$out/store-$name" --batch "$out/$name.q.jsonl" --json --limit "$limit" \
      "${flags[@]}" "$@" >> "$out/$run/results.jsonl" 2> /dev/null
  done
  python3 "${score[@]}" "$out/$run/results.jsonl" > "$out/$run/score.txt"
  echo "== $run"; cat "$out/$run/score.txt"
done
