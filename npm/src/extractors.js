// Entity extractors for `Store#index`: items in, mentions out. An extractor is
// `{ id, extract(items, { onWarning }) }` where items are `{ id, text, breadcrumb }` and the
// result is, per item in order, `{ mentions: [{name, kind, strength}], fallback }`.
//
// - offlineExtractor(): memloom-core's deterministic extractor (wasm); no network.
// - llmExtractor({url, apiKey, model}): any OpenAI-compatible `/v1/chat/completions` endpoint,
//   asked for JSON matching a schema; batched (several items per request), retried with
//   exponential backoff (and Retry-After) on 429 / 5xx / network errors / timeouts. A reply that
//   is not valid JSON or not the schema is logged (onWarning) and the items it should have
//   covered fall back to the offline extractor; the run never aborts for it. Only a refused key
//   (401 / 403) stops the run, since every later request would fail the same way.
import { entityKinds, extractEntities, maxMentions } from './core.js';
import { MemloomError } from './errors.js';
import { concurrencyOption, inFlight } from './in-flight.js';
import { resolveSettings, section, settingsFromEnv } from './settings.js';
/** @import { Extractor, LlmExtractorOptions, Env } from './types.js' */

/** The entity kinds' serialised names (memloom-core's EntityKind::ALL, through the wasm). */
const kindNames = () => entityKinds().map((k) => k.kind);
/** Strength of an entity the model names that the offline extractor did not find in the item. */
export const LLM_STRENGTH = 0.7;
/** Strength factor of an alias relative to its entity. */
export const LLM_ALIAS_FACTOR = 0.9;
/** Most characters of one item sent to the model. */
export const LLM_MAX_ITEM_CHARS = 6000;

/**
 * memloom-core's offline extractor.
 * @returns {Extractor}
 */
export function offlineExtractor() {
  return {
    id: 'offline',
    async extract(items) {
      return items.map((it) => ({ mentions: offline(it), fallback: false }));
    },
  };
}

function offline(it) {
  return extractEntities(it.text, it.breadcrumb ?? undefined).map((m) => ({ name: m.name, kind: m.kind, strength: m.strength }));
}

const DEFAULTS = { batchSize: 8, concurrency: 4, timeoutMs: 60_000, maxRetries: 4, backoffMs: 500 };

/** The system prompt (built on first use: the kinds come from the wasm core). */
const systemPrompt = () => `You extract the named things a user would later search for from documentation and team notes.
For each item, list its entities: exact identifiers (API names, config keys, environment variables), error codes, file names and paths, command-line flags, ticket ids, host names, versions, product and project names, people, and the concepts the item is mainly about.
Write each name as it appears in the text. kind is one of: ${kindNames().join(', ')} ("name" for people, products and concepts). aliases are other names the text uses for the same thing (may be empty).
Skip generic words (value, example, function, string) and things mentioned only in passing.
Answer with JSON only: {"items": [{"id": "<the item's id>", "entities": [{"name": "...", "kind": "...", "aliases": ["..."]}]}]}, one entry per item, in the order given.`;

/** The JSON schema of one item's reply: {entities: [{name, kind, aliases}]}. */
export const itemSchema = () => ({
  type: 'object',
  properties: {
    entities: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          kind: { type: 'string', enum: kindNames() },
          aliases: { type: 'array', items: { type: 'string' } },
        },
        required: ['name', 'kind', 'aliases'],
        additionalProperties: false,
      },
    },
  },
  required: ['entities'],
  additionalProperties: false,
});

/** The response_format schema of a batch: {items: [{id, entities}]}. */
export const batchSchema = () => ({
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, entities: itemSchema().properties.entities },
        required: ['id', 'entities'],
        additionalProperties: false,
      },
    },
  },
  required: ['items'],
  additionalProperties: false,
});

/**
 * An OpenAI-compatible chat completions endpoint. `url` is the API base (`https://host/v1`) or
 * the full `.../chat/completions` URL.
 * @param {LlmExtractorOptions} options
 * @returns {Extractor}
 */
