// `memloom/core` on workerd (Cloudflare Workers): wrangler's bundler turns the .wasm import into
// a WebAssembly.Module, instantiated synchronously here. Workers run chunk / embed / fuse; a
// store on workerd is a Postgres server reached from the Rust edge worker, not this package.
import wasmModule from '../wasm/memloom_wasm_bg.wasm';
import { initSync } from '../wasm/memloom_wasm.js';
import { setReady } from './core.js';

initSync({ module: wasmModule });
setReady();

/**
 * Loads the WebAssembly core; on workerd it is loaded at import, so this resolves at once.
 * @param {import('./types.js').WasmInput} [_input] Accepted for code shared with browsers; unused.
 * @returns {Promise<void>}
 */
export async function init(_input) {}

export { chunk, embed, embedBatch, fuse, embedderInfo, extractEntities } from './core.js';
export { loadStaticModel, embedStaticBatch, tokenizeStatic, staticEmbedderInfo } from './core.js';
export { hashEmbedder, staticEmbedder, apiEmbedder } from './embedders.js';
export { MemloomError } from './errors.js';
export * from './types.js';
