#!/usr/bin/env python3
"""docs/EVAL.md's tables from runs of evals/run-arms.sh: one table per dev set, a row per
embedder and run (fused, each arm alone), a column per query type, and the list of the cells
where fused is below its best single arm (issue 12's first target).

usage (from the repository root):
  python3 evals/tables.py docs   LABEL=RUNDIR [LABEL=RUNDIR ...]
  python3 evals/tables.py locomo LABEL=RUNDIR [LABEL=RUNDIR ...]

RUNDIR is what `bash evals/run-arms.sh docs|locomo RUNDIR` or `evals/run-minilm.sh RUNDIR`
leaves: fused/, vector/, keyword/ and entity/, each with results.jsonl (a missing run is left
out). The scores are the sets' own
scorers' (score.py, score_locomo.py in ../shared/eval, or MEMLOOM_EVAL_DIR), called with --json:
nothing here re-implements a metric. Without the sets: says so and exits 0.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

RUNS = ("fused", "vector", "keyword", "entity")
SETS = {
    # set: (folder, scorer, metrics shown per type, the types in column order)
    "docs": ("nodejs-docs", "score.py", ("s1", "s5"), ("identifier", "paraphrase", "entity", "memory")),
    "locomo": ("locomo-dev", "score_locomo.py", ("R@5", "R@10", "MRR"),
               ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")),
}
# The overall column also gives MRR and nDCG@10 for the docs (the sets' READMEs report them).
ALL_METRICS = {"docs": ("s1", "s5", "mrr", "ndcg"), "locomo": ("R@5", "R@10", "MRR")}
NAMES = {"s1": "S@1", "s5": "S@5", "mrr": "MRR", "ndcg": "nDCG@10"}


def scores(set_name, eval_dir, results):
    folder, scorer, _, _ = SETS[set_name]
    out = subprocess.run(
        [sys.executable, str(eval_dir / scorer), str(eval_dir / folder / "queries.jsonl"), str(results), "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    data = json.loads(out)
    return data["table"] if "table" in data else data


def num(x):
    return f"{x:.3f}".lstrip("0")


def cell(row, metrics):
    return " / ".join(num(row[m]) if row.get(m) is not None else "-" for m in metrics)


def main(argv):
    if len(argv) < 2 or argv[0] not in SETS or any("=" not in a for a in argv[1:]):
        sys.exit(__doc__)
    set_name, pairs = argv[0], [a.split("=", 1) for a in argv[1:]]
    eval_dir = Path(os.environ.get("MEMLOOM_EVAL_DIR", Path(__file__).resolve().parent.parent.parent / "shared" / "eval"))
    if not (eval_dir / SETS[set_name][1]).exists():
        print(f"tables: no scorer at {eval_dir} (the sets are not here), nothing to tabulate")
        return 0
    _, _, metrics, types = SETS[set_name]
    table = {}
    for label, run_dir in pairs:
        for run in RUNS:
            results = Path(run_dir) / run / "results.jsonl"
            if results.exists():
                table[(label, run)] = scores(set_name, eval_dir, results)
    if not table:
        sys.exit(f"tables: no <run>/results.jsonl under {', '.join(d for _, d in pairs)}; "
                 "run `bash evals/run-arms.sh docs|locomo RUNDIR` first")
    head = " / ".join(NAMES.get(m, m) for m in metrics)
    print(f"| run | " + " | ".join(f"{t} ({next(iter(table.values()))[t]['n']})" for t in types)
          + f" | all {' / '.join(NAMES.get(m, m) for m in ALL_METRICS[set_name])} |")
    print("| --- |" + " --- |" * (len(types) + 1))
    for (label, run), row in table.items():
        print(f"| {label}, {run} | " + " | ".join(cell(row[t], metrics) for t in types)
              + f" | {cell(row['all'], ALL_METRICS[set_name])} |")
    print(f"\n(cells: {head})\n\nWhere fused is below its best single arm (type, metric: fused against the best arm):")
    below = 0
    for label, _ in pairs:
        fused = table.get((label, "fused"))
        if fused is None:
            continue
        for t in (*types, "all"):
            for m in metrics:
                arms = [(table[(label, r)][t][m], r) for r in RUNS[1:] if (label, r) in table]
                if not arms:
                    continue
                best, arm = max(arms)
                if fused[t][m] < best:
                    below += 1
                    print(f"- {label}: {t} {NAMES.get(m, m)} {num(fused[t][m])} against the {arm} arm's {num(best)}")
    if not below:
        print("- nowhere")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
