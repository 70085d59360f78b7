// Entity indexing for the entity arm: extract, embed new entities, write mentions in batches
// (memloom_index_batch), prune what nothing mentions.
import { entityKinds } from '../core.js';
import { vectorsParam } from './vectors.js';
import { offlineExtractor } from '../extractors.js';
import { analyzeIfGrown, withVectorIndexDeferred } from './maintenance.js';
/** @import { Store } from './store.js' */

/** Items per index transaction. */
const INDEX_BATCH = 500;

/** Store#index (store.js documents it). @param {Store} store @param {import('../types.js').IndexOptions} [options] */
export async function indexEntities(store, options = {}) {
  return withVectorIndexDeferred(store, () => indexItems(store, options));
}

/** @param {Store} store @param {import('../types.js').IndexOptions} options */
async function indexItems(store, { onProgress, onWarning, extractor, all = false, batchSize = INDEX_BATCH }) {
  const ns = store.namespace;
  const ex = extractor ?? offlineExtractor();
  if (all) await store.db.query('SELECT memloom_reset_index($1)', [ns]);
  const started = Date.now();
  const unindexed = (after) =>
    store.db.query('SELECT id, breadcrumb, content, content_hash FROM memloom_unindexed($1, $2, $3)', [ns, after, Number(batchSize)]);
  // The progress total: a first batch that is not full is all there is. Only a longer run
  // counts (memloom_stats reads every item of the namespace, which a run that indexes a few
  // new memories need not).
  let next = await unindexed(0);
  const total = next.rows.length < batchSize ? next.rows.length : (await store.db.query('SELECT unindexed FROM memloom_stats($1)', [ns])).rows[0].unindexed;
  // entities: the distinct entities the indexed items mention (found or created);
  // newEntities: of those, the ones this run created (a re-index of an indexed store: 0).
  const report = { items: 0, entities: 0, newEntities: 0, mentions: 0, fallbacks: 0, removedMentions: 0, removedEntities: 0, extractor: ex.id };
  const mentioned = new Set();
  for (;;) {
    const { rows } = next;
    if (rows.length === 0) break;
    const after = Number(rows[rows.length - 1].id);
    // The chunk's stored breadcrumb line is passed as the breadcrumb, not as text.
    const items = rows.map((r) => {
      const prefix = r.breadcrumb ? `${r.breadcrumb}\n\n` : '';
      const text = prefix && r.content.startsWith(prefix) ? r.content.slice(prefix.length) : r.content;
      return { id: Number(r.id), text, breadcrumb: r.breadcrumb ?? null };
    });
    const extracted = await ex.extract(items, { onWarning });
    // item -> mentions, one edge per (entity, item).
    const edges = new Map();
    const names = new Map();
    for (const [i, it] of items.entries()) {
      if (extracted[i]?.fallback) report.fallbacks++;
      for (const m of extracted[i]?.mentions ?? []) {
        const key = `${m.kind}\u0000${m.name}`;
        names.set(key, { name: m.name, kind: m.kind });
        const edge = `${key}\u0000${it.id}`;
        const prev = edges.get(edge);
        if (!prev || prev.strength < m.strength) edges.set(edge, { item: it.id, key, strength: m.strength });
      }
    }
    // Entities the namespace lacks are embedded before the transaction (an API embedder may be
    // slow); memloom_index_batch (sql/migrations/0013_bulk_writes.sql) adds them, replaces the items'
    // mentions and marks them indexed, in one statement. Never as a bulk load (its `bulk`
    // argument): each transaction keeps the entity frequencies exact as it commits (a few
    // mentions per item), where a bulk load is followed by memloom_refresh_stats, which also
    // recomputes the namespace's keyword statistics that an index run never changes: a first
    // run over the Node docs 0.95x the time of the bulk one, `index --all` 0.81x, the same
    // statistics (docs/BENCHMARKS.md, "An index run is not a bulk load").
    const all = [...names.values()];
    const present = new Set();
    if (all.length > 0) {
      const { rows: found } = await store.db.query('SELECT name, kind FROM memloom_find_entities($1, $2::text[], $3::text[])', [
        ns,
        all.map((e) => e.name),
        all.map((e) => e.kind),
      ]);
      for (const f of found) present.add(`${f.kind}\u0000${f.name}`);
    }
    const fresh = all.filter((e) => !present.has(`${e.kind}\u0000${e.name}`));
    const freshVectors = fresh.length > 0 ? await store.embedder.embed(fresh.map((e) => entityEmbeddingText(e.name, e.kind, store.embedder))) : [];
    const vectorOf = new Map(fresh.map((e, i) => [`${e.kind}\u0000${e.name}`, freshVectors[i]]));
    const position = new Map([...names.keys()].map((key, i) => [key, i + 1]));
    const edgeList = [...edges.values()];
    const { rows: out } = await store.db.transaction((tx) =>
      tx.query(
        `SELECT entities, mentions FROM memloom_index_batch($1, $2, $3, $4, $5, $6::vector[], $7, $8, $9)`,
        [
          ns,
          rows.map((r) => Number(r.id)),
          rows.map((r) => r.content_hash),
          all.map((e) => e.name),
          all.map((e) => e.kind),
          vectorsParam(store, [...names.keys()].map((key) => vectorOf.get(key) ?? null)),
          edgeList.map((x) => x.item),
          edgeList.map((x) => position.get(x.key)),
          edgeList.map((x) => x.strength),
        ],
      ),
    );
    report.newEntities += Number(out[0].entities);
    report.items += rows.length;
    report.mentions += edgeList.length;
    for (const x of edgeList) mentioned.add(x.key);
    report.entities = mentioned.size;
    onProgress?.({ done: report.items, total, started, entities: report.entities, newEntities: report.newEntities, mentions: report.mentions, fallbacks: report.fallbacks });
    next = await unindexed(after);
  }
  // Stale edges: superseded items keep no mentions, and entities nothing mentions go.
  const { rows: pruned } = await store.db.query('SELECT mentions, entities FROM memloom_prune_index($1)', [ns]);
  report.removedMentions = Number(pruned[0].mentions);
  report.removedEntities = Number(pruned[0].entities);
  report.seconds = (Date.now() - started) / 1000;
  if (report.items + report.removedMentions + report.removedEntities > 0) await analyzeIfGrown(store);
  return report;
}


/**
 * The text an entity's embedding is computed from. A model embedder gets its name and kind
 * (`ERR_REQUIRE_ESM (error code)`); hash-v1 gets the name alone: it has no notion of a kind,
 * and the kind's words would pull a one-word name under the entity gate ("ETIMEDOUT" against
 * "ETIMEDOUT (error code)" is 0.53 < 0.60). static-v1 and -v2 are part hash-v1, and the kind's
 * words would pull their static half too.
 */
export function entityEmbeddingText(name, kind, embedder) {
  if (embedder?.name === 'hash' || embedder?.name === 'static') return name;
  return `${name} (${entityKinds().find((k) => k.kind === kind)?.words ?? kind})`;
}