export function llmExtractor(options) {
  const { url, apiKey, model } = options ?? {};
  const given = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined));
  const { batchSize, concurrency, timeoutMs, maxRetries, backoffMs } = { ...DEFAULTS, ...given };
  const fetchImpl = options?.fetch ?? globalThis.fetch;
  if (!url || !model) {
    throw new MemloomError('the LLM extractor needs url and model (MEMLOOM_EXTRACT_URL, MEMLOOM_EXTRACT_MODEL)');
  }
  concurrencyOption(concurrency, 'the LLM extractor', 'MEMLOOM_EXTRACT_CONCURRENCY');
  for (const [k, v] of Object.entries({ batchSize, timeoutMs })) {
    if (!Number.isInteger(v) || v <= 0) throw new MemloomError(`LLM extractor ${k} must be a positive integer, not ${v}`);
  }
  const endpoint = /\/chat\/completions\/?$/.test(url) ? url : `${url.replace(/\/+$/, '')}/chat/completions`;

  /** One request; resolves to the reply's message content (a string) or throws. */
  async function complete(batch) {
    const user = JSON.stringify({
      items: batch.map((it, i) => ({
        id: String(i),
        text: ((it.breadcrumb ? `${it.breadcrumb}\n\n` : '') + it.text).slice(0, LLM_MAX_ITEM_CHARS),
      })),
    });
    const body = JSON.stringify({
      model,
      temperature: 0,
      messages: [
        { role: 'system', content: systemPrompt() },
        { role: 'user', content: user },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'memloom_entities', strict: true, schema: batchSchema() } },
    });
    const headers = { 'content-type': 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    let lastError;
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      if (attempt > 0) {
        await sleep(lastError?.retryAfterMs ?? backoffMs * 2 ** (attempt - 1) * (0.75 + Math.random() / 2));
      }
      let res;
      let text;
      try {
        res = await fetchImpl(endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
        text = await res.text();
      } catch (e) {
        const timedOut = e?.name === 'TimeoutError' || e?.name === 'AbortError';
        lastError = new MemloomError(
          timedOut
            ? `LLM extractor at ${endpoint} did not answer within ${timeoutMs} ms`
            : `cannot reach the LLM extractor at ${endpoint}: ${e?.cause?.message ?? e?.message ?? e}`,
        );
        continue;
      }
      if (res.ok) {
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          throw new ReplyError(`LLM extractor at ${endpoint} answered with a body that is not JSON: ${excerpt(text)}`);
        }
        const content = json?.choices?.[0]?.message?.content;
        if (typeof content !== 'string') {
          throw new ReplyError(`LLM extractor at ${endpoint} answered without choices[0].message.content: ${excerpt(text)}`);
        }
        return content;
      }
      const detail = excerpt(text);
      if (res.status === 429 || res.status >= 500) {
        lastError = new MemloomError(`LLM extractor at ${endpoint} answered ${res.status}: ${detail}`);
        const ra = Number(res.headers.get('retry-after'));
        if (Number.isFinite(ra) && ra > 0) lastError.retryAfterMs = Math.min(ra * 1000, 60_000);
        continue;
      }
      if (res.status === 401 || res.status === 403) {
        throw new MemloomError(`LLM extractor at ${endpoint} refused the key (${res.status}); set MEMLOOM_EXTRACT_KEY to a valid key`);
      }
      throw new ReplyError(`LLM extractor at ${endpoint} answered ${res.status}: ${detail}`);
    }
    throw new ReplyError(`${lastError.message} (gave up after ${maxRetries + 1} attempts)`);
  }

  return {
    id: `llm:${model}`,
    // Requests of batchSize items, up to `concurrency` in flight (in-flight.js); a reply that
    // cannot be used falls back to the offline extractor for its items, any other failure (a
    // refused key) stops the run. Warnings and results in the items' order.
    async extract(items, { onWarning } = {}) {
      const batches = [];
      for (let i = 0; i < items.length; i += batchSize) batches.push(items.slice(i, i + batchSize));
      const replies = await inFlight(batches, concurrency, async (batch) => {
        try {
          return { parsed: parseReply(await complete(batch), batch.length) };
        } catch (e) {
          if (!(e instanceof ReplyError)) throw e;
          return { error: e };
        }
      });
      const out = [];
      for (const [b, batch] of batches.entries()) {
        const { parsed = null, error } = replies[b];
        if (error) {
          onWarning?.({ reason: `${error.message}; ${batch.length} item(s) fall back to the offline extractor`, items: batch.map((x) => x.id) });
        }
        for (const [j, it] of batch.entries()) {
          const got = parsed?.items[j];
          if (got && got.ok) {
            out.push({ mentions: fromModel(got.entities, it), fallback: false });
            continue;
          }
          if (parsed) {
            onWarning?.({ reason: `LLM reply for item ${it.id}: ${got?.error ?? 'missing'}; it falls back to the offline extractor`, items: [it.id] });
          }
          out.push({ mentions: offline(it), fallback: true });
        }
      }
      return out;
    },
  };
}

/** A reply that cannot be used: its items fall back to the offline extractor. */
class ReplyError extends MemloomError {}

/**
 * Parses a batch reply: `{items: [{id, entities}]}`, ids "0".."n-1" (matched by id, else by
 * position). Returns `{items: [{ok, entities} | {ok: false, error}]}`; throws ReplyError when
 * the content is not JSON or has no `items` array.
 */
