// Scoring a labelled query set against recall results: the metrics of the shared evaluation sets
// (../shared/eval's score.py for documents, score_locomo.py for memories), reimplemented here so
// `memloom eval` needs no Python. Pure: queries and results in, tables out.
//
// A labelled query: {id, type, query, relevant: [{source, heading} | {memory_key}], stale?: [text]}.
// Results: {id -> [{kind, source, breadcrumb, key, content}, ...]} best first (recall's hits).
//
// documents (score.py): a chunk hit is relevant when its source's file name equals the label's
// source and the last " > " segment of its breadcrumb equals the label's heading, both normalised
// (backticks and backslashes removed, lower case, white space collapsed); a memory hit when its
// key equals the label's memory_key. Each label counts once. Over the top k (10): S@1, S@5, MRR,
// nDCG@k (binary gains, ideal = min(labels, k) hits first), R@k, and stale leaks (a stale text
// contained in a hit's content). Queries without labels (negatives) are not scored.
//
// memories (score_locomo.py): a hit is its memory key (chunks never match). For k in 5, 10, 20
// (those no longer than the longest result list): R@k, Hit@k; MRR within the top max(k).
// Aggregates per type, "all", "all-no-adv" (without type adversarial), "macro" and "macro-no-adv"
// (means of the per-type means).

/**
 * @typedef {{ source?: string, heading?: string, memory_key?: string }} Label
 * @typedef {{ id: string | number, type?: string, query: string, relevant?: Label[], stale?: string[] }} LabelledQuery
 * @typedef {{ kind?: string, source?: string | null, breadcrumb?: string | null, key?: string | null, content?: string }} Hit
 */

/** @param {string | null | undefined} s */
function norm(s) {
  return (s ?? '').replaceAll('`', '').replaceAll('\\', '').replace(/\s+/g, ' ').trim().toLowerCase();
}

/** @param {string | null | undefined} path */
function fileName(path) {
  const p = (path ?? '').replaceAll('\\', '/');
  return p.slice(p.lastIndexOf('/') + 1);
}

/**
 * @param {Hit} r
 * @param {Label} label
 */
export function isRelevant(r, label) {
  if ('memory_key' in label) return r.kind === 'memory' && r.key === label.memory_key;
  if (r.kind !== undefined && r.kind !== null && r.kind !== 'chunk') return false;
  if (fileName(r.source) !== label.source) return false;
  const parts = (r.breadcrumb ?? '').split(' > ');
  return norm(parts[parts.length - 1]) === norm(label.heading);
}

/**
 * Python's round(x, n), as the sets' scripts print: the decimal nearest to x's exact binary
 * value (toFixed), and an exact tie (x = odd / 2^(n+1), e.g. 0.0625 to 3 places) to the even one.
 * @param {number} x
 * @param {number} n
 */
export function round(x, n) {
  const halves = x * 2 ** (n + 1); // exact: a power of two
  if (Number.isInteger(halves) && Math.abs(halves % 2) === 1) {
    const floor = Math.floor(x * 10 ** n); // exact here: x * 10^n = odd * 5^n / 2
    return (floor % 2 === 0 ? floor : floor + 1) / 10 ** n;
  }
  return Number(x.toFixed(n));
}

/**
 * One query's document metrics over the top k.
 * @param {LabelledQuery} q
 * @param {Hit[]} results
 * @param {number} k
 */
export function scoreDocumentQuery(q, results, k) {
  const labels = q.relevant ?? [];
  const gains = [];
  const found = new Set();
  for (const r of results.slice(0, k)) {
    let hit = -1;
    for (const [i, lab] of labels.entries()) {
      if (!found.has(i) && isRelevant(r, lab)) {
        hit = i;
        break;
      }
    }
    if (hit < 0) gains.push(0);
    else {
      found.add(hit);
      gains.push(1);
    }
  }
  const first = gains.findIndex((g) => g === 1);
  const dcg = gains.reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
  let ideal = 0;
  for (let i = 0; i < Math.min(labels.length, k); i++) ideal += 1 / Math.log2(i + 2);
  const top = results.slice(0, k);
  const stale = (q.stale ?? []).filter((t) => t.trim() !== '' && top.some((r) => (r.content ?? '').includes(t.trim())));
  return {
    s1: first === 0 ? 1 : 0,
    s5: first >= 0 && first < 5 ? 1 : 0,
    mrr: first >= 0 ? 1 / (first + 1) : 0,
    ndcg: ideal ? dcg / ideal : 0,
    recall: labels.length ? found.size / labels.length : 0,
    stale: stale.length,
  };
}

const DOC_METRICS = /** @type {const} */ (['s1', 's5', 'mrr', 'ndcg', 'recall']);

/**
 * The documents table (score.py --json): per type and "all", {s1, s5, mrr, ndcg, recall, n,
 * stale_leaks} rounded to 3 places, and missing_queries.
 * @param {LabelledQuery[]} queries
 * @param {Map<string, Hit[]>} got  results by String(id)
 * @param {{ k?: number }} [o]
 */
