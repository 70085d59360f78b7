import { MemloomError } from '../../errors.js';
import { ARMS, toInstant } from '../../store.js';
import { UsageError, positiveInt, splitList } from '../args.js';
import { readJsonlAll } from '../jsonl.js';
import { err, vectorArmNote } from '../output.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'recall',
  summary: 'search docs and memories: vector, keyword and entity arms fused',
  description:
    'Searches the store with three arms at once (vector, keyword, entity) fused by reciprocal rank fusion; every result says which arms voted and at what rank. ' +
    'What the vector arm can match depends on the store\'s embedder (memloom stats, --explain): hash-v1 only shared words and identifiers, static-v2 (and static-v1) some distilled meaning, an embeddings API the model\'s meaning. ' +
    'Superseded memories are never returned.',
  args: [{ name: 'query?', description: 'what to look for (quote it); omit with --batch' }],
  options: [
    { flags: '--limit <n>', description: 'how many results (10)', parse: (s) => positiveInt(s, '--limit') },
    { flags: '--explain', description: 'show each result\'s fusion terms, and what the vector arm can match' },
    { flags: '--arms <list>', description: `only these arms vote: a comma-separated subset of ${ARMS.join(',')}` },
    { flags: '--kinds <list>', description: 'only these kinds: memory, chunk or both' },
    { flags: '--batch <queries.jsonl>', description: 'one JSONL line {id, results} per {id, query} line (needs --json); a line\'s asOf / since / until override the flags', complete: 'file' },
    { flags: '--as-of <when>', description: 'what was believed then: the versions valid at that instant (2026-03-01T12:00Z; docs/TIME.md)' },
    { flags: '--since <when>', description: 'only memories whose event time (remember --at) is at or after it (inclusive)' },
    { flags: '--until <when>', description: 'only memories whose event time is at or before it (inclusive; a date means its end)' },
  ],
  examples: [
    ['memloom recall "how do I roll back a deploy"', 'the 10 best chunks and memories'],
    ['memloom recall ERR_REQUIRE_ESM --arms keyword --explain', 'the keyword arm alone, with its terms'],
    ['memloom recall "who is on call" --as-of 2026-03-01T12:00Z', 'the answer as it stood then'],
    ['memloom recall --batch queries.jsonl --json --limit 10 > results.jsonl', 'a labelled set, for scoring (see memloom eval)'],
  ],
  json: '{query, results: [{id, kind, source, breadcrumb, key, content, rrfScore, similarity, ranks: {vector, keyword, entity}, explain?}], tookMs, explain?: {embedder, k, weights, embedMs, queryMs, vectorArm}} (explain with --explain; schema/recall-response.json); --batch: one {id, results} line per query',
  async run(ctx, [query], o) {
    const opts = recallOptions(o);
    if (o.batch) {
      if (query !== undefined) throw new UsageError('recall --batch takes no query argument');
      if (!ctx.json) throw new UsageError('recall --batch writes JSONL: add --json');
      const queries = await readQueries(o.batch);
      return ctx.withStore(async (store) => {
        const times = [];
        const bar = ctx.progress('queries');
        const started = Date.now();
        for (const [i, q] of queries.entries()) {
          const r = await store.recall(q.query, { ...opts, asOf: q.asOf ?? opts.asOf, since: q.since ?? opts.since, until: q.until ?? opts.until });
          times.push(r.tookMs);
          ctx.out(JSON.stringify({ id: q.id, results: r.results }));
          bar.update({ done: i + 1, total: queries.length, started });
        }
        bar.done();
        times.sort((a, b) => a - b);
        const pct = (/** @type {number} */ p) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
        ctx.info(`${queries.length} queries; recall latency p50 ${pct(0.5).toFixed(1)} ms, p95 ${pct(0.95).toFixed(1)} ms`);
        return 0;
      });
    }
    if (query === undefined) throw new UsageError('recall takes one query argument (quote it), or --batch queries.jsonl --json');
    return ctx.withStore(async (store) => {
      const r = await store.recall(query, opts);
      const note = opts.explain ? vectorArmNote(store.embedder) : undefined;
      if (ctx.json) ctx.outJson(note && r.explain ? { ...r, explain: { ...r.explain, vectorArm: note } } : r);
      else printRecall(ctx, r, opts, note);
      return 0;
    });
  },
};

