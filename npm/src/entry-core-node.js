// `memloom/core` on Node: chunk, embed, fuse, entities and the embedders, without the store (no
// PGlite, no SQL). The wasm is read from disk and instantiated synchronously at import, so every
// core function is ready as soon as the import returns. `init()` exists for code shared with
// browsers and resolves at once. The Node entry of `memloom` adds the store on top of this.
import { readFileSync } from 'node:fs';
import { initSync } from '../wasm/memloom_wasm.js';
import { setReady, setStaticDataLoader } from './core.js';

initSync({ module: readFileSync(new URL('../wasm/memloom_wasm_bg.wasm', import.meta.url)) });
setReady();
setStaticDataLoader(() => readFileSync(new URL('../data/static-v1.bin', import.meta.url)));

/**
 * Loads the WebAssembly core; in Node it is loaded at import, so this resolves at once.
 * @param {import('./types.js').WasmInput} [_input] Accepted for code shared with browsers; unused.
 * @returns {Promise<void>}
 */
export async function init(_input) {}

export { chunk, embed, embedBatch, fuse, embedderInfo, extractEntities } from './core.js';
export { loadStaticModel, embedStaticBatch, tokenizeStatic, staticEmbedderInfo } from './core.js';
export { hashEmbedder, staticEmbedder, apiEmbedder, embedderFromEnv } from './embedders.js';
export { offlineExtractor, llmExtractor, extractorFromEnv } from './extractors.js';
export { MemloomError } from './errors.js';
export * from './types.js';
