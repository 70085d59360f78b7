#!/usr/bin/env python3
"""Writes fusion.json: weighted-RRF cases whose expected scores are computed here, independently
of the Rust core, by the formula in DESIGN.md (ranks from 1, a repeated id keeps its first rank,
score = w_v/(k+r_v) + w_k/(k+r_k) + w_e/(k+r_e) summed in that order, order by score desc then
id asc). Python floats are IEEE doubles, so the Rust core and SQL must match these bit for bit."""
import json
import os

ARMS = ("vector", "keyword", "entity")
DEFAULT_WEIGHTS = {"vector": 1.0, "keyword": 2.0, "entity": 0.5}


def case(name, arms, k=60, weights=None):
    w = weights or DEFAULT_WEIGHTS
    ranks = {}
    for arm in ARMS:
        for i, id_ in enumerate(arms.get(arm, [])):
            r = ranks.setdefault(id_, dict.fromkeys(ARMS))
            if r[arm] is None:
                r[arm] = i + 1
    out = []
    for id_, r in ranks.items():
        terms = [(w[a] / (k + r[a])) if r[a] is not None else 0.0 for a in ARMS]
        out.append({"id": id_, "rrfScore": terms[0] + terms[1] + terms[2], "ranks": r})
    out.sort(key=lambda e: (-e["rrfScore"], e["id"]))
    return {"name": name, "k": k, "weights": w, "arms": {a: arms.get(a, []) for a in ARMS}, "expected": out}


CASES = [
    case("vector arm alone", {"vector": [10, 20, 30]}),
    case("three arms with the default weights", {"vector": [1, 2, 3], "keyword": [3, 1], "entity": [2]}),
    case("keyword arm abstains", {"vector": [5, 6], "keyword": [], "entity": [6, 5]}),
    case("equal scores break ties on the smaller id", {"vector": [8], "keyword": [4]},
         weights={"vector": 1.0, "keyword": 1.0, "entity": 1.0}),
    case("a repeated id keeps its first rank", {"vector": [1, 1, 2], "keyword": [2, 2]}),
    case("custom k and weights", {"vector": [7, 8, 9], "keyword": [9, 8], "entity": [8]}, k=10,
         weights={"vector": 0.5, "keyword": 1.0, "entity": 3.0}),
    case("a zero weight silences an arm", {"vector": [1, 2], "keyword": [2, 1]},
         weights={"vector": 1.0, "keyword": 0.0, "entity": 0.5}),
    case("every arm abstains", {}),
    case("long opposite rankings", {"vector": list(range(1, 101)), "keyword": list(range(100, 0, -1)),
                                    "entity": list(range(1, 101, 7))}),
]

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "fusion.json"), "w") as f:
        json.dump(CASES, f, indent=1)
        f.write("\n")