/**
 * The store's recall options from the flags (shared with eval).
 * @param {{ limit?: number, explain?: boolean, arms?: string, kinds?: string, asOf?: string, since?: string, until?: string }} o
 */
export function recallOptions(o) {
  /** @type {{ explain: boolean, limit?: number, arms?: string[], kinds?: string[], asOf?: Date, since?: Date, until?: Date }} */
  const opts = { explain: !!o.explain };
  for (const [flag, opt] of /** @type {const} */ ([['as-of', 'asOf'], ['since', 'since'], ['until', 'until']])) {
    if (o[opt] !== undefined) opts[opt] = toInstant(o[opt], `--${flag}`, { endOfDay: opt === 'until' });
  }
  if (o.limit !== undefined) opts.limit = o.limit;
  if (o.arms !== undefined) opts.arms = parseArms(o.arms);
  if (o.kinds !== undefined) {
    opts.kinds = splitList(o.kinds);
    if (opts.kinds.some((k) => k !== 'memory' && k !== 'chunk')) throw new UsageError(`--kinds takes memory, chunk or both, not "${o.kinds}"`);
  }
  return opts;
}

/** @param {string} s */
export function parseArms(s) {
  const arms = splitList(s);
  const bad = arms.filter((a) => !ARMS.includes(a));
  if (bad.length || arms.length === 0) throw new UsageError(`--arms takes a comma-separated subset of ${ARMS.join(',')}, not "${s}"`);
  return arms;
}

/** {id, query} lines of a JSONL file (other fields, e.g. labels, are ignored). @param {string} path */
export function readQueries(path) {
  return readJsonlAll(path, (obj, where) => {
    if (obj.id === undefined || obj.id === null) throw new MemloomError(`${where}: missing "id"`);
    if (typeof obj.query !== 'string' || obj.query.trim() === '') throw new MemloomError(`${where}: "query" must be a non-empty string`);
    /** @type {{ id: any, query: string, obj: any, asOf?: Date, since?: Date, until?: Date }} */
    const q = { id: obj.id, query: obj.query, obj };
    for (const opt of /** @type {const} */ (['asOf', 'since', 'until'])) {
      if (obj[opt] != null) q[opt] = toInstant(obj[opt], `${where}: "${opt}"`, { endOfDay: opt === 'until' });
    }
    return q;
  });
}

/**
 * @param {import('../context.js').Context} ctx
 * @param {any} r
 * @param {{ explain: boolean }} opts
 * @param {string | undefined} note
 */
function printRecall(ctx, r, opts, note) {
  if (note) ctx.out(`vector arm: ${note}`);
  if (r.results.length === 0) {
    ctx.out(`no results for "${r.query}"`);
    return;
  }
  for (const [i, h] of r.results.entries()) {
    const where = h.kind === 'memory' ? `memory${h.key ? ` ${h.key}` : ''} (id ${h.id})` : `${h.source} — ${h.breadcrumb}`;
    const ranks = ARMS.map((a) => `${a} ${h.ranks[a] ?? '–'}`).join(' · ');
    ctx.out(`${i + 1}. ${where}`);
    ctx.out(`   score ${h.rrfScore.toFixed(4)}  similarity ${h.similarity.toFixed(3)}  ranks: ${ranks}`);
    if (opts.explain && h.explain) {
      const terms = ARMS.filter((a) => h.explain.terms[a])
        .map((a) => {
          const t = h.explain.terms[a];
          return `${a} ${t.weight}/(${h.explain.k}+${t.rank}) = ${t.term.toFixed(4)}`;
        })
        .join(' + ');
      // Past the voted candidates, rows come unscored (sql/0010): say so rather than "rrf = ".
      ctx.out(terms ? `   rrf = ${terms}` : '   no arm voted: listed after the fused results, by its position in the deeper arm lists');
    }
    const text = h.kind === 'chunk' && h.breadcrumb && h.content.startsWith(h.breadcrumb) ? h.content.slice(h.breadcrumb.length) : h.content;
    const oneLine = text.replace(/\s+/g, ' ').trim();
    ctx.out(`   ${oneLine.length > 160 ? oneLine.slice(0, 157) + '...' : oneLine}`);
  }
  if (!ctx.quiet) err(`memloom: ${r.results.length} results in ${r.tookMs.toFixed(1)} ms`);
}
