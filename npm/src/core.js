// The WebAssembly core (chunk, embed, fuse), shared by every runtime. Each entry module loads
// the wasm its own way (Node: bytes from disk; browsers: fetch; workerd: an imported
// WebAssembly.Module) and calls `setReady`; calling a core function before that throws a
// clear error instead of wasm-bindgen's "cannot read properties of undefined".
import * as wasm from '../wasm/memloom_wasm.js';
import { MemloomError } from './errors.js';
/** @import { Chunk, ChunkOptions, EmbedderInfo, ArmRankings, FuseParams, Fused, Mention, StaticModelData } from './types.js' */

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

/** @type {(() => Promise<void>) | null} */
let loadOnDemand = null;

/** Registers how this runtime loads the wasm when a caller needs it (the browser entry: init). */
export function setLoadOnDemand(load) {
  loadOnDemand = load;
}

/**
 * Resolves when the core is loaded. Node and workerd load it at import; in browsers, a store
 * whose embedder is an API (which never needed the wasm to recall) may reach the recall text or
 * explain terms before the page called init(), so this loads it then, from the default place.
 * @returns {Promise<void>}
 */
export async function ensureReady() {
  if (ready) return;
  if (loadOnDemand) {
    try {
      await loadOnDemand();
    } catch (e) {
      throw new Error(`${NOT_READY_MESSAGE} (loading it from next to the package's wasm glue failed: ${e?.message ?? e})`);
    }
  }
  check();
}

/**
 * Chunks a document: markdown when `source` ends in .md/.markdown/.mdx, plain text otherwise.
 * @param {string} source
 * @param {string} text
 * @param {ChunkOptions} [options]
 * @returns {Chunk[]}
 */
export function chunk(source, text, options) {
  check();
  if (typeof source !== 'string' || typeof text !== 'string') {
    throw new TypeError('chunk(source, text, options?): source and text must be strings');
  }
  // Its only errors are the options' (maxBytes below the chunker's minimum, a wrong type): the
  // caller's to fix, so a MemloomError with the core's text, not an unexpected error.
  return userError(() => wasm.chunk(source, text, options ?? undefined));
}

/**
 * Embeds one text with hash-v1: a Float32Array of 256 components (unit length), bit-identical everywhere.
 * @param {string} text
 * @returns {Float32Array}
 */
export function embed(text) {
  check();
  if (typeof text !== 'string') throw new TypeError('embed(text): text must be a string');
  return wasm.embed(text);
}

/**
 * Embeds many texts with hash-v1: one Float32Array per text, in order.
 * @param {string[]} texts
 * @returns {Float32Array[]}
 */
export function embedBatch(texts) {
  check();
  if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
    throw new TypeError('embedBatch(texts): texts must be an array of strings');
  }
  return wasm.embedBatch(texts);
}

/**
 * Weighted reciprocal-rank fusion of the arms' rankings (ids, best first): `sum of w_arm / (k + rank_arm)`, best first, ties by id.
 * @param {ArmRankings} arms
 * @param {FuseParams} [params]
 * @returns {Fused[]}
 */
export function fuse(arms, params) {
  check();
  if (arms === null || typeof arms !== 'object') {
    throw new TypeError('fuse(arms, params?): arms must be an object {vector, keyword, entity} of id arrays');
  }
  return wasm.fuse(arms, params ?? undefined);
}

/**
 * The entities a text mentions (offline extractor), strongest first.
 * @param {string} text
 * @param {string} [breadcrumb]
 * @returns {Mention[]}
 */
export function extractEntities(text, breadcrumb) {
  check();
  if (typeof text !== 'string') throw new TypeError('extractEntities(text, breadcrumb?): text must be a string');
  return wasm.extractEntities(text, breadcrumb ?? undefined);
}

/**
 * The entity kinds (memloom-core's EntityKind::ALL, the one list), each with its serialised
 * name and its words (`{kind: 'error_code', words: 'error code'}`). Read once from the wasm.
 * @returns {readonly {kind: import('./types.js').EntityKind, words: string}[]}
 */
export function entityKinds() {
  check();
  kinds ??= Object.freeze(wasm.entityKinds().map((k) => Object.freeze(k)));
  return kinds;
}
/** @type {readonly {kind: import('./types.js').EntityKind, words: string}[] | undefined} */
let kinds;

