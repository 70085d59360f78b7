// The worker's entry module (hand-written; scripts/build-worker.sh copies it next to the
// wasm-bindgen --target web output). workerd imports the .wasm as a compiled
// WebAssembly.Module; the Rust `fetch` (workers-rs #[event(fetch)]) answers every request.
import wasmModule from './edge_worker_bg.wasm';
import { initSync, fetch as handle } from './edge_worker.js';

initSync({ module: wasmModule });

export default {
  fetch(request, env, ctx) {
    return handle(request, env, ctx);
  },
};
