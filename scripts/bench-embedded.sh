#!/usr/bin/env bash
# make bench-embedded (issue 19): the embedded store (PGlite) against what users would pick
# instead, and the costs a user of the CLI meets. A benchmark, not a test: it prints figures
# and ratios measured in this run and asserts no timing. Steps:
#   1. in-process recall over the Node docs chunks at 1x and 10x: memloom next to Orama (hybrid,
#      full text, vector) and MiniSearch, same chunks and vectors, interleaved (npm/bench/recall.js)
#   2. the same recall in headless Chromium, memloom next to Orama hybrid and MiniSearch in one
#      page, and where its milliseconds go there (npm/bench/browser-recall.js --breakdown)
#   3. in-process remember at 1, 1k and 10k items (npm/bench/remember.js)
#   4. CLI wall times of a cold process: init, remember, recall on a store of the Node docs;
#      warm ones; a first call with no warm process, and the call right after it
#   5. `remember --file` of 100k JSONL lines: wall time and peak RSS (cut off after
#      MEMLOOM_BENCH_FILE_TIMEOUT seconds, default 300, and reported as such)
# The Node docs come from ../shared/eval/nodejs-docs (MEMLOOM_EVAL_SET overrides); when absent,
# steps 1, 2 and 4 say so and are skipped. MEMLOOM_BENCH_STEPS=1,3 runs a subset.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SET="${MEMLOOM_EVAL_SET:-$ROOT/../shared/eval/nodejs-docs}"
STEPS="${MEMLOOM_BENCH_STEPS:-1,2,3,4,5}"
FILE_TIMEOUT="${MEMLOOM_BENCH_FILE_TIMEOUT:-300}"
log() { echo "bench-embedded: $*" >&2; }
want() { [[ ",$STEPS," == *",$1,"* ]]; }

bash "$ROOT/scripts/build-wasm.sh" >&2 || exit 1
# The comparison engines are devDependencies: make sure they are installed.
if [ ! -d "$ROOT/npm/node_modules/@orama/orama" ] || [ ! -d "$ROOT/npm/node_modules/minisearch" ]; then
  (cd "$ROOT/npm" && npm install --no-audit --no-fund >&2) || exit 1
fi
have_set=1
if [ ! -d "$SET/corpus" ]; then
  have_set=0
  echo "bench-embedded: no Node docs set at $SET: the recall and CLI steps are skipped (they need ../shared/eval)"
fi
cli() { node "$ROOT/npm/bin/memloom.js" "$@"; }
TMP="$(mktemp -d "${TMPDIR:-/tmp}/memloom-bench-embedded.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
started=$SECONDS

if want 1 && [ $have_set = 1 ]; then
  echo; echo "# 1. in-process recall (Node, PGlite in memory)"
  node "$ROOT/npm/bench/recall.js" --set "$SET" --scales 1,10 --passes 3 --breakdown
fi

if want 2 && [ $have_set = 1 ]; then
  echo; echo "# 2. recall in headless Chromium (one page)"
  if [ ! -x "${MEMLOOM_CHROMIUM:-/usr/bin/chromium}" ]; then
    echo "skipped: no Chromium at ${MEMLOOM_CHROMIUM:-/usr/bin/chromium} (apt-get install chromium)"
  else
    node "$ROOT/npm/bench/browser-recall.js" --set "$SET" --passes 3 --breakdown
  fi
fi

if want 3; then
  echo; echo "# 3. in-process remember (PGlite directory)"
  node "$ROOT/npm/bench/remember.js" --sizes 1,1000,10000 --ops 60
fi

# Wall time of one command in ms (a fresh node process each time).
wall() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>"$TMP/err" || { echo "FAILED: $* ($(tail -1 "$TMP/err"))" >&2; echo "failed"; return; }
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }

