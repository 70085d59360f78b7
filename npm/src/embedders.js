// Embedders turn texts into vectors. A store records the embedder it was built with
// (memloom_meta: name, version, dims) and refuses to mix: see Store#_initEmbedder.
//
// - hashEmbedder(): `hash-v1`, the deterministic offline embedder of memloom-core (wasm).
// - staticEmbedder({data, version}): `static-v2` (or `static-v1`), offline too: a static model
//   distilled from all-MiniLM-L6-v2 (its token table, data/static-v1.bin, loads on first use)
//   joined with hash-v1's features; cosine = 2/3 static + 1/3 hash-v1 (v2) or 1/2 + 1/2 (v1).
//   512 dimensions; one table for both versions.
// - apiEmbedder({url, apiKey, model, dims}): any OpenAI-compatible `/v1/embeddings` endpoint,
//   batched, retried with exponential backoff on 429 / 5xx / network errors, with a timeout. Its
//   rules (settings, endpoint, identity, request, response) are memloom-core's embed/api.rs.
import {
  apiEmbedderSpec,
  apiEmbeddingsRequest,
  apiEmbeddingsResponse,
  chooseEmbedder,
  embedBatch,
  embedderInfo,
  embedStaticBatch,
  isReady,
  loadStaticModel,
  staticEmbedderInfo,
  staticTableBytes,
} from './core.js';
import { MemloomError } from './errors.js';
import { concurrencyOption, inFlight } from './in-flight.js';
import { resolveSettings, section, settingsFromEnv } from './settings.js';
/** @import { Embedder, StaticEmbedderOptions, ApiEmbedderOptions, Env } from './types.js' */

/**
 * The built-in offline embedder (`hash-v1`, 256 dimensions).
 * @returns {Embedder}
 */
export function hashEmbedder() {
  const info = embedderInfo();
  return {
    id: info.id, // 'hash-v1'
    name: info.name, // memloom_meta records name 'hash', version 1
    version: info.version,
    dims: info.dims,
    async embed(texts) {
      return embedBatch(texts);
    },
  };
}

/**
 * The distilled offline embedder (512 dimensions): `version` 2 (`static-v2`, the default) or 1
 * (`static-v1`, for stores built with it). `data` (optional): the table's bytes, a Response or a
 * URL; by default the package's data/static-v1.bin (Node, browsers), the same for both versions.
 * @param {StaticEmbedderOptions} [options]
 * @returns {Embedder}
 */
export function staticEmbedder(options) {
  const info = staticEmbedderInfo(options?.version ?? 2); // static-v2 unless asked: the one default
  let loading;
  return {
    id: info.id, // 'static-v2'
    name: info.name, // memloom_meta records name 'static', version 2
    version: info.version,
    dims: info.dims,
    async embed(texts) {
      loading ??= loadStaticModel(options?.data).catch((e) => {
        loading = undefined; // let a later call retry
        throw e;
      });
      await loading;
      return embedStaticBatch(texts, info.version);
    },
    /** The table's bytes (a server store keeps a copy for the edge worker: Store#loadStaticTable). */
    async table() {
      const bytes = await staticTableBytes(options?.data);
      // The first load in a process checks the body's XXH64; the database checks the layout.
      await loadStaticModel(bytes);
      return bytes;
    },
  };
}

/** The offline embedders by id, for MEMLOOM_EMBEDDER / `--embedder`. */
export const OFFLINE_EMBEDDERS = {
  'hash-v1': hashEmbedder,
  'static-v1': () => staticEmbedder({ version: 1 }),
  'static-v2': () => staticEmbedder({ version: 2 }),
};

const DEFAULTS = { batchSize: 64, concurrency: 4, timeoutMs: 30_000, maxRetries: 5, backoffMs: 500 };

/**
 * An OpenAI-compatible embeddings endpoint. `url` is the API base (`https://host/v1`) or the
 * full `.../embeddings` URL. `dims` is sent as `dimensions` and every vector is checked against it.
 * @param {ApiEmbedderOptions} options
 * @returns {Embedder}
 */
