// Browser entry: `await init()` fetches and instantiates the wasm (from next to this package's
// wasm glue, or from the URL / Response / bytes / WebAssembly.Module you pass). Core functions
// called before it throw a clear error. Stores are embedded PGlite, in memory or in IndexedDB
// (`openStore({ dir: 'idb://notes' })`).
import wasmInit from '../wasm/memloom_wasm.js';
import { setReady, isReady, setStaticDataLoader } from './core.js';

// static-v1's table sits in the package's data/ folder; a bundler that does not copy it needs
// staticEmbedder({ data }) instead.
setStaticDataLoader(() => fetch(new URL('../data/static-v1.bin', import.meta.url)));

let loading;

/** Loads the WebAssembly core; call once (later calls return the same promise). */
export function init(input) {
  if (isReady()) return Promise.resolve();
  loading ??= wasmInit(input === undefined ? undefined : { module_or_path: input }).then(() => {
    setReady();
  });
  return loading;
}

export { chunk, embed, embedBatch, fuse, embedderInfo, extractEntities } from './core.js';
export { loadStaticModel, embedStaticBatch, tokenizeStatic, staticEmbedderInfo } from './core.js';
export { openStore, Store, MemloomError, ARMS, DEFAULT_NAMESPACE, EMBEDDED_HNSW_THRESHOLD, IMPORT_BATCH } from './store.js';
export { hashEmbedder, staticEmbedder, apiEmbedder } from './embedders.js';
export { offlineExtractor, llmExtractor } from './extractors.js';
export { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, decodeVector, encodeVector } from './export.js';