export function parseReply(content, n) {
  let json;
  try {
    json = JSON.parse(stripFence(content));
  } catch (e) {
    throw new ReplyError(`LLM reply is not valid JSON (${e.message}): ${excerpt(content)}`);
  }
  // A single-item reply may come back as the bare item schema {entities: [...]}.
  if (n === 1 && json && Array.isArray(json.entities) && !Array.isArray(json.items)) json = { items: [{ id: '0', ...json }] };
  if (!json || typeof json !== 'object' || !Array.isArray(json.items)) {
    throw new ReplyError(`LLM reply does not match the schema (no "items" array): ${excerpt(content)}`);
  }
  const byId = new Map();
  for (const [pos, r] of json.items.entries()) {
    const id = r && typeof r === 'object' && (typeof r.id === 'string' || typeof r.id === 'number') ? String(r.id) : String(pos);
    if (!byId.has(id)) byId.set(id, r);
  }
  const items = [];
  for (let i = 0; i < n; i++) {
    const r = byId.get(String(i));
    items.push(r === undefined ? { ok: false, error: 'missing from the reply' } : validateItem(r));
  }
  return { items };
}

function validateItem(r) {
  if (!r || typeof r !== 'object' || !Array.isArray(r.entities)) return { ok: false, error: 'no "entities" array' };
  const entities = [];
  for (const [i, e] of r.entities.entries()) {
    if (!e || typeof e !== 'object' || typeof e.name !== 'string' || e.name.trim() === '') {
      return { ok: false, error: `entity ${i + 1} has no "name" string` };
    }
    if (e.kind !== undefined && typeof e.kind !== 'string') return { ok: false, error: `entity ${i + 1}: "kind" must be a string` };
    if (e.aliases !== undefined && (!Array.isArray(e.aliases) || e.aliases.some((a) => typeof a !== 'string'))) {
      return { ok: false, error: `entity ${i + 1}: "aliases" must be an array of strings` };
    }
    entities.push({ name: e.name, kind: e.kind, aliases: e.aliases ?? [] });
  }
  return { ok: true, entities };
}

/**
 * The model's entities as mentions, canonicalised like the offline extractor's (the name read
 * as a heading: `Worker Threads` -> `worker thread`, `fs.readFile()` -> `fs.readFile`) so that
 * both merge on one entity. A typed kind found by the canonicaliser (error_code, file, ...) wins
 * over the model's; strength is the offline extractor's for the same entity in this item, else
 * LLM_STRENGTH.
 */
function fromModel(entities, it) {
  const known = new Map(offline(it).map((m) => [m.name, m]));
  const out = new Map();
  const add = (raw, modelKind, factor) => {
    const [c] = extractEntities('', raw.trim());
    if (!c) return;
    let kind = c.kind;
    if (kind === 'topic') kind = kindNames().includes(modelKind) ? modelKind : 'name';
    const strength = Math.min(1, Math.max(0.01, (known.get(c.name)?.strength ?? LLM_STRENGTH) * factor));
    const key = `${kind}\u0000${c.name}`;
    const prev = out.get(key);
    if (!prev || prev.strength < strength) out.set(key, { name: c.name, kind, strength });
  };
  for (const e of entities) {
    add(e.name, e.kind, 1);
    for (const a of e.aliases) if (a.trim() !== '') add(a, e.kind, LLM_ALIAS_FACTOR);
  }
  return [...out.values()].sort((a, b) => b.strength - a.strength || (a.name < b.name ? -1 : 1)).slice(0, maxMentions());
}

/**
 * The extractor configured by environment variables (MEMLOOM_EXTRACT_URL, _MODEL, _KEY, _BATCH,
 * _TIMEOUT_MS, _RETRIES), or the offline one when none is. Node only.
 * @param {Env} [env]
 * @returns {Extractor}
 */
export function extractorFromEnv(env = process.env) {
  const s = section(resolveSettings([{ name: 'env', values: settingsFromEnv(env) }]), 'extractor');
  return extractorFromSettings(s, { apiKeyFallback: env.OPENAI_API_KEY });
}

/**
 * The extractor of resolved settings (settings.js `section(resolved, 'extractor')`): an LLM
 * endpoint when `url` is set, else the offline extractor.
 * @param {{url?: string, model?: string, apiKey?: string, batchSize?: number, concurrency?: number, timeoutMs?: number, maxRetries?: number}} s
 * @param {{apiKeyFallback?: string}} [opts]
 */
export function extractorFromSettings(s, { apiKeyFallback } = {}) {
  if (!s.url) return offlineExtractor();
  return llmExtractor({
    url: s.url,
    apiKey: s.apiKey ?? apiKeyFallback,
    model: s.model,
    batchSize: s.batchSize,
    concurrency: s.concurrency,
    timeoutMs: s.timeoutMs,
    maxRetries: s.maxRetries,
  });
}

function stripFence(s) {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(s);
  return m ? m[1] : s;
}

function excerpt(s) {
  return String(s ?? '').slice(0, 200).replace(/\s+/g, ' ');
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
