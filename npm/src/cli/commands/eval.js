import { MemloomError } from '../../errors.js';
import { ARMS } from '../../store.js';
import { detectSet, scoreDocuments, scoreMemories } from '../../eval.js';
import { UsageError, positiveInt, splitList } from '../args.js';
import { readJsonlAll } from '../jsonl.js';

const SETS = ['documents', 'memories'];

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'eval',
  summary: 'score a labelled query set against the store: S@k, R@k, MRR, nDCG, fused and per arm',
  description:
    'Recalls every query of a labelled JSONL set ({id, type, query, relevant: [{source, heading} | {memory_key}], stale?}, the format of the shared evaluation sets) against the current store and scores the results by query type. ' +
    'documents (a label names a source file and heading): S@1, S@5, MRR, nDCG@10, R@10 and stale leaks, as score.py. ' +
    'memories (every label a memory_key): R@k and Hit@k for k 5, 10, 20, and MRR, as score_locomo.py. ' +
    'Each run of --arms recalls the whole set once: "fused" (every arm) or one arm alone, so you see what the embedder, the weights and indexing do on your data.',
  args: [{ name: 'queries', description: 'a JSONL file of labelled queries' }],
  options: [
    { flags: '--arms <runs>', description: `runs, comma-separated: fused, ${ARMS.join(', ')}, arms joined with + (keyword+entity), or "each" (fused and every arm); default fused` },
    { flags: '--set <kind>', description: 'documents or memories (default: documents when a label names a source)', choices: SETS },
    { flags: '--limit <n>', description: 'results per query (default 10 for documents, 20 for memories)', parse: (s) => positiveInt(s, '--limit') },
    { flags: '--kinds <list>', description: 'only these kinds: memory, chunk or both' },
  ],
  examples: [
    ['memloom eval queries.jsonl', 'fused recall scored by query type'],
    ['memloom eval queries.jsonl --arms each', 'fused next to each arm alone'],
    ['memloom eval locomo.jsonl --set memories --json', 'evidence recall as JSON'],
  ],
  json: '{set, queries, limit, runs: {<run>: table}}: a documents table is {<type>|all: {s1, s5, mrr, ndcg, recall, n, stale_leaks}, missing_queries} (score.py --json); a memories table is {table: {<type>|all|all-no-adv|macro|macro-no-adv: {R@k, Hit@k, MRR, n}}, metrics, k_not_available, missing_queries, skipped_no_evidence, max_results} (score_locomo.py --json)',
  async run(ctx, [file], o) {
    const runs = parseRuns(o.arms ?? 'fused');
    const kinds = o.kinds === undefined ? undefined : splitList(o.kinds);
    if (kinds?.some((k) => k !== 'memory' && k !== 'chunk')) throw new UsageError(`--kinds takes memory, chunk or both, not "${o.kinds}"`);
    const queries = await readJsonlAll(file, (obj, where) => {
      if (obj.id === undefined || obj.id === null) throw new MemloomError(`${where}: missing "id"`);
      if (typeof obj.query !== 'string' || obj.query.trim() === '') throw new MemloomError(`${where}: "query" must be a non-empty string`);
      if (obj.relevant !== undefined && !Array.isArray(obj.relevant)) throw new MemloomError(`${where}: "relevant" must be a list of {source, heading} or {memory_key}`);
      for (const l of obj.relevant ?? []) {
        const ok = l && typeof l === 'object' && (typeof l.memory_key === 'string' || (typeof l.source === 'string' && typeof l.heading === 'string'));
        if (!ok) throw new MemloomError(`${where}: each "relevant" label is {"source": file name, "heading": ...} or {"memory_key": ...}, not ${JSON.stringify(l)}`);
      }
      return obj;
    });
    if (!queries.some((q) => q.relevant?.length)) throw new MemloomError(`${file}: no query has "relevant" labels, so there is nothing to score`);
    const set = o.set ?? detectSet(queries);
    const limit = o.limit ?? (set === 'documents' ? 10 : 20);
    return ctx.withStore(async (store) => {
      /** @type {Record<string, any>} */
      const tables = {};
      for (const run of runs) {
        const bar = ctx.progress('queries', { label: `eval ${run.name}` });
        const started = Date.now();
        /** @type {Map<string, any[]>} */
        const got = new Map();
        for (const [i, q] of queries.entries()) {
          const r = await store.recall(q.query, { limit, ...(run.arms ? { arms: run.arms } : {}), ...(kinds ? { kinds } : {}) });
          got.set(String(q.id), r.results);
          bar.update({ done: i + 1, total: queries.length, started });
        }
        bar.done();
        tables[run.name] = set === 'documents' ? scoreDocuments(queries, got) : scoreMemories(queries, got);
        ctx.info(`eval: ${run.name}: ${queries.length} queries in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
      if (ctx.json) ctx.outJson({ set, queries: queries.length, limit, runs: tables });
      else for (const [name, t] of Object.entries(tables)) ctx.out(set === 'documents' ? documentsText(name, t) : memoriesText(name, t));
      return 0;
    });
  },
};

/**
 * @param {string} s  "fused,vector,keyword+entity" or "each"
 * @returns {{ name: string, arms?: string[] }[]}
 */
export function parseRuns(s) {
  const names = s === 'each' ? ['fused', ...ARMS] : splitList(s);
  if (names.length === 0) throw new UsageError('--arms takes fused, an arm, arms joined with +, or each');
  return names.map((name) => {
    if (name === 'fused') return { name };
    const arms = name.split('+');
    const bad = arms.filter((a) => !ARMS.includes(a));
    if (bad.length) throw new UsageError(`--arms: "${bad[0]}" is not an arm; runs are fused, ${ARMS.join(', ')}, arms joined with + (keyword+entity), or each`);
    return { name, arms };
  });
}

/** @param {number} x @param {number} w */
const f = (x, w) => x.toFixed(3).padStart(w);

/** @param {string} name @param {Record<string, any>} t */
function documentsText(name, t) {
  const lines = [`${name}`, `${'type'.padEnd(12)}${'n'.padStart(4)}${'S@1'.padStart(7)}${'S@5'.padStart(7)}${'MRR'.padStart(7)}${'nDCG@10'.padStart(9)}${'R@10'.padStart(7)}${'stale'.padStart(7)}`];
  for (const [type, m] of Object.entries(t)) {
    if (typeof m !== 'object') continue;
    lines.push(`${type.padEnd(12)}${String(m.n).padStart(4)}${f(m.s1, 7)}${f(m.s5, 7)}${f(m.mrr, 7)}${f(m.ndcg, 9)}${f(m.recall, 7)}${String(m.stale_leaks).padStart(7)}`);
  }
  lines.push(`missing queries: ${t.missing_queries}`, '');
  return lines.join('\n');
}

/** @param {string} name @param {any} s */
function memoriesText(name, s) {
  const ms = s.metrics;
  const lines = [`${name}`, `${'type'.padEnd(14)}${'n'.padStart(5)}${ms.map((/** @type {string} */ m) => m.padStart(8)).join('')}`];
  for (const [type, row] of Object.entries(s.table)) {
    lines.push(`${type.padEnd(14)}${String(/** @type {any} */ (row).n).padStart(5)}${ms.map((/** @type {string} */ m) => f(/** @type {any} */ (row)[m], 8)).join('')}`);
  }
  lines.push(
    `skipped (no evidence): ${s.skipped_no_evidence}; longest result list: ${s.max_results}` + (s.k_not_available.length ? `; k n/a: ${s.k_not_available.join(', ')}` : ''),
    '',
  );
  return lines.join('\n');
}
