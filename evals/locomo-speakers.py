#!/usr/bin/env python3
"""Who speaks in what recall returns, on locomo-dev (issue 12 item 3: "recall over saved turns
must not be dominated by who speaks"). For every question that names exactly one of the
conversation's speakers, compares the share of the top 10 results spoken by that speaker with
the share of the question's evidence spoken by them, by question type.

    python3 evals/locomo-speakers.py RUN_DIR [RUN_DIR ...]

RUN_DIR is an output directory of ../shared/eval/run-locomo.sh (or evals/run-arms.sh locomo):
its results.jsonl. Reads ../shared/eval/locomo-dev (the memories' "Speaker (date):" leads);
says so and exits 2 when it is absent. Prints one line per run.
"""
import collections
import json
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
set_dir = os.path.join(here, '..', '..', 'shared', 'eval', 'locomo-dev')
if not os.path.isdir(set_dir):
    print(f'locomo-speakers: {set_dir} is absent (the dev sets live in ../shared/eval); nothing to measure', file=sys.stderr)
    sys.exit(2)

questions = {}
for line in open(os.path.join(set_dir, 'queries.jsonl')):
    if line.strip():
        q = json.loads(line)
        questions[q['id']] = q
speaker = {}
for conv in sorted(os.listdir(set_dir)):
    path = os.path.join(set_dir, conv, 'memories.jsonl')
    if os.path.isfile(path):
        for line in open(path):
            if line.strip():
                m = json.loads(line)
                speaker[m['key']] = m['text'].split(' (')[0]
names = sorted(set(speaker.values()))

if len(sys.argv) < 2:
    sys.exit(__doc__)
for run in sys.argv[1:]:
    in_top, listed, evidence, n = (collections.Counter() for _ in range(4))
    for line in open(os.path.join(run, 'results.jsonl')):
        r = json.loads(line)
        q = questions[r['id']]
        named = [s for s in names if re.search(r'\b' + re.escape(s) + r'\b', q['query'])]
        keys = [e['memory_key'] for e in q.get('relevant', []) if 'memory_key' in e]
        if len(named) != 1 or not keys:
            continue
        s, t = named[0], q['type']
        top = [h['key'] for h in r['results'][:10]]
        in_top[t] += sum(speaker.get(k) == s for k in top)
        listed[t] += len(top)
        evidence[t] += sum(speaker.get(k) == s for k in keys) / len(keys)
        n[t] += 1
    cells = [f'{t} {in_top[t] / max(1, listed[t]):.2f} / {evidence[t] / n[t]:.2f} (n={n[t]})' for t in sorted(n)]
    print(f'{run}: named speaker share, top 10 / evidence: ' + '; '.join(cells))
