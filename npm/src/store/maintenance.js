// What a write leaves to do: planner statistics when a table has grown, the statistics recomputed
// after a bulk load, and the vector index policy of the embedded store.
/** @import { Store } from './store.js' */

/**
 * The embedded store searches vectors exactly (a sequential scan: exact top-k) until it holds
 * this many active items, then builds the HNSW indexes (45-60 s for 20k rows in single-threaded
 * wasm, and every later insert pays to maintain it: HNSW from the first row made the Node docs'
 * ingest 3.4x slower and the vector arm's top 10 only 89% of the exact one, docs/BENCHMARKS.md
 * "Embedded recall"). The exact search reads the vectors through a one-list IVFFlat index
 * (memloom_items_exact, sql/0040: every distance from the vectors alone, not the whole rows),
 * which the HNSW build replaces. A server store builds the indexes at init
 * (memloom_init_store), and again after the first bulk write into it (withVectorIndexDeferred).
 */
export const EMBEDDED_HNSW_THRESHOLD = 20_000;
/**
 * The embedded store's HNSW build gets the memory its graph needs, up to this many MB (PGlite's
 * maintenance_work_mem is 64MB). pgvector builds the graph in memory while it fits and much more
 * slowly once it does not: 100k rows of 256 dimensions took 98 s at 64MB, 109 s at 128MB
 * (still too small) and 48 s at 256MB, for 80 MB more peak RSS (docs/BENCHMARKS.md "Bulk
 * remember"). A graph larger than this builds with the default, as before: it spills to disk
 * anyway, and a huge import's memory stays bounded. A server keeps its operator's setting.
 */
export const EMBEDDED_INDEX_BUILD_MAX_MB = 256;
/** pgvector's graph in memory, per row: the vector (4 bytes a dimension) and about 1 KB of neighbour lists and element (m = 16). */
const GRAPH_BYTES_PER_ROW = 1024;
/** maintenance_work_mem's own default (PGlite, PostgreSQL). */
const DEFAULT_BUILD_MB = 64;

/**
 * maintenance_work_mem for building the indexes over `rows` rows of `dims` dimensions: the
 * graph's estimate with a quarter to spare when that is above the default and within the cap,
 * else null (keep the default).
 * @param {number} rows
 * @param {number} dims
 */
export function indexBuildMemoryMb(rows, dims) {
  const mb = Math.ceil((rows * (dims * 4 + GRAPH_BYTES_PER_ROW) * 1.25) / 2 ** 20);
  return mb > DEFAULT_BUILD_MB && mb <= EMBEDDED_INDEX_BUILD_MAX_MB ? mb : null;
}
/** pgvector's HNSW indexes `vector` columns of at most this many dimensions; above, exact search. */
export const HNSW_MAX_DIMS = 2000;
/** remember / forget run the planner-statistics growth check (memloom_analyze_if_grown) every this many. */
export const ANALYZE_CHECK_EVERY = 64;

/**
 * After a write: planner statistics when a pool table has grown, and on the embedded store the
 * vector index policy. The keyword and entity statistics need nothing here: the writing
 * transaction kept them exact (sql/memloom/04_statistics.sql), so a write costs what it
 * writes, not the namespace. `small` (remember, forget): the growth check runs every
 * ANALYZE_CHECK_EVERY such writes, not each time (it costs a few catalog reads).
 * @param {Store} store
 * @param {{ small?: boolean, onIndexBuild?: (e: { items: number }) => void }} [options] onIndexBuild:
 *   told before the embedded store builds its HNSW indexes (15 s to a minute per 25k items),
 *   so a long import can say why it went quiet.
 */
export async function afterWrite(store, { small = false, onIndexBuild } = {}) {
  if (!small || ++store._smallWrites % ANALYZE_CHECK_EVERY === 0) await analyzeIfGrown(store);
  await maintainVectorIndex(store, { onIndexBuild });
}

/**
 * memloom_analyze_if_grown: ANALYZE of a pool table never analyzed or grown by 10% since.
 * PGlite has no autovacuum, and a server's may lag a bulk load: without planner statistics
 * the entity arm's join ran its HNSW scan once per mention row (26 s instead of 0.1 s on the
 * Node docs).
 * @param {Store} store
 */
export async function analyzeIfGrown(store) {
  await store.db.query('SELECT memloom_analyze_if_grown()');
  await vacuumEmbedded(store);
}

/** After a bulk load: the statistics recomputed once, and planner statistics (ANALYZE). @param {Store} store */
export async function refreshStats(store) {
  await store.db.query('SELECT memloom_refresh_stats($1)', [store.namespace]);
  await vacuumEmbedded(store);
}

