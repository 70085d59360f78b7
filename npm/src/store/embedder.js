// The store's embedder: the one it was built with (memloom_meta), the static table on a server,
// and the vectors of texts as `vector` parameters (store/vectors.js).
import { ensureReady } from '../core.js';
import { vectorParam } from './vectors.js';
import { MemloomError } from '../errors.js';
import { HNSW_MAX_DIMS } from './maintenance.js';
import { OFFLINE_EMBEDDERS } from '../embedders.js';
/** @import { Store } from './store.js' */

/** Store#storedEmbedder (store.js documents it). @param {Store} store */
export async function storedEmbedder(store) {
  const { rows } = await store.db.query('SELECT embedder_name, embedder_version, embedder_dims FROM memloom_meta');
  if (rows.length === 0 || rows[0].embedder_name == null) return null;
  return { name: rows[0].embedder_name, version: Number(rows[0].embedder_version), dims: Number(rows[0].embedder_dims) };
}

/** Store#loadStaticTable (store.js documents it). @param {Store} store @param {{ ifMissing?: boolean }} [options] */
export async function loadStaticTable(store, { ifMissing = false } = {}) {
  if (store.kind !== 'server' || store.embedder.name !== 'static') return 0; // static-v1 and -v2: one table
  if (ifMissing) {
    const { rows } = await store.db.query('SELECT EXISTS (SELECT FROM memloom_static_table) AS loaded');
    if (rows[0].loaded) return 0;
  }
  const bytes = await store.embedder.table();
  try {
    const { rows } = await store.db.query('SELECT memloom_load_static_table($1) AS n', [Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]);
    return rows[0].n;
  } catch (err) {
    if (ifMissing && err.code === '42501') return 0;
    throw new MemloomError(`cannot load the ${store.embedder.id} table into the database (the edge worker embeds with it): ${err.message}; run memloom init as the store's owner`);
  }
}

/**
 * A store not initialised yet takes this run's embedder (memloom_init_store sizes its vector
 * columns to the embedder's dimensions); an initialised one must match it.
 *
 * `adopt` (a store opened without an embedder): an initialised store embeds with the offline
 * one it was built with, so a store made with `--embedder static-v2` needs no setting on every
 * later command, and its vectors never meet another embedder's. A store built through an
 * embeddings API keeps the default here, and the check below says which URL and model to set:
 * its key and address are the caller's to give.
 * @param {Store} store
 * @param {{ adopt?: boolean }} [o]
 */
export async function initEmbedder(store, { adopt = false } = {}) {
  const stored = await storedEmbedder(store);
  const own = adopt && stored && OFFLINE_EMBEDDERS[`${stored.name}-v${stored.version}`];
  if (own && (stored.name !== store.embedder.name || stored.version !== store.embedder.version)) store.embedder = own();
  const e = store.embedder;
  if (stored && stored.name === e.name && stored.version === e.version && stored.dims === e.dims) {
    await loadStaticTable(store, { ifMissing: true });
    return;
  }
  if (!stored) {
    // A server builds the HNSW indexes now; the embedded store when it is large (maintainVectorIndex).
    const index = store.kind === 'server' && e.dims <= HNSW_MAX_DIMS;
    try {
      await store.db.query('SELECT memloom_init_store($1, $2, $3, $4)', [e.name, e.version, e.dims, index]);
    } catch (err) {
      throw new MemloomError(`cannot initialise the store for ${e.id} (${e.dims} dimensions): ${err.message}`);
    }
    await loadStaticTable(store);
    return;
  }
  const storedId = `${stored.name}-v${stored.version}`;
  throw new MemloomError(
    `this store was built with the ${storedId} embedder (${stored.dims} dimensions) but this run embeds with ${e.id} (${e.dims} dimensions); ` +
      (stored.name === 'hash' || stored.name === 'static'
        ? `set MEMLOOM_EMBEDDER=${storedId} (or --embedder ${storedId}), or name no embedder (the store then uses its own), and unset MEMLOOM_EMBED_URL, `
        : `set MEMLOOM_EMBED_URL / MEMLOOM_EMBED_MODEL=${stored.name.replace(/^api:/, '')} / MEMLOOM_EMBED_DIMS=${stored.dims} as when it was built, `) +
      'or ingest into a new store (--store DIR)',
  );
}

/** The texts' vectors as `vector` parameters (store/vectors.js). @param {Store} store @param {string[]} texts */
export async function embedTexts(store, texts) {
  const vectors = await store.embedder.embed(texts);
  // A browser store with an API embedder may not have loaded the core yet.
  await ensureReady();
  return vectors.map(vectorParam);
}