/** Most mentions the offline extractor keeps per item (memloom-core's MAX_MENTIONS). */
export function maxMentions() {
  check();
  return wasm.maxMentions();
}

/**
 * One vector in pgvector's binary form (memloom-core's vector_binary: int16 dimensions, int16 0,
 * each component's f32 bits, big-endian), for a `vector` parameter sent as bytes.
 * @param {Float32Array | ArrayLike<number>} vector
 * @returns {Uint8Array}
 */
export function vectorBinary(vector) {
  check();
  return wasm.vectorBinary(vector instanceof Float32Array ? vector : Float32Array.from(vector));
}

/**
 * Vectors (Float32Array, or null for SQL NULL) as one `vector[]` in PostgreSQL's binary array
 * form (memloom-core's vector_array_binary), for a parameter sent as bytes; `elementOid` is the
 * receiving database's OID of pgvector's `vector` type.
 * @param {(Float32Array | ArrayLike<number> | null | undefined)[]} vectors
 * @param {number} elementOid
 * @returns {Uint8Array}
 */
export function vectorArrayBinary(vectors, elementOid) {
  check();
  if (!Array.isArray(vectors)) throw new TypeError('vectorArrayBinary(vectors, elementOid): vectors must be an array');
  return wasm.vectorArrayBinary(
    vectors.map((v) => (v == null || v instanceof Float32Array ? v : Float32Array.from(v))),
    elementOid,
  );
}

/**
 * The built-in embedder's identity: {id: 'hash-v1', name: 'hash', version: 1, dims: 256}.
 * @returns {EmbedderInfo}
 */
export function embedderInfo() {
  check();
  return wasm.embedderInfo();
}

// The API embedder's rules ---------------------------------------------------------------------
// memloom-core's embed/api.rs and embed/choose.rs (the edge worker calls the same code
// natively). The HTTP call, its retries and its timeout are the caller's (embedders.js). Their
// errors are the user's to fix (a setting, the API's answer): MemloomError with the core's text.

/** @typedef {{endpoint: string, model: string, dims: number, id: string, name: string, version: number}} ApiEmbedderSpec */

function userError(call) {
  try {
    return call();
  } catch (e) {
    throw new MemloomError(e?.message ?? String(e));
  }
}

const optionalString = (v) => (v === undefined || v === null ? undefined : String(v));

function optionalNumber(what, v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number') throw new MemloomError(`${what} must be a number, not ${JSON.stringify(v)}`);
  return v;
}

/**
 * Checks an API embedder's settings: the endpoint (`url` an API base or a full `.../embeddings`
 * URL, http or https), the model, the dims (1 to 16000), and the identity a store records.
 * @param {string | undefined} url
 * @param {string | undefined} model
 * @param {number | undefined} dims
 * @returns {ApiEmbedderSpec}
 */
export function apiEmbedderSpec(url, model, dims) {
  check();
  const d = optionalNumber('embedding dims', dims);
  return userError(() => wasm.apiEmbedderSpec(optionalString(url), optionalString(model), d));
}

/**
 * The embedder settings select: `{offline: 'hash-v1' | 'static-v1' | 'static-v2'}` or `{api: spec}`. An
 * offline name and a url both set is an error; neither: hash-v1.
 * @param {{name?: string, url?: string, model?: string, dims?: number}} settings
 * @returns {{offline: string, api?: undefined} | {api: ApiEmbedderSpec, offline?: undefined}}
 */
export function chooseEmbedder({ name, url, model, dims }) {
  check();
  const d = optionalNumber('embedding dims', dims);
  return userError(() => wasm.chooseEmbedder(optionalString(name), optionalString(url), optionalString(model), d));
}

/**
 * The JSON body of one embeddings call for `texts`.
 * @param {ApiEmbedderSpec} spec
 * @param {string[]} texts
 * @returns {string}
 */
export function apiEmbeddingsRequest(spec, texts) {
  check();
  if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
    throw new TypeError('embed(texts): texts must be an array of strings');
  }
  return JSON.stringify(userError(() => wasm.apiEmbeddingsRequest(spec.endpoint, spec.model, spec.dims, texts)));
}

