// The WebAssembly core (chunk, embed, fuse), shared by every runtime. Each entry module loads
// the wasm its own way (Node: bytes from disk; browsers: fetch; workerd: an imported
// WebAssembly.Module) and calls `setReady`; calling a core function before that throws a
// clear error instead of wasm-bindgen's "cannot read properties of undefined".
import * as wasm from '../wasm/memloom_wasm.js';

let ready = false;

/** Marks the module as initialised (called by the entry modules). */
export function setReady() {
  ready = true;
}

export function isReady() {
  return ready;
}

export const NOT_READY_MESSAGE =
  'memloom: the WebAssembly core is not loaded yet; `await init()` (imported from "memloom") before calling chunk, embed, embedBatch, fuse, extractEntities or embedderInfo';

function check() {
  if (!ready) throw new Error(NOT_READY_MESSAGE);
}

/** Chunks a document: markdown when `source` ends in .md/.markdown/.mdx, plain text otherwise. */
export function chunk(source, text, options) {
  check();
  if (typeof source !== 'string' || typeof text !== 'string') {
    throw new TypeError('chunk(source, text, options?): source and text must be strings');
  }
  return wasm.chunk(source, text, options ?? undefined);
}

/** Embeds one text with hash-v1: a Float32Array of 256 components (unit length). */
export function embed(text) {
  check();
  if (typeof text !== 'string') throw new TypeError('embed(text): text must be a string');
  return wasm.embed(text);
}

/** Embeds many texts with hash-v1: one Float32Array per text. */
export function embedBatch(texts) {
  check();
  if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
    throw new TypeError('embedBatch(texts): texts must be an array of strings');
  }
  return wasm.embedBatch(texts);
}

/** Weighted reciprocal-rank fusion of the arms' rankings (ids, best first). */
export function fuse(arms, params) {
  check();
  if (arms === null || typeof arms !== 'object') {
    throw new TypeError('fuse(arms, params?): arms must be an object {vector, keyword, entity} of id arrays');
  }
  return wasm.fuse(arms, params ?? undefined);
}

/** The entities a text mentions (offline extractor): [{name, display, kind, strength, count}]. */
export function extractEntities(text, breadcrumb) {
  check();
  if (typeof text !== 'string') throw new TypeError('extractEntities(text, breadcrumb?): text must be a string');
  return wasm.extractEntities(text, breadcrumb ?? undefined);
}

/** The built-in embedder: {id: 'hash-v1', name: 'hash', version: 1, dims: 256}. */
export function embedderInfo() {
  check();
  return wasm.embedderInfo();
}

export { wasm as _wasm };