export function apiEmbedder(options) {
  const { url, apiKey, model, dims } = options ?? {};
  const given = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined));
  const { batchSize, concurrency, timeoutMs, maxRetries, backoffMs } = { ...DEFAULTS, ...given };
  concurrencyOption(concurrency, 'the embeddings API', 'MEMLOOM_EMBED_CONCURRENCY');
  const fetchImpl = options?.fetch ?? globalThis.fetch;
  // The rules (settings, endpoint, identity, request and response) are memloom-core's
  // (embed/api.rs), shared with the edge worker; this function does the HTTP. They run in the
  // wasm: checked here when it is loaded (Node and workerd load it at import), else on first
  // use, since a browser page may make the embedder before `await init()`.
  /** @type {import('./core.js').ApiEmbedderSpec | undefined} */
  let checked;
  const spec = () => (checked ??= apiEmbedderSpec(url, model, dims));
  if (isReady()) spec();

  async function post(input) {
    const { endpoint } = spec();
    const body = apiEmbeddingsRequest(spec(), input);
    const headers = { 'content-type': 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    let lastError;
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      if (attempt > 0) {
        await sleep(lastError?.retryAfterMs ?? backoffMs * 2 ** (attempt - 1) * (0.75 + Math.random() / 2));
      }
      let res;
      try {
        res = await fetchImpl(endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
      } catch (e) {
        const timedOut = e?.name === 'TimeoutError' || e?.name === 'AbortError';
        lastError = new MemloomError(
          timedOut
            ? `embeddings API at ${endpoint} did not answer within ${timeoutMs} ms`
            : `cannot reach the embeddings API at ${endpoint}: ${e?.cause?.message ?? e?.message ?? e}`,
        );
        continue;
      }
      if (res.ok) {
        return apiEmbeddingsResponse(spec(), await res.text().catch(() => ''), input.length);
      }
      const text = await res.text().catch(() => '');
      const detail = text.slice(0, 300).replace(/\s+/g, ' ');
      if (res.status === 429 || res.status >= 500) {
        lastError = new MemloomError(`embeddings API at ${endpoint} answered ${res.status}: ${detail}`);
        const ra = Number(res.headers.get('retry-after'));
        if (Number.isFinite(ra) && ra > 0) lastError.retryAfterMs = Math.min(ra * 1000, 60_000);
        continue;
      }
      if (res.status === 401 || res.status === 403) {
        throw new MemloomError(
          `embeddings API at ${endpoint} refused the key (${res.status}); set MEMLOOM_EMBED_KEY to a valid key`,
        );
      }
      throw new MemloomError(`embeddings API at ${endpoint} answered ${res.status}: ${detail}`);
    }
    throw new MemloomError(`${lastError.message} (gave up after ${maxRetries + 1} attempts)`);
  }

  return {
    get id() {
      return spec().id; // api:<model>-v1
    },
    get name() {
      return spec().name; // memloom_meta records name api:<model>, version 1
    },
    get version() {
      return spec().version;
    },
    get dims() {
      return spec().dims;
    },
    // Requests of batchSize texts, up to `concurrency` in flight (in-flight.js), the vectors in
    // input order.
    async embed(texts) {
      const slices = [];
      for (let i = 0; i < texts.length; i += batchSize) slices.push(texts.slice(i, i + batchSize));
      return (await inFlight(slices, concurrency, post)).flat();
    },
  };
}

/**
 * The embedder configured by environment variables: MEMLOOM_EMBEDDER names an offline one
 * (hash-v1, static-v1, static-v2); MEMLOOM_EMBED_URL (with _MODEL, _DIMS, _KEY) an embeddings API;
 * neither: hash-v1. Node only. (The CLI adds config files: settings.js, config-node.js.)
 * @param {Env} [env]
 * @returns {Embedder}
 */
export function embedderFromEnv(env = process.env) {
  const s = section(resolveSettings([{ name: 'env', values: settingsFromEnv(env) }]), 'embedder');
  return embedderFromSettings(s, { apiKeyFallback: env.OPENAI_API_KEY });
}

/**
 * The embedder of resolved settings (settings.js `section(resolved, 'embedder')`): `name` an
 * offline one, or `url` (with model, dims, apiKey, timeoutMs, concurrency) an embeddings API.
 * @param {{name?: string, url?: string, model?: string, dims?: number, apiKey?: string, timeoutMs?: number, concurrency?: number}} s
 * @param {{apiKeyFallback?: string}} [opts]
 */
export function embedderFromSettings(s, { apiKeyFallback } = {}) {
  // Which embedder the settings select is memloom-core's rule (embed/choose.rs), shared with the
  // edge worker: an offline name and a url both set is an error, neither is hash-v1.
  const choice = chooseEmbedder(s);
  if (choice.offline !== undefined) {
    const make = OFFLINE_EMBEDDERS[choice.offline];
    if (!make) throw new MemloomError(`the ${choice.offline} embedder is not in this build of the memloom package`);
    return make();
  }
  return apiEmbedder({ url: s.url, apiKey: s.apiKey ?? apiKeyFallback, model: s.model, dims: s.dims, timeoutMs: s.timeoutMs, concurrency: s.concurrency });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