/**
 * The vectors of an embeddings answer (its body's text) to a call with `inputs` texts, in input
 * order; a wrong count, dims or index is an error saying what to fix. (JSON.parse here: the wasm
 * carries no JSON parser; a body that is not JSON goes to the core as null, refused there.)
 * @param {ApiEmbedderSpec} spec
 * @param {string} body
 * @param {number} inputs
 * @returns {Float32Array[]}
 */
export function apiEmbeddingsResponse(spec, body, inputs) {
  check();
  let answer = null;
  try {
    answer = JSON.parse(body);
  } catch {
    /* not JSON: the core says what it must be */
  }
  return userError(() => wasm.apiEmbeddingsResponse(spec.endpoint, spec.model, spec.dims, answer, inputs));
}

// Instants ------------------------------------------------------------------------------------
// memloom-core's instant rule (instant.rs), which the edge worker calls natively: the ISO 8601
// forms asOf / since / until / at take, UTC when there is no offset, a date alone as until its
// last millisecond, the calendar check and the error texts.

/**
 * An instant option as the text PostgreSQL gets (`YYYY-MM-DDTHH:MM:SS.mmmZ`, toISOString's
 * form), or null for null / undefined: a Date, or an ISO 8601 string by the core's rule.
 * Anything else, or a date off the calendar, is a MemloomError that names `what`.
 * @param {unknown} value
 * @param {string} what
 * @param {{ endOfDay?: boolean }} [options]
 * @returns {string | null}
 */
export function toInstant(value, what, { endOfDay = false } = {}) {
  if (value == null) return null;
  check();
  if (typeof value === 'string') return userError(() => wasm.parseInstant(what, value, endOfDay));
  if (value instanceof Date) {
    const t = value.getTime();
    return userError(() => wasm.dateInstant(what, t, JSON.stringify(Number.isNaN(t) ? String(value) : value.toISOString())));
  }
  throw new MemloomError(wasm.notAnInstant(what, typeof value === 'bigint' ? String(value) : (JSON.stringify(value) ?? String(value))));
}

/**
 * Refuses an empty recall window: `since` after `until` (both canonical instants, as toInstant
 * gives them, or null).
 * @param {string | null} since
 * @param {string | null} until
 */
export function checkWindow(since, until) {
  if (since == null || until == null) return;
  check();
  userError(() => wasm.checkWindow(since, until));
}

// Recall text and explain -------------------------------------------------------------------
// The words a model reads and the explain terms are memloom-core's (recall_text, fuse), which
// the edge worker calls natively: one definition for both doors.

/**
 * Each hit's explain terms from its ranks, the weights in effect and RRF's k: `{vector,
 * keyword, entity}`, each `{rank, weight, term: weight / (k + rank)}` or null where the arm did
 * not vote. One call for all the hits of a recall.
 * @param {import('./types.js').RecallResult['ranks'][]} ranks
 * @param {import('./types.js').Weights} weights
 * @param {number} k
 * @returns {Record<import('./types.js').Arm, import('./types.js').ArmTerm | null>[]}
 */
export function explainTerms(ranks, weights, k) {
  check();
  return wasm.explainTerms(ranks, weights, k);
}

/**
 * A recall response as the text an agent reads: numbered hits, each with its citation, scores,
 * ranks and text (or what to do when there are none).
 * @param {{ query: string, results: import('./types.js').RecallResult[] }} recall
 * @returns {string}
 */
export function formatRecall(recall) {
  check();
  return wasm.formatRecall(recall);
}

/**
 * Where a recall hit comes from, as an agent should cite it.
 * @param {import('./types.js').RecallResult} hit
 * @returns {string}
 */
export function citation(hit) {
  check();
  return wasm.citation(hit);
}

/**
 * What remember answers a model: the key and version saved, and what it superseded.
 * @param {{ id: number, key: string | null, version: number }} remembered
 * @returns {string}
 */
export function rememberedText({ id, key, version }) {
  check();
  return wasm.rememberedText(key ?? undefined, id, version);
}

