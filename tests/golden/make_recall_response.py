#!/usr/bin/env python3
"""Writes recall-response.json: memloom_fuse rows (snake_case, as the SQL returns them) and the
recall response every door must build from them (schema/recall-response.json), computed here,
independently of the npm and the worker builders. Each case: the request, the rows, the times
the builder is handed (tookMs; with explain: embedder, embedMs, queryMs, connectMs where the
door has a connection of its own) and the expected response. Scores are IEEE doubles summed
vector, keyword, entity, as the SQL and the Rust core do; terms are weight / (k + rank)."""
import json
import os

ARMS = ("vector", "keyword", "entity")
DEFAULT_WEIGHTS = {"vector": 1.0, "keyword": 2.0, "entity": 0.5}
K = 60.0

# id, kind, source, breadcrumb, key, content, similarity, ranks (vector, keyword, entity)
ITEMS = [
    (11, "chunk", "postgres.md", "PostgreSQL operations > Connection limits",
     None, "PostgreSQL operations > Connection limits\n\nRaise max_connections only with a pooler in front.",
     0.4375, (2, 1, 1)),
    (42, "memory", None, None, "pg-pool", "The orders service keeps 20 connections per pod.",
     0.5, (1, 3, None)),
    (7, "memory", None, None, None, "ERR_POOL_TIMEOUT means the pooler queue is full.",
     -0.0625, (None, None, 2)),
    (3, "chunk", "notes.md", None, None, "Connections are cheap to open behind PgBouncer.",
     0.125, (None, None, None)),
]


def score(ranks, w):
    terms = [(w[a] / (K + r)) if r is not None else 0.0 for a, r in zip(ARMS, ranks)]
    return terms[0] + terms[1] + terms[2]


def rows_for(w):
    rows = []
    for (id_, kind, source, breadcrumb, key, content, sim, ranks) in ITEMS:
        rows.append({
            "id": id_, "kind": kind, "source": source, "breadcrumb": breadcrumb, "key": key,
            "content": content, "rrf_score": score(ranks, w), "similarity": sim,
            "vector_rank": ranks[0], "keyword_rank": ranks[1], "entity_rank": ranks[2],
        })
    # memloom_fuse's order: voted rows by score, then the unvoted ones.
    rows.sort(key=lambda r: (-r["rrf_score"], r["id"]))
    return rows


def hit(row, w, explain):
    ranks = {a: row[f"{a}_rank"] for a in ARMS}
    h = {
        "id": row["id"], "kind": row["kind"], "source": row["source"],
        "breadcrumb": row["breadcrumb"], "key": row["key"], "content": row["content"],
        "rrfScore": row["rrf_score"], "similarity": row["similarity"], "ranks": ranks,
    }
    if explain:
        h["explain"] = {"k": K, "terms": {
            a: None if ranks[a] is None else {"rank": ranks[a], "weight": w[a], "term": w[a] / (K + ranks[a])}
            for a in ARMS}}
    return h


def case(name, request, took_ms, timings=None):
    w = {a: request.get("weights", {}).get(a, DEFAULT_WEIGHTS[a]) for a in ARMS}
    explain = bool(request.get("explain"))
    rows = rows_for(w)
    response = {"query": request["query"], "results": [hit(r, w, explain) for r in rows], "tookMs": took_ms}
    if explain:
        response["explain"] = {"embedder": timings["embedder"], "k": K, "weights": w,
                               "embedMs": timings["embedMs"], "queryMs": timings["queryMs"]}
        if "connectMs" in timings:
            response["explain"]["connectMs"] = timings["connectMs"]
    out = {"name": name, "request": request, "rows": rows, "tookMs": took_ms}
    if timings:
        out["timings"] = timings
    out["response"] = response
    return out


CASES = [
    case("default weights, no explain", {"query": "max_connections pooler", "limit": 4}, 9),
    case("explain with an entity weight, a worker's timings",
         {"query": "max_connections pooler", "limit": 4, "explain": True, "weights": {"entity": 1.0}}, 12,
         {"embedder": "hash-v1", "embedMs": 1, "queryMs": 6, "connectMs": 4}),
    case("explain, an embedded store's timings (no connection of its own)",
         {"query": "max_connections pooler", "limit": 4, "explain": True}, 3.25,
         {"embedder": "static-v1", "embedMs": 0.5, "queryMs": 2.75}),
    case("no results", {"query": "nothing matches this"}, 2),
]
CASES[-1]["rows"] = []
CASES[-1]["response"]["results"] = []

if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recall-response.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(CASES, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {path}: {len(CASES)} cases")
