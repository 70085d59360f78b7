// Recall: the query embedded, then ONE memloom_fuse call (sql/memloom/08_fusion.sql).
import { MemloomError } from '../errors.js';
import { checkWindow, ensureReady } from '../core.js';
import { embedTexts } from './embedder.js';
import { ARMS, recallResponse } from '../recall-response.js';
import { checkNoNul, toInstant } from './input.js';
/** @import { Store } from './store.js' */

/** The recall arms, in fusion order (the recall response's, src/recall-response.js). */
export { ARMS };

/** Store#recall (store.js documents it). @param {Store} store @param {string} query @param {import('../types.js').RecallOptions} [options] */
export async function recall(store, query, options = {}) {
  const started = performance.now();
  if (typeof query !== 'string' || query.trim() === '') throw new MemloomError('recall needs a non-empty query');
  checkNoNul(query, 'the query');
  const { limit = 10, kinds, weights = {}, k, candidates, keywordFloor, arms, explain = false } = options;
  // The instant rule is the core's; a browser store with an API embedder may not have loaded it.
  if (options.asOf != null || options.since != null || options.until != null) await ensureReady();
  const asOf = toInstant(options.asOf, 'asOf');
  const since = toInstant(options.since, 'since');
  const until = toInstant(options.until, 'until', { endOfDay: true });
  checkWindow(since, until);
  if (!Number.isInteger(limit) || limit <= 0) throw new MemloomError(`limit must be a positive integer, not ${limit}`);
  const enabled = new Set(arms ?? ARMS);
  for (const a of enabled) {
    if (!ARMS.includes(a)) throw new MemloomError(`unknown arm "${a}"; arms are ${ARMS.join(', ')}`);
  }
  for (const kind of kinds ?? []) {
    if (kind !== 'memory' && kind !== 'chunk') throw new MemloomError(`unknown kind "${kind}"; kinds are memory, chunk`);
  }
  const w = {};
  for (const a of ARMS) w[a] = weights[a] ?? null;
  const embedStarted = performance.now();
  const [vec] = await embedTexts(store, [query]);
  const embedMs = ms(performance.now() - embedStarted);
  // Named arguments: NULL would override a default, so only given ones are passed.
  const args = [query, vec, store.namespace, limit];
  const named = [];
  const add = (name, value, cast) => {
    if (value == null) return;
    args.push(value);
    named.push(`${name} => $${args.length}::${cast}`);
  };
  add('k', k, 'float8');
  add('w_vector', w.vector, 'float8');
  add('w_keyword', w.keyword, 'float8');
  add('w_entity', w.entity, 'float8');
  add('candidates', candidates, 'int4');
  add('keyword_floor', keywordFloor, 'float8');
  add('kinds', kinds, 'text[]');
  add('arms', arms ? ARMS.filter((a) => enabled.has(a)) : null, 'text[]');
  add('as_of', asOf, 'timestamptz');
  add('since', since, 'timestamptz');
  add('until', until, 'timestamptz');
  const sql = `SELECT * FROM memloom_fuse($1, $2::vector, $3, $4${named.map((n) => `, ${n}`).join('')})`;
  let rows;
  const queryStarted = performance.now();
  try {
    ({ rows } = await store.db.query(sql, args));
  } catch (e) {
    throw new MemloomError(`recall failed: ${e.message}`);
  }
  const queryMs = ms(performance.now() - queryStarted);
  const timings = { embedder: `${store.embedder.name}-v${store.embedder.version}`, embedMs, queryMs };
  // The explain terms are the core's; a browser store with an API embedder may not have loaded it.
  if (explain) await ensureReady();
  return recallResponse(query, rows, { tookMs: ms(performance.now() - started), explain, k, weights: w, timings });
}

/**
 * Store#_warmUp: one memloom_fuse call with a unit vector for the query's embedding (the
 * embedder is not called: an API embedder would be billed), read-only. A new backend's first
 * recall compiles memloom_fuse's PL/pgSQL and reads and plans what its arms touch (100-200 ms
 * on the Node docs store, 20 ms for the next): a process that opens a store to serve it (the
 * warm process, `memloom mcp`) runs this once, so that the first command it serves does not
 * pay it. Resolves when done; never rejects.
 * @param {Store} store
 */
export async function warmUp(store) {
  const unit = `[1${',0'.repeat(store.embedder.dims - 1)}]`;
  await store.db.query('SELECT count(*) FROM memloom_fuse($1, $2::vector, $3, 1)', ['memloom', unit, store.namespace]).catch(() => {});
}

/** Milliseconds, to two decimals. @param {number} t */
function ms(t) {
  return Math.round(t * 100) / 100;
}