// static-v1 -------------------------------------------------------------------------------------
// Its token table (data/static-v1.bin, ~7.8 MB) is not in the wasm: it is loaded once, on first
// use, from bytes the caller passes or from the package's own file via the loader the entry
// module registers (Node: the file system; browsers: fetch next to this module).
let staticDataLoader = null;

/** Registers how this runtime reads the package's data/static-v1.bin (called by entry modules). */
export function setStaticDataLoader(loader) {
  staticDataLoader = loader;
}

/**
 * Loads static-v1's table: `data` is its bytes (Uint8Array / ArrayBuffer), a Response, or a URL
 * to fetch; without it, the package's own data/static-v1.bin. Resolves at once when loaded.
 * @param {StaticModelData} [data]
 * @returns {Promise<void>}
 */
export async function loadStaticModel(data) {
  check();
  if (wasm.staticModelLoaded()) return;
  wasm.loadStaticModel(await staticTableBytes(data));
}

/**
 * The bytes of static-v1's table: `data` (bytes, a Response or a URL) or the runtime's own copy
 * (Node: the package's data/static-v1.bin). A server store keeps a copy for the edge worker
 * (Store#loadStaticTable).
 */
export async function staticTableBytes(data) {
  let bytes = data ?? (staticDataLoader ? await staticDataLoader() : undefined);
  if (bytes === undefined) {
    throw new Error(
      'memloom: static-v1 needs its table on this runtime; pass staticEmbedder({ data }) the bytes (or a URL) of static-v1.bin from the memloom package\'s data/ folder',
    );
  }
  if (typeof bytes === 'string' || bytes instanceof URL) bytes = await fetchBytes(bytes);
  else if (typeof Response !== 'undefined' && bytes instanceof Response) bytes = await responseBytes(bytes, 'static-v1.bin');
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  if (!(bytes instanceof Uint8Array)) throw new TypeError('loadStaticModel(data): data must be bytes, a Response or a URL');
  return bytes;
}

async function fetchBytes(url) {
  let res;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`memloom: cannot fetch static-v1's table from ${url}: ${e?.message ?? e}`);
  }
  return responseBytes(res, String(url));
}

async function responseBytes(res, what) {
  if (!res.ok) throw new Error(`memloom: fetching static-v1's table from ${what} answered ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

function checkStatic() {
  check();
  if (!wasm.staticModelLoaded()) {
    throw new Error("memloom: static-v1's table is not loaded yet; `await loadStaticModel()` (or embed through staticEmbedder()) first");
  }
}

/**
 * Embeds many texts with the static embedder's `version` (1: static-v1, 2: static-v2), after
 * loadStaticModel: one Float32Array of 512 per text. The version is required: before static-v2
 * this call took none and meant static-v1, so a default would change old callers' vectors
 * silently (staticEmbedder() has the default, and a store refuses another version).
 * @param {string[]} texts
 * @param {number} version
 * @returns {Float32Array[]}
 */
export function embedStaticBatch(texts, version) {
  checkStatic();
  if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
    throw new TypeError('embedStaticBatch(texts, version): texts must be an array of strings');
  }
  return userError(() => wasm.embedStaticBatch(texts, staticVersion(version)));
}

/**
 * The BERT WordPiece ids static-v1 sums for a text (after loadStaticModel).
 * @param {string} text
 * @returns {Uint32Array}
 */
export function tokenizeStatic(text) {
  checkStatic();
  if (typeof text !== 'string') throw new TypeError('tokenizeStatic(text): text must be a string');
  return wasm.tokenizeStatic(text);
}

/**
 * The static embedder's identity for `version` (1 or 2), e.g. {id: 'static-v2', name: 'static',
 * version: 2, dims: 512}.
 * @param {number} version
 * @returns {EmbedderInfo}
 */
export function staticEmbedderInfo(version) {
  check();
  return userError(() => wasm.staticEmbedderInfo(staticVersion(version)));
}

/** A version as the wasm's u32 takes it (wasm-bindgen would truncate 1.5 and wrap -1); which
 * whole numbers are versions is the core's to say. */
function staticVersion(version) {
  if (Number.isInteger(version) && version >= 0 && version <= 0xffffffff) return version;
  throw new MemloomError(`a static embedder version is a whole number, not ${JSON.stringify(version) ?? String(version)}`);
}

export { wasm as _wasm };
