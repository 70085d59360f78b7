// What a store holds (memloom_stats, sql/memloom/14_reads.sql), its embedder and vector index.
import { storedEmbedder } from './embedder.js';
import { EMBEDDED_HNSW_THRESHOLD, HNSW_MAX_DIMS, hasVectorIndex } from './maintenance.js';
/** @import { Store } from './store.js' */

/** Store#stats (store.js documents it). @param {Store} store */
export async function stats(store) {
  const ns = store.namespace;
  // One namespace's counts in one call (memloom_stats, sql/memloom/14_reads.sql).
  const [n] = (await store.db.query('SELECT * FROM memloom_stats($1)', [ns])).rows;
  const [schema] = (await store.db.query('SELECT max(version)::int AS v FROM memloom_migrations')).rows;
  return {
    location: store.location,
    backend: store.kind,
    namespace: ns,
    embedder: await storedEmbedder(store),
    schemaVersion: schema.v,
    files: n.files,
    chunks: n.chunks,
    memories: { active: n.active_memories, superseded: n.superseded_memories, keys: n.keys },
    entities: n.entities,
    unindexed: n.unindexed,
    vectorIndex: (await hasVectorIndex(store))
      ? 'hnsw'
      : store.embedder.dims > HNSW_MAX_DIMS
        ? `exact (HNSW takes at most ${HNSW_MAX_DIMS} dimensions)`
        : 'exact (no HNSW index below ' + EMBEDDED_HNSW_THRESHOLD + ' items)',
  };
}
