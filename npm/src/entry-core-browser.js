// `memloom/core` in browsers: chunk, embed, fuse, entities and the embedders, without the store
// (nothing here imports PGlite, so a bundle of it needs no PGlite assets and no node:* externals).
// `await init()` fetches and instantiates the wasm (from next to this package's wasm glue, or
// from the URL / Response / bytes / WebAssembly.Module you pass). Core functions called before it
// throw a clear error. The browser entry of `memloom` adds the store on top of this.
import wasmInit from '../wasm/memloom_wasm.js';
import { setReady, isReady, setLoadOnDemand, setStaticDataLoader } from './core.js';

// static-v1's table sits in the package's data/ folder; a bundler that does not copy it needs
// staticEmbedder({ data }) instead.
setStaticDataLoader(() => fetch(new URL('../data/static-v1.bin', import.meta.url)));

/** @type {Promise<void> | undefined} */
let loading;

/**
 * Loads the WebAssembly core; call once (later calls return the same promise). Without `input`
 * the .wasm is fetched from next to the package's wasm glue.
 * @param {import('./types.js').WasmInput} [input]
 * @returns {Promise<void>}
 */
export function init(input) {
  if (isReady()) return Promise.resolve();
  loading ??= wasmInit(input === undefined ? undefined : { module_or_path: input }).then(
    () => {
      setReady();
    },
    (e) => {
      // A failed load (say, loadOnDemand's from the default place) must not stop a later
      // init(input) from trying its own input.
      loading = undefined;
      throw e;
    },
  );
  return loading;
}

// What needs the core after a store was opened without it (the recall text, explain terms):
// loaded from the default place, as init() without arguments does.
setLoadOnDemand(() => init());

export { chunk, embed, embedBatch, fuse, embedderInfo, extractEntities } from './core.js';
export { loadStaticModel, embedStaticBatch, tokenizeStatic, staticEmbedderInfo } from './core.js';
export { hashEmbedder, staticEmbedder, apiEmbedder } from './embedders.js';
export { offlineExtractor, llmExtractor } from './extractors.js';
export { MemloomError } from './errors.js';
export * from './types.js';
