// Node entry: the wasm is read from disk and instantiated synchronously at import, so every
// core function is ready as soon as `import ... from 'memloom'` returns. `init()` exists for
// code shared with browsers and resolves at once.
import { readFileSync } from 'node:fs';
import { initSync } from '../wasm/memloom_wasm.js';
import { setReady } from './core.js';
import { setDefaultDrivers } from './store.js';

initSync({ module: readFileSync(new URL('../wasm/memloom_wasm_bg.wasm', import.meta.url)) });
setReady();
setDefaultDrivers(async () => ({
  openPglite: (await import('./db-pglite.js')).openPglite,
  openPg: (await import('./db-pg.js')).openPg,
  files: await import('./files-node.js'),
}));

/** Loads the WebAssembly core; in Node it is loaded at import, so this resolves at once. */
export async function init() {}

export { chunk, embed, embedBatch, fuse, embedderInfo, extractEntities } from './core.js';
export { openStore, Store, MemloomError, ARMS, DEFAULT_NAMESPACE, EMBEDDED_HNSW_THRESHOLD } from './store.js';
export { hashEmbedder, apiEmbedder, embedderFromEnv } from './embedders.js';
export { offlineExtractor, llmExtractor, extractorFromEnv } from './extractors.js';
