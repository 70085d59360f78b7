#!/usr/bin/env python3
"""Event time on locomo-dev's temporal questions (docs/TIME.md, docs/EVAL.md "Event time").

usage (from the project root): python3 evals/locomo-event-time.py OUTDIR [--set DIR]

DIR defaults to ../shared/eval/locomo-dev (never copied into the repository: everything this
writes goes to OUTDIR). Three runs through the CLI, one fresh embedded store per conversation,
`recall --batch --json --limit 20` (LOCOMO_LIMIT), scored by the set's own score_locomo.py:

  baseline   the set's memories.jsonl as it is (what ../shared/eval/run-locomo.sh does)
  stored     the same turns with `at`, the session time parsed from each turn's lead
             "Caroline (1:56 pm on 8 May, 2023): ..." (text unchanged), recall unfiltered
  hard       the stored store; a question that names a month ("camping in June") recalls with
             --since / --until that month (the year it names, else the conversation's latest
             session year); the others recall unfiltered

Prints R@5 / R@10 / MRR for the temporal questions and for all, per run, and writes
OUTDIR/event-time.json.
"""
import json
import os
import re
import subprocess
import sys
import calendar
from pathlib import Path

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
LEAD = re.compile(r"^[^(]{1,80}\((\d{1,2}):(\d{2}) (am|pm) on (\d{1,2}) ([A-Za-z]+),? (\d{4})\):")
NAMED = re.compile(r"\b(" + "|".join(m.capitalize() for m in MONTHS) + r")\b(?:,? (\d{4}))?")


def turn_time(text):
    m = LEAD.match(text)
    if not m:
        return None
    h, mi, ap, d, mon, y = m.groups()
    h = int(h) % 12 + (12 if ap == "pm" else 0)
    return f"{int(y):04d}-{MONTHS[mon.lower()]:02d}-{int(d):02d}T{h:02d}:{int(mi):02d}Z"


def window(query, default_year):
    m = NAMED.search(query)
    if not m:
        return None
    mon = MONTHS[m.group(1).lower()]
    y = int(m.group(2) or default_year)
    last = calendar.monthrange(y, mon)[1]
    return f"{y:04d}-{mon:02d}-01", f"{y:04d}-{mon:02d}-{last:02d}"


def cli(*args):
    r = subprocess.run(["node", "npm/bin/memloom.js", *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"memloom {' '.join(args[:2])} failed:\n{r.stderr}")
    return r.stdout


def main(argv):
    if not argv or argv[0].startswith("--"):
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    set_dir = Path(argv[argv.index("--set") + 1]) if "--set" in argv else Path("../shared/eval/locomo-dev")
    if not (set_dir / "queries.jsonl").exists():
        print(f"locomo-dev is absent ({set_dir}): nothing measured", file=sys.stderr)
        return 3
    score = set_dir.parent / "score_locomo.py"
    limit = os.environ.get("LOCOMO_LIMIT", "20")
    out.mkdir(parents=True, exist_ok=True)
    results = {run: out / f"{run}.results.jsonl" for run in ("baseline", "stored", "hard")}
    for f in results.values():
        f.write_text("")
    filtered = []
    for cdir in sorted(set_dir.glob("conv-*")):
        c = cdir.name
        turns = [json.loads(l) for l in open(cdir / "memories.jsonl", encoding="utf-8") if l.strip()]
        with open(out / f"{c}.memories-at.jsonl", "w", encoding="utf-8") as f:
            for t in turns:
                at = turn_time(t["text"])
                if at is None:
                    sys.exit(f"{c}: no session time in the lead of {t['key']}")
                f.write(json.dumps({**t, "at": at}) + "\n")
        year = max(int(turn_time(t["text"])[:4]) for t in turns)
        qs = [json.loads(l) for l in open(cdir / "queries.jsonl", encoding="utf-8") if l.strip()]
        with open(out / f"{c}.q.jsonl", "w", encoding="utf-8") as plain, open(out / f"{c}.q-hard.jsonl", "w", encoding="utf-8") as hard:
            for q in qs:
                line = {"id": q["id"], "query": q["query"]}
                plain.write(json.dumps(line) + "\n")
                w = window(q["query"], year)
                if w:
                    line |= {"since": w[0], "until": w[1]}
                    filtered.append({"id": q["id"], "type": q["type"], "query": q["query"], "since": w[0], "until": w[1]})
                hard.write(json.dumps(line) + "\n")
        for run, mem, qf in (("baseline", cdir / "memories.jsonl", f"{c}.q.jsonl"),
                             ("stored", out / f"{c}.memories-at.jsonl", f"{c}.q.jsonl"),
                             ("hard", out / f"{c}.memories-at.jsonl", f"{c}.q-hard.jsonl")):
            store = out / f"store-{run}-{c}"
            if run != "hard":  # hard reuses the stored store
                subprocess.run(["rm", "-rf", str(store)], check=True)
                cli("init", "--store", str(store))
                cli("remember", "--store", str(store), "--file", str(mem))
                cli("index", "--store", str(store))
            else:
                store = out / f"store-stored-{c}"
            res = cli("recall", "--store", str(store), "--batch", str(out / qf), "--json", "--limit", limit)
            with open(results[run], "a", encoding="utf-8") as f:
                f.write(res)
        print(f"{c}: {len(turns)} turns, {len(qs)} questions", file=sys.stderr)
    report = {"filtered_questions": filtered, "runs": {}}
    print(f"{'run':<10}{'type':<10}{'n':>4}{'R@5':>8}{'R@10':>8}{'MRR':>8}")
    for run, f in results.items():
        s = json.loads(subprocess.run([sys.executable, str(score), str(set_dir / "queries.jsonl"), str(f), "--json"],
                                      capture_output=True, text=True, check=True).stdout)
        report["runs"][run] = {t: s["table"][t] for t in ("temporal", "all")}
        for t in ("temporal", "all"):
            row = s["table"][t]
            print(f"{run:<10}{t:<10}{row['n']:>4}{row['R@5']:>8.3f}{row['R@10']:>8.3f}{row['MRR']:>8.3f}")
    # The filtered questions one by one: did the cut keep their evidence?
    evidence = {}
    for l in open(set_dir / "queries.jsonl", encoding="utf-8"):
        q = json.loads(l)
        evidence[q["id"]] = {r["memory_key"] for r in q.get("relevant", [])}
    per = {}
    for run in ("stored", "hard"):
        for l in open(results[run], encoding="utf-8"):
            row = json.loads(l)
            per.setdefault(row["id"], {})[run] = [r.get("key") for r in row["results"]][:10]
    for q in filtered:
        ev = evidence.get(q["id"], set())
        got = {run: len(ev & set(per[q["id"]][run])) for run in ("stored", "hard")}
        q["evidence"] = len(ev)
        q["in_top10"] = got
        print(f"  {q['id']} ({q['type']}) {q['since']}..{q['until']}: evidence in top 10, unfiltered {got['stored']}/{len(ev)}, hard {got['hard']}/{len(ev)}: {q['query']}")
    (out / "event-time.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
