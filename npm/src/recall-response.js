// The recall response (schema/recall-response.json, the one definition every door answers
// with), built from memloom_fuse's rows. Store#recall calls it; npm/test/contracts.test.js
// checks it against the golden responses of tests/golden/recall-response.json, which the edge
// worker's builder (crates/edge-worker/src/api.rs) must also produce. The explain terms are
// memloom-core's (through the wasm, loaded before a recall with explain: Store#recall).
import { explainTerms } from './core.js';

/**
 * The recall arms, in fusion order.
 * @type {readonly import('./types.js').Arm[]}
 */
export const ARMS = ['vector', 'keyword', 'entity'];
/** memloom_fuse's defaults (sql/memloom/08_fusion.sql; memloom-core's fuse module). */
export const DEFAULT_K = 60;
export const DEFAULT_WEIGHTS = Object.freeze({ vector: 1.0, keyword: 2.0, entity: 0.5 });

/**
 * The response for `query` from memloom_fuse `rows` (snake_case columns). `weights` are the
 * request's (an arm's null or absent: the default), `k` the request's or the default. With
 * `explain`, each hit gets its fusion terms and the response an `explain` object from
 * `timings` ({embedder, embedMs, queryMs, connectMs?}).
 * @param {string} query
 * @param {any[]} rows
 * @param {{ tookMs: number, explain?: boolean, k?: number | null, weights?: Record<string, number | null | undefined>, timings?: { embedder: string, embedMs: number, queryMs: number, connectMs?: number } }} options
 * @returns {import('./types.js').Recall}
 */
export function recallResponse(query, rows, { tookMs, explain = false, k, weights = {}, timings }) {
  const kk = k ?? DEFAULT_K;
  /** @type {import('./types.js').Weights} */
  const w = { vector: weights.vector ?? DEFAULT_WEIGHTS.vector, keyword: weights.keyword ?? DEFAULT_WEIGHTS.keyword, entity: weights.entity ?? DEFAULT_WEIGHTS.entity };
  const results = rows.map((r) => {
    const ranks = { vector: nullableInt(r.vector_rank), keyword: nullableInt(r.keyword_rank), entity: nullableInt(r.entity_rank) };
    /** @type {import('./types.js').RecallResult} */
    const hit = {
      id: Number(r.id),
      kind: r.kind,
      source: r.source ?? null,
      breadcrumb: r.breadcrumb ?? null,
      key: r.key ?? null,
      content: r.content,
      rrfScore: Number(r.rrf_score),
      similarity: Number(r.similarity),
      ranks,
    };
    return hit;
  });
  if (explain) {
    // memloom-core's fuse module owns the terms (the edge worker calls it natively): one wasm
    // call for all the hits.
    const terms = explainTerms(results.map((h) => h.ranks), w, kk);
    for (const [i, hit] of results.entries()) hit.explain = { k: kk, terms: terms[i] };
  }
  /** @type {import('./types.js').Recall} */
  const out = { query, results, tookMs };
  if (explain && timings) {
    out.explain = { embedder: timings.embedder, k: kk, weights: w, embedMs: timings.embedMs, queryMs: timings.queryMs };
    if (timings.connectMs !== undefined) out.explain.connectMs = timings.connectMs;
  }
  return out;
}

/** @param {unknown} v */
function nullableInt(v) {
  return v === null || v === undefined ? null : Number(v);
}