export function scoreDocuments(queries, got, { k = 10 } = {}) {
  /** @type {Map<string, ReturnType<typeof scoreDocumentQuery>[]>} */
  const byType = new Map();
  let missing = 0;
  for (const q of queries) {
    if (!got.has(String(q.id))) missing++;
    if (!q.relevant?.length) continue;
    const t = q.type ?? 'all';
    if (!byType.has(t)) byType.set(t, []);
    byType.get(t)?.push(scoreDocumentQuery(q, got.get(String(q.id)) ?? [], k));
  }
  /** @type {Record<string, any>} */
  const table = {};
  /** @param {ReturnType<typeof scoreDocumentQuery>[]} rows */
  const agg = (rows) => ({
    ...Object.fromEntries(DOC_METRICS.map((m) => [m, round(rows.reduce((s, r) => s + r[m], 0) / rows.length, 3)])),
    n: rows.length,
    stale_leaks: rows.reduce((s, r) => s + r.stale, 0),
  });
  const every = [];
  for (const t of [...byType.keys()].sort()) {
    const rows = byType.get(t) ?? [];
    every.push(...rows);
    table[t] = agg(rows);
  }
  if (every.length) table.all = agg(every);
  table.missing_queries = missing;
  return table;
}

const ADV = 'adversarial';

/**
 * The memories table (score_locomo.py's score()).
 * @param {LabelledQuery[]} queries
 * @param {Map<string, Hit[]>} got
 * @param {{ ks?: number[] }} [o]
 */
export function scoreMemories(queries, got, { ks: wanted = [5, 10, 20] } = {}) {
  /** @type {Map<string, (string | null)[]>} */
  const keys = new Map();
  let maxLen = 0;
  for (const [id, results] of got) {
    const ks = results.map((r) => (r.kind === undefined || r.kind === null || r.kind === 'memory' ? (/** @type {any} */ (r).memory_key ?? r.key ?? null) : null));
    keys.set(id, ks);
    maxLen = Math.max(maxLen, ks.length);
  }
  let ks = wanted.filter((k) => k <= maxLen);
  if (ks.length === 0) ks = [Math.min(...wanted)];
  const na = [5, 10, 20].filter((k) => !ks.includes(k));
  const metrics = [...ks.map((k) => `R@${k}`), ...ks.map((k) => `Hit@${k}`), 'MRR'];
  /** @type {Map<string, Record<string, number>[]>} */
  const byType = new Map();
  let missing = 0;
  let skipped = 0;
  for (const q of queries) {
    const id = String(q.id);
    if (!got.has(id)) missing++;
    if (!q.relevant?.length) {
      skipped++;
      continue;
    }
    const rel = new Set(q.relevant.map((l) => l.memory_key));
    const list = keys.get(id) ?? [];
    /** @type {Record<string, number>} */
    const row = {};
    for (const k of ks) {
      const top = new Set(list.slice(0, k));
      let n = 0;
      for (const r of rel) if (top.has(r ?? null)) n++;
      row[`R@${k}`] = n / rel.size;
      row[`Hit@${k}`] = n ? 1 : 0;
    }
    const first = list.slice(0, Math.max(...ks)).findIndex((key) => key !== null && rel.has(key));
    row.MRR = first >= 0 ? 1 / (first + 1) : 0;
    const t = q.type ?? 'all';
    if (!byType.has(t)) byType.set(t, []);
    byType.get(t)?.push(row);
  }
  /** @param {Record<string, number>[]} rows */
  const mean = (rows) => Object.fromEntries(metrics.map((m) => [m, rows.length ? rows.reduce((s, r) => s + r[m], 0) / rows.length : 0]));
  /** @type {Record<string, Record<string, number>>} */
  const table = {};
  const types = [...byType.keys()].sort();
  for (const t of types) table[t] = { ...mean(byType.get(t) ?? []), n: byType.get(t)?.length ?? 0 };
  const every = types.flatMap((t) => byType.get(t) ?? []);
  const noAdv = types.filter((t) => t !== ADV).flatMap((t) => byType.get(t) ?? []);
  table.all = { ...mean(every), n: every.length };
  table['all-no-adv'] = { ...mean(noAdv), n: noAdv.length };
  /** @param {string[]} ts */
  const macro = (ts) => ({ ...Object.fromEntries(metrics.map((m) => [m, ts.length ? ts.reduce((s, t) => s + table[t][m], 0) / ts.length : 0])), n: ts.length });
  table.macro = macro(types);
  table['macro-no-adv'] = macro(types.filter((t) => t !== ADV));
  for (const row of Object.values(table)) for (const m of metrics) row[m] = round(row[m], 4);
  return { table, metrics, k_not_available: na, missing_queries: missing, skipped_no_evidence: skipped, max_results: maxLen };
}

/**
 * Which metrics fit a set: "documents" when any label names a source (a chunk), else "memories".
 * @param {LabelledQuery[]} queries
 * @returns {'documents' | 'memories'}
 */
export function detectSet(queries) {
  return queries.some((q) => (q.relevant ?? []).some((l) => 'source' in l)) ? 'documents' : 'memories';
}
