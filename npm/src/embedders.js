// Embedders turn texts into vectors. A store records the embedder it was built with
// (memloom_meta: name, version, dims) and refuses to mix: see Store#_initEmbedder.
//
// - hashEmbedder(): `hash-v1`, the deterministic offline embedder of memloom-core (wasm).
// - staticEmbedder({data}): `static-v1`, offline too: a static model distilled from
//   all-MiniLM-L6-v2 (its token table, data/static-v1.bin, loads on first use) joined with
//   hash-v1's features; cosine = 0.5 static + 0.5 hash-v1. 512 dimensions.
// - apiEmbedder({url, apiKey, model, dims}): any OpenAI-compatible `/v1/embeddings` endpoint,
//   batched, retried with exponential backoff on 429 / 5xx / network errors, with a timeout.
import { embedBatch, embedderInfo, embedStaticBatch, loadStaticModel, staticEmbedderInfo, staticTableBytes } from './core.js';
import { MemloomError } from './errors.js';
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
 * The distilled offline embedder (`static-v1`, 512 dimensions). `data` (optional): the table's
 * bytes, a Response or a URL; by default the package's data/static-v1.bin (Node, browsers).
 * @param {StaticEmbedderOptions} [options]
 * @returns {Embedder}
 */
export function staticEmbedder(options) {
  const info = staticEmbedderInfo();
  let loading;
  return {
    id: info.id, // 'static-v1'
    name: info.name, // memloom_meta records name 'static', version 1
    version: info.version,
    dims: info.dims,
    async embed(texts) {
      loading ??= loadStaticModel(options?.data).catch((e) => {
        loading = undefined; // let a later call retry
        throw e;
      });
      await loading;
      return embedStaticBatch(texts);
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
export const OFFLINE_EMBEDDERS = { 'hash-v1': hashEmbedder, 'static-v1': staticEmbedder };

const DEFAULTS = { batchSize: 64, timeoutMs: 30_000, maxRetries: 5, backoffMs: 500 };

/**
 * An OpenAI-compatible embeddings endpoint. `url` is the API base (`https://host/v1`) or the
 * full `.../embeddings` URL. `dims` is sent as `dimensions` and every vector is checked against it.
 * @param {ApiEmbedderOptions} options
 * @returns {Embedder}
 */
export function apiEmbedder(options) {
  const { url, apiKey, model, dims } = options ?? {};
  const given = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined));
  const { batchSize, timeoutMs, maxRetries, backoffMs } = { ...DEFAULTS, ...given };
  const fetchImpl = options?.fetch ?? globalThis.fetch;
  if (!url || !model || !dims) {
    throw new MemloomError(
      'the embeddings API needs url, model and dims (MEMLOOM_EMBED_URL, MEMLOOM_EMBED_MODEL, MEMLOOM_EMBED_DIMS)',
    );
  }
  if (!Number.isInteger(dims) || dims <= 0) {
    throw new MemloomError(`embedding dims must be a positive integer, not ${dims}`);
  }
  const endpoint = /\/embeddings\/?$/.test(url) ? url : `${url.replace(/\/+$/, '')}/embeddings`;

  async function post(input) {
    const body = JSON.stringify({ model, input, dimensions: dims, encoding_format: 'float' });
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
        const json = await res.json().catch(() => null);
        const data = json?.data;
        if (!Array.isArray(data) || data.length !== input.length) {
          throw new MemloomError(
            `embeddings API at ${endpoint} returned ${Array.isArray(data) ? data.length : 'no'} embeddings for ${input.length} inputs`,
          );
        }
        const out = new Array(input.length);
        for (const [i, d] of data.entries()) {
          const v = d?.embedding;
          if (!Array.isArray(v) || v.length !== dims) {
            throw new MemloomError(
              `embeddings API returned ${Array.isArray(v) ? v.length : 'no'} dimensions, expected ${dims}; set MEMLOOM_EMBED_DIMS to the model's size, or use a model that accepts "dimensions"`,
            );
          }
          out[Number.isInteger(d.index) ? d.index : i] = Float32Array.from(v);
        }
        return out;
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
    id: `api:${model}-v1`,
    name: `api:${model}`,
    version: 1,
    dims,
    async embed(texts) {
      const out = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        out.push(...(await post(texts.slice(i, i + batchSize))));
      }
      return out;
    },
  };
}

/**
 * The embedder configured by environment variables: MEMLOOM_EMBEDDER names an offline one
 * (hash-v1, static-v1); MEMLOOM_EMBED_URL (with _MODEL, _DIMS, _KEY) an embeddings API;
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
 * offline one, or `url` (with model, dims, apiKey, timeoutMs) an embeddings API.
 * @param {{name?: string, url?: string, model?: string, dims?: number, apiKey?: string, timeoutMs?: number}} s
 * @param {{apiKeyFallback?: string}} [opts]
 */
export function embedderFromSettings(s, { apiKeyFallback } = {}) {
  if (s.url && s.name) {
    throw new MemloomError(`both the ${s.name} embedder and MEMLOOM_EMBED_URL (embedder.url) are set; unset one of them`);
  }
  if (!s.url) {
    const make = OFFLINE_EMBEDDERS[s.name ?? 'hash-v1'];
    if (!make) {
      throw new MemloomError(
        `unknown embedder ${JSON.stringify(s.name)} (MEMLOOM_EMBEDDER / --embedder); the offline ones are ${Object.keys(OFFLINE_EMBEDDERS).join(', ')}, and MEMLOOM_EMBED_URL selects an embeddings API`,
      );
    }
    return make();
  }
  return apiEmbedder({ url: s.url, apiKey: s.apiKey ?? apiKeyFallback, model: s.model, dims: s.dims, timeoutMs: s.timeoutMs });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