/**
 * On the embedded store (no autovacuum), VACUUM of the pool tables whose pages are mostly not
 * marked all-visible (memloom_tables_to_vacuum, after an ANALYZE counted them), as autovacuum
 * would. It records the GIN indexes' sizes, without which the planner scanned every row for the
 * keyword arm instead of its GIN index, and marks the pages all-visible, so a scan checks no
 * row's visibility (docs/BENCHMARKS.md "Embedded recall", sql/0019). A VACUUM reads and cleans:
 * no row changes or moves. A server's own autovacuum does this there.
 * @param {Store} store
 */
async function vacuumEmbedded(store) {
  if (store.db.kind !== 'embedded') return;
  const { rows } = await store.db.query('SELECT memloom_tables_to_vacuum() AS tables');
  const tables = rows[0]?.tables ?? [];
  // One statement (VACUUM refuses a transaction block); the names come from the SQL function.
  if (tables.length > 0) await store.db.query(`VACUUM ${tables.map((t) => `"${String(t).replace(/"/g, '""')}"`).join(', ')}`);
}

/** The namespace's active items, from the statistics the writes keep. @param {Store} store */
export async function activeItems(store) {
  const { rows } = await store.db.query('SELECT memloom_active_items($1) AS n', [store.namespace]);
  return rows[0].n;
}

/** Store#maintainVectorIndex (store.js documents it). @param {Store} store @param {{ force?: boolean, onIndexBuild?: (e: { items: number }) => void }} [options] */
export async function maintainVectorIndex(store, { force = false, onIndexBuild } = {}) {
  if (store._vectorIndex) return true;
  if (store.embedder.dims > HNSW_MAX_DIMS) return false;
  const embedded = store.kind === 'embedded';
  const active = embedded ? await activeItemsAll(store) : null;
  // The catalog is read only past the threshold.
  if (embedded && !force && active < EMBEDDED_HNSW_THRESHOLD) return false;
  if (!embedded) {
    // Both indexes, whichever is missing, once per process: a first load killed during its
    // write leaves one to build (withVectorIndexDeferred). A role that does not own the tables
    // cannot build it (insufficient_privilege): the owner's next write does.
    try {
      await store.db.query('SELECT memloom_ensure_vector_index()');
    } catch (err) {
      if (/** @type {any} */ (err)?.code === '42501') return false;
      throw err;
    }
    return (store._vectorIndex = true);
  }
  // The pool's index holds its active items only (sql/0033). One built before holds every stored
  // version: rebuilt once, in the same transaction as its drop (a failed build keeps the old one).
  const present = await hasVectorIndex(store);
  const rebuild = present && (await store.db.query('SELECT memloom_vector_index_holds_history() AS h')).rows[0].h;
  if (!present || rebuild) {
    const { rows: [n] } = await store.db.query('SELECT count(*) AS entities FROM memloom_entities');
    onIndexBuild?.({ items: active });
    const mb = indexBuildMemoryMb(active + Number(n.entities), store.embedder.dims);
    await store.db.transaction(async (tx) => {
      if (mb) await tx.query(`SET LOCAL maintenance_work_mem = '${mb}MB'`);
      if (rebuild) await tx.query('DROP INDEX memloom_items_embedding');
      await tx.query('SELECT memloom_ensure_vector_index()');
    });
  }
  return (store._vectorIndex = true);
}

/**
 * The active items of every namespace, from the statistics the writes keep exact (a count(*)
 * read the whole pool on every write). @param {Store} store
 */
async function activeItemsAll(store) {
  const { rows } = await store.db.query(`SELECT coalesce(sum(doc_count), 0)::int AS n FROM memloom_namespace_stats`);
  return rows[0].n;
}

/**
 * A server store's first bulk write (the first ingest of a new store, its first index run):
 * memloom_defer_vector_index drops the HNSW index of a table that has no row yet, `write` runs,
 * and memloom_ensure_vector_index builds it once over what was written, also when `write`
 * fails (a process killed meanwhile leaves the build to its next write: maintainVectorIndex).
 * Inserting each row into the graph instead cost
 * the Node docs' first ingest 1.7 to 2.1 s of its write on a server, against about 0.3 s for
 * one build.
 * Elsewhere (the embedded store, a table with rows, a role that does not own the tables) it
 * only runs `write`.
 * @template T
 * @param {Store} store
 * @param {() => Promise<T>} write
 * @returns {Promise<T>}
 */
export async function withVectorIndexDeferred(store, write) {
  if (store.kind !== 'server') return write();
  const { rows } = await store.db.query('SELECT memloom_defer_vector_index() AS dropped');
  if ((rows[0].dropped ?? []).length === 0) return write();
  store._vectorIndex = false;
  let result;
  try {
    result = await write();
  } catch (err) {
    await store.db.query('SELECT memloom_ensure_vector_index()').catch(() => {});
    throw err;
  }
  await store.db.query('SELECT memloom_ensure_vector_index()');
  store._vectorIndex = true;
  return result;
}

/** Whether the HNSW indexes exist. @param {Store} store */
export async function hasVectorIndex(store) {
  const { rows } = await store.db.query('SELECT memloom_vector_index_exists() AS present');
  return rows[0].present;
}
