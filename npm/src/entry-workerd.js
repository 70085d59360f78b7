// workerd (Cloudflare Workers) entry: wrangler's bundler turns the .wasm import into a
// WebAssembly.Module, instantiated synchronously here. Workers run chunk / embed / fuse; a
// store on workerd is a Postgres server reached from the Rust edge worker, not this package.
import wasmModule from '../wasm/memloom_wasm_bg.wasm';
import { initSync } from '../wasm/memloom_wasm.js';
import { setReady } from './core.js';

initSync({ module: wasmModule });
setReady();

/** Loads the WebAssembly core; on workerd it is loaded at import, so this resolves at once. */
export async function init() {}

export { chunk, embed, embedBatch, fuse, embedderInfo, extractEntities } from './core.js';
export { loadStaticModel, embedStaticBatch, tokenizeStatic, staticEmbedderInfo } from './core.js';
export { hashEmbedder, staticEmbedder, apiEmbedder } from './embedders.js';

export async function openStore() {
  throw new Error(
    'memloom: openStore is not available on workerd; query Postgres from the edge worker (crates/edge-worker) or use the Node / browser builds',
  );
}
