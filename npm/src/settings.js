// The embedder, extractor and progress settings: one table naming each setting's config-file
// key, its environment variable and its type, and the layering (flags > env > store config >
// user config > defaults). Pure (no I/O, no zod: browsers load it through embedders.js); config
// files are found, read and checked (a zod schema built from this table) by config-node.js, and
// embedders.js / extractors.js turn resolved settings into objects; daemon.* is the CLI's warm
// process (cli/warm.js). `embedderFromEnv`, `extractorFromEnv` and the CLI (so `memloom mcp`
// too) all resolve through here. The offline embedders' names and the refusal of an unknown one
// are memloom-core's, generated into schema/embedders.js at build time.
import { MemloomError } from './errors.js';
import { DEFAULT_EMBEDDER, OFFLINE_EMBEDDERS, UNKNOWN_EMBEDDER } from '../schema/embedders.js';

/** How the CLI's help and the config docs list the offline embedders: "hash-v1 (default) or static-v1". */
export const OFFLINE_EMBEDDERS_TEXT = OFFLINE_EMBEDDERS.map((n) => (n === DEFAULT_EMBEDDER ? `${n} (default)` : n))
  .join(', ')
  .replace(/, ([^,]*)$/, ' or $1');

/**
 * @typedef {'string' | 'int'} SettingType
 * @typedef {{ key: string, env: string, type: SettingType, min?: number, secret?: boolean, flag?: string, doc: string, values?: string[] }} Setting
 */

/** @type {Setting[]} Every setting, by its config-file key ("section.name"). */
export const SETTINGS = [
  { key: 'embedder.name', env: 'MEMLOOM_EMBEDDER', type: 'string', flag: '--embedder', values: OFFLINE_EMBEDDERS, doc: `an offline embedder: ${OFFLINE_EMBEDDERS_TEXT}` },
  { key: 'embedder.url', env: 'MEMLOOM_EMBED_URL', type: 'string', doc: 'an OpenAI-compatible /v1/embeddings endpoint (instead of an offline embedder)' },
  { key: 'embedder.model', env: 'MEMLOOM_EMBED_MODEL', type: 'string', doc: "the embeddings API's model" },
  { key: 'embedder.dims', env: 'MEMLOOM_EMBED_DIMS', type: 'int', doc: "the model's dimensions (sent as `dimensions`)" },
  { key: 'embedder.apiKey', env: 'MEMLOOM_EMBED_KEY', type: 'string', secret: true, doc: 'the embeddings API key (else OPENAI_API_KEY)' },
  { key: 'embedder.timeoutMs', env: 'MEMLOOM_EMBED_TIMEOUT_MS', type: 'int', doc: 'per-request timeout of the embeddings API (30000)' },
  { key: 'embedder.concurrency', env: 'MEMLOOM_EMBED_CONCURRENCY', type: 'int', min: 1, doc: 'embeddings API requests in flight at once (4)' },
  { key: 'extractor.url', env: 'MEMLOOM_EXTRACT_URL', type: 'string', doc: 'an OpenAI-compatible /v1/chat/completions endpoint for entity extraction (else offline)' },
  { key: 'extractor.model', env: 'MEMLOOM_EXTRACT_MODEL', type: 'string', doc: "the extractor's chat model" },
  { key: 'extractor.apiKey', env: 'MEMLOOM_EXTRACT_KEY', type: 'string', secret: true, doc: 'the extractor API key (else OPENAI_API_KEY)' },
  { key: 'extractor.batchSize', env: 'MEMLOOM_EXTRACT_BATCH', type: 'int', doc: 'items per extraction request' },
  { key: 'extractor.concurrency', env: 'MEMLOOM_EXTRACT_CONCURRENCY', type: 'int', min: 1, doc: 'extraction requests in flight at once (4)' },
  { key: 'extractor.timeoutMs', env: 'MEMLOOM_EXTRACT_TIMEOUT_MS', type: 'int', doc: 'per-request timeout of the extractor' },
  { key: 'extractor.maxRetries', env: 'MEMLOOM_EXTRACT_RETRIES', type: 'int', min: 0, doc: 'retries of a failed extraction request' },
  { key: 'progress.everyMs', env: 'MEMLOOM_PROGRESS_MS', type: 'int', doc: 'not on a TTY: a progress line after this many ms even when fewer files or items advanced (2000)' },
  { key: 'progress.everyFiles', env: 'MEMLOOM_PROGRESS_FILES', type: 'int', doc: 'not on a TTY: a progress line every this many files or items (100)' },
  { key: 'progress.everyBatches', env: 'MEMLOOM_PROGRESS_BATCHES', type: 'int', doc: 'remember --file, not on a TTY: a progress line every this many batches (20)' },
  { key: 'daemon.idleSeconds', env: 'MEMLOOM_DAEMON_IDLE', type: 'int', min: 0, doc: 'embedded store: the CLI\'s warm process exits after this many idle seconds (300); 0: no warm process, every command opens the store itself' },
];