if want 4 && [ $have_set = 1 ]; then
  echo; echo "# 4. CLI wall times (ms; median of 3): cold (a fresh process opens the store) and warm (its warm process serves it)"
  node_ms=(); init_ms=(); rem_ms=(); rec_ms=(); wrem_ms=(); wrec_ms=()
  export MEMLOOM_DAEMON_IDLE=0  # the steps that build the stores, and the cold rows
  for i in 1 2 3; do
    node_ms+=("$(wall node -e 0)")
    rm -rf "$TMP/init$i"
    init_ms+=("$(wall cli init --store "$TMP/init$i")")
  done
  cli init --store "$TMP/docs" >/dev/null 2>&1
  cli ingest --store "$TMP/docs" --index "$SET/corpus" >/dev/null 2>&1
  cli remember --store "$TMP/docs" --file "$SET/memories.jsonl" >/dev/null 2>&1
  items=$(cli stats --store "$TMP/docs" --json 2>/dev/null | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{try{const j=JSON.parse(s);console.log(j.chunks+j.memories.active)}catch{}})')
  cp -r "$TMP/docs" "$TMP/docs-warm"
  MEMLOOM_DAEMON_IDLE=600 cli daemon start --store "$TMP/docs-warm" >/dev/null 2>&1
  for i in 1 2 3; do
    rem_ms+=("$(wall cli remember --store "$TMP/docs" "The bench remembered this at run $i" --key "bench-$i")")
    rec_ms+=("$(wall cli recall --store "$TMP/docs" "how do I read a file line by line")")
    wrem_ms+=("$(MEMLOOM_DAEMON_IDLE=600 wall cli remember --store "$TMP/docs-warm" "The bench remembered this at run $i" --key "bench-$i")")
    wrec_ms+=("$(MEMLOOM_DAEMON_IDLE=600 wall cli recall --store "$TMP/docs-warm" "how do I read a file line by line")")
  done
  cli daemon stop --store "$TMP/docs-warm" >/dev/null 2>&1
  # A call that finds no warm process (a first one, or after the idle exit) runs cold and starts
  # it as it ends; the next call, sent right after, waits for it (src/cli/warm.js, Handoff).
  first_ms=(); next_ms=()
  for i in 1 2 3; do
    first_ms+=("$(MEMLOOM_DAEMON_IDLE=600 wall cli recall --store "$TMP/docs-warm" "how do I read a file line by line")")
    next_ms+=("$(MEMLOOM_DAEMON_IDLE=600 wall cli recall --store "$TMP/docs-warm" "read a file line by line")")
    cli daemon stop --store "$TMP/docs-warm" >/dev/null 2>&1
  done
  unset MEMLOOM_DAEMON_IDLE
  echo "| command | wall ms (median of 3) | runs |"
  echo "| --- | ---: | --- |"
  echo "| node -e 0 (baseline) | $(median3 "${node_ms[@]}") | ${node_ms[*]} |"
  echo "| memloom init (new store) | $(median3 "${init_ms[@]}") | ${init_ms[*]} |"
  echo "| memloom remember, cold (Node docs store${items:+, $items active items}) | $(median3 "${rem_ms[@]}") | ${rem_ms[*]} |"
  echo "| memloom recall, cold (same store) | $(median3 "${rec_ms[@]}") | ${rec_ms[*]} |"
  echo "| memloom remember, warm (a copy of the store) | $(median3 "${wrem_ms[@]}") | ${wrem_ms[*]} |"
  echo "| memloom recall, warm | $(median3 "${wrec_ms[@]}") | ${wrec_ms[*]} |"
  echo "| memloom recall, no warm process yet (runs cold, starts one) | $(median3 "${first_ms[@]}") | ${first_ms[*]} |"
  echo "| memloom recall right after that one (waits for the warm process) | $(median3 "${next_ms[@]}") | ${next_ms[*]} |"
fi

if want 5; then
  echo; echo "# 5. remember --file of 100k JSONL lines (unkeyed, one new store)"
  node -e '
    const words = "deploy freeze friday orders api port heap limit queue worker node version cache retry timeout shard replica".split(" ");
    let s = 7; const r = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
    const out = [];
    for (let i = 0; i < 100000; i++) {
      const t = Array.from({ length: 12 }, () => words[Math.floor(r() * words.length)]).join(" ");
      out.push(JSON.stringify({ seq: i + 1, text: `note ${i}: ${t}` }));
    }
    require("fs").writeFileSync(process.argv[1], out.join("\n") + "\n");
  ' "$TMP/100k.jsonl"
  cli init --store "$TMP/file" >/dev/null 2>&1
  t0=$(date +%s%N)
  timeout "$FILE_TIMEOUT" /usr/bin/time -f '%M' -o "$TMP/rss" node "$ROOT/npm/bin/memloom.js" remember --store "$TMP/file" --file "$TMP/100k.jsonl" >/dev/null 2>"$TMP/err"
  rc=$?
  t1=$(date +%s%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  rss=$(tail -1 "$TMP/rss" 2>/dev/null)
  if [ $rc = 124 ]; then
    echo "did not finish within ${FILE_TIMEOUT} s (cut off; peak RSS not recorded by time(1) for a killed process)"
  elif [ $rc != 0 ]; then
    echo "failed (exit $rc): $(tail -2 "$TMP/err")"
  else
    echo "| lines | wall s | lines/s | peak RSS MB |"
    echo "| ---: | ---: | ---: | ---: |"
    echo "| 100000 | $secs | $(awk -v s="$secs" 'BEGIN { printf "%.0f", 100000 / s }') | $(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }') |"
  fi
fi
log "done in $((SECONDS - started)) s"
