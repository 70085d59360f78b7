// Node entry of `memloom`: the core (entry-core-node.js: the wasm is instantiated at import) and
// the store: embedded PGlite in a directory or memory, or a PostgreSQL server by URL (`pg`, an
// optional peer dependency, loaded on the first server connection).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setDefaultDrivers } from './store.js';
import { lockStore } from './lock-node.js';

setDefaultDrivers(async () => ({
  openPglite: lockedPglite(await import('./db-pglite.js')),
  openPg: async (url) => (await import('./db-pg.js')).openPg(url),
  files: await import('./files-node.js'),
}));

/**
 * An embedded store in a directory is locked for this process while open (lock-node.js). When
 * the CLI's warm process holds it (warm-node.js), it is asked to close the store first.
 */
function lockedPglite({ openPglite, checkVectorBundle }) {
  // `assets` (browsers only) is not passed: Node reads PGlite's files from disk.
  return async (dir, options, { create = true, embedder } = {}) => {
    if (dir === undefined || dir.includes('://')) return openPglite(dir, options);
    let release;
    try {
      release = lockStore(dir);
    } catch (e) {
      if (!(await (await import('./warm-node.js')).releaseFromWarm(resolve(dir)))) throw e;
      release = lockStore(dir);
    }
    let db;
    try {
      // A new store starts from the package's template data directory (template-node.js),
      // initialised for its embedder when that is the default one, once pgvector's bundle is
      // known to be there (openPglite checks it too, after seconds).
      if (create && !existsSync(join(dir, 'PG_VERSION'))) {
        await checkVectorBundle();
        await (await import('./template-node.js')).fillFromTemplate(dir, { embedder });
      }
      db = await openPglite(dir, options);
    } catch (e) {
      release();
      throw e;
    }
    return {
      ...db,
      async close() {
        try {
          await db.close();
        } finally {
          release();
        }
      },
    };
  };
}

export * from './entry-core-node.js';
export { openStore, Store, ARMS, DEFAULT_NAMESPACE, EMBEDDED_HNSW_THRESHOLD, IMPORT_BATCH } from './store.js';
export { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, decodeVector, encodeVector } from './export.js';
export { readLines } from './export-node.js';