/** Defaults of the settings that have one (the rest are unset). */
export const DEFAULTS = { 'embedder.name': DEFAULT_EMBEDDER, 'progress.everyMs': 2000, 'progress.everyFiles': 100, 'progress.everyBatches': 20, 'daemon.idleSeconds': 300 };

export const BY_KEY = new Map(SETTINGS.map((s) => [s.key, s]));

/**
 * The settings the environment sets (empty strings count as unset), checked like a config file.
 * @param {Record<string, string | undefined>} env
 * @returns {Record<string, string | number>}
 */
export function settingsFromEnv(env) {
  /** @type {Record<string, string | number>} */
  const flat = {};
  for (const s of SETTINGS) {
    const raw = env[s.env];
    if (raw === undefined || raw === '') continue;
    if (s.type === 'int') {
      const n = Number(raw);
      const min = s.min ?? 1;
      if (!Number.isInteger(n) || n < min) throw new MemloomError(`${s.env} must be an integer >= ${min}, not ${JSON.stringify(raw)}`);
      flat[s.key] = n;
    } else flat[s.key] = raw;
  }
  if (flat['embedder.name'] !== undefined && !BY_KEY.get('embedder.name')?.values?.includes(String(flat['embedder.name']))) {
    throw new MemloomError(UNKNOWN_EMBEDDER.join(JSON.stringify(flat['embedder.name'])));
  }
  return flat;
}

/**
 * @typedef {{ name: string, values: Record<string, string | number> }} Layer  one source of settings: {name: 'env', values}
 * @typedef {{ values: Record<string, string | number>, sources: Record<string, string> }} Resolved
 */

/**
 * Merges layers, the first winning (flags, env, store config, user config), over DEFAULTS. An
 * embeddings API (embedder.url) in a layer hides a lower layer's offline `embedder.name` and the
 * other way round, so a store config's URL is not refused because the user config names static-v1.
 * @param {Layer[]} layers
 * @returns {Resolved}
 */
export function resolveSettings(layers) {
  /** @type {Resolved} */
  const out = { values: {}, sources: {} };
  let embedderChosen = false;
  for (const layer of layers) {
    const v = layer.values;
    const choosesEmbedder = v['embedder.name'] !== undefined || v['embedder.url'] !== undefined;
    for (const [key, value] of Object.entries(v)) {
      if (key in out.values) continue;
      if (embedderChosen && (key === 'embedder.name' || key === 'embedder.url')) continue;
      out.values[key] = value;
      out.sources[key] = layer.name;
    }
    if (choosesEmbedder) embedderChosen = true;
  }
  for (const [key, value] of Object.entries(DEFAULTS)) {
    if (key in out.values) continue;
    if (key === 'embedder.name' && out.values['embedder.url'] !== undefined) continue;
    out.values[key] = value;
    out.sources[key] = 'default';
  }
  return out;
}

/**
 * The settings of one section ("embedder", "extractor", "progress") as {name: value}.
 * @param {Resolved} resolved
 * @param {string} section
 */
export function section(resolved, section) {
  /** @type {Record<string, any>} */
  const o = {};
  for (const [key, value] of Object.entries(resolved.values)) if (key.startsWith(`${section}.`)) o[key.slice(section.length + 1)] = value;
  return o;
}
