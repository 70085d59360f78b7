// Node entry: the wasm is read from disk and instantiated synchronously at import, so every
// core function is ready as soon as `import ... from 'memloom'` returns. `init()` exists for
// code shared with browsers and resolves at once.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initSync } from '../wasm/memloom_wasm.js';
import { setReady, setStaticDataLoader } from './core.js';
import { setDefaultDrivers } from './store.js';
import { lockStore } from './lock-node.js';

initSync({ module: readFileSync(new URL('../wasm/memloom_wasm_bg.wasm', import.meta.url)) });
setReady();
setStaticDataLoader(() => readFileSync(new URL('../data/static-v1.bin', import.meta.url)));
setDefaultDrivers(async () => ({
  openPglite: lockedPglite((await import('./db-pglite.js')).openPglite),
  openPg: (await import('./db-pg.js')).openPg,
  files: await import('./files-node.js'),
}));

/** An embedded store in a directory is locked for this process while open (lock-node.js). */
function lockedPglite(openPglite) {
  return async (dir, options, { create = true } = {}) => {
    if (dir === undefined || dir.includes('://')) return openPglite(dir, options);
    const release = lockStore(dir);
    let db;
    try {
      // A new store starts from the package's template data directory (template-node.js).
      if (create && !existsSync(join(dir, 'PG_VERSION'))) await (await import('./template-node.js')).fillFromTemplate(dir);
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

/** Loads the WebAssembly core; in Node it is loaded at import, so this resolves at once. */
export async function init() {}

export { chunk, embed, embedBatch, fuse, embedderInfo, extractEntities } from './core.js';
export { loadStaticModel, embedStaticBatch, tokenizeStatic, staticEmbedderInfo } from './core.js';
export { openStore, Store, MemloomError, ARMS, DEFAULT_NAMESPACE, EMBEDDED_HNSW_THRESHOLD, IMPORT_BATCH } from './store.js';
export { hashEmbedder, staticEmbedder, apiEmbedder, embedderFromEnv } from './embedders.js';
export { offlineExtractor, llmExtractor, extractorFromEnv } from './extractors.js';
export { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, decodeVector, encodeVector } from './export.js';
export { readLines } from './export-node.js';
