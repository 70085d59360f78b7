// Browser entry of `memloom`: the core (entry-core-browser.js: `await init()` first) and the
// store, embedded PGlite in memory or in IndexedDB (`openStore({ dir: 'idb://notes' })`). PGlite
// is imported on the first openStore, not at import. Bundling: docs/BUNDLERS.md.
export * from './entry-core-browser.js';
export { openStore, Store, ARMS, DEFAULT_NAMESPACE, EMBEDDED_HNSW_THRESHOLD, IMPORT_BATCH } from './store.js';
export { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, decodeVector, encodeVector } from './export.js';
