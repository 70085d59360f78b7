// memloom's agent tools, defined once for every door that offers them: the MCP server
// (mcp.js: `memloom mcp`; the edge worker serves the same tools and INSTRUCTIONS from
// crates/edge-worker/src/mcp_tools.json, generated from `memloom mcp` by
// scripts/gen-mcp-tools.mjs and checked equal by npm/test/mcp.test.js), the Vercel AI SDK
// tools (ai.js: `memloom/ai`) and the LangChain retriever (langchain.js). Names, descriptions,
// zod input and output shapes, MCP annotations, limits; the recall text a model reads comes from
// memloom-core (below).
// The recall tool's output schema is built from the recall response's JSON Schema
// (schema/recall-response.json, bundled as ../schema/recall-response.js), not written here.
// No SDK is imported here.
import { z } from 'zod';
import recallResponseSchema from '../schema/recall-response.js';
import limits from '../schema/limits.js';

// The request limits, from their one definition (schema/limits.json, bundled as
// ../schema/limits.js), which the edge worker's consts are generated from too.
export const MAX_QUERY_CHARS = limits.maxQueryChars.value;
export const DEFAULT_LIMIT = limits.defaultLimit.value;
export const MAX_LIMIT = limits.maxLimit.value;
export const MAX_MEMORY_BYTES = limits.maxMemoryBytes.value;
export const MAX_KEY_CHARS = limits.maxKeyChars.value;
const MAX_INSTANT_CHARS = limits.maxInstantChars.value;

export const INSTRUCTIONS = `memloom is a long-term memory: team notes and docs (chunks, each with a source file and a heading breadcrumb) and memories saved by agents (short facts, optionally under a stable key).
Call recall before answering questions about the project, its decisions, runbooks or conventions, and cite what you use (source › breadcrumb for a chunk, the key or id for a memory).
Call remember to save a durable fact, decision or preference; give it a key (e.g. "deploy-freeze") when it may change later: remembering the same key again supersedes the old version.`;

// Schemas -------------------------------------------------------------------------------------
const kindEnum = z.enum(['memory', 'chunk']);

/**
 * A zod schema for a JSON Schema, for the keywords schema/recall-response.json uses (type, with
 * null; enum; properties, required, additionalProperties: false; items; minimum, maximum;
 * description; local $refs into $defs). Any other keyword throws, so the schema file cannot
 * say more than the zod schema checks.
 * @param {any} s
 * @param {any} [root]
 * @returns {z.ZodTypeAny}
 */
export function zodFromJsonSchema(s, root = s) {
  const known = new Set(['$schema', '$defs', '$ref', 'title', 'description', 'type', 'enum', 'properties', 'required', 'additionalProperties', 'items', 'minimum', 'maximum']);
  const unknown = Object.keys(s).filter((k) => !known.has(k));
  if (unknown.length) throw new Error(`zodFromJsonSchema: unsupported keyword(s) ${unknown.join(', ')}; extend the converter in npm/src/tools.js`);
  if (s.$ref !== undefined) {
    const m = /^#\/\$defs\/([A-Za-z0-9_]+)$/.exec(s.$ref);
    if (!m || !root.$defs?.[m[1]]) throw new Error(`zodFromJsonSchema: cannot resolve $ref ${s.$ref}`);
    return zodFromJsonSchema(root.$defs[m[1]], root);
  }
  const types = s.enum ? ['enum'] : [].concat(s.type ?? []);
  const nullable = types.includes('null');
  const main = types.filter((t) => t !== 'null');
  if (main.length !== 1) throw new Error(`zodFromJsonSchema: expected one type besides null, not ${JSON.stringify(s.type)}`);
  /** @type {z.ZodTypeAny} */
  let out;
  switch (main[0]) {
    case 'enum':
      out = z.enum(s.enum);
      break;
    case 'string':
      out = z.string();
      break;
    case 'integer':
    case 'number': {
      let n = main[0] === 'integer' ? z.number().int() : z.number();
      if (s.minimum !== undefined) n = n.min(s.minimum);
      if (s.maximum !== undefined) n = n.max(s.maximum);
      out = n;
      break;
    }
    case 'array':
      out = z.array(zodFromJsonSchema(s.items, root));
      break;
    case 'object': {
      if (s.additionalProperties !== false) throw new Error('zodFromJsonSchema: objects must say additionalProperties: false');
      const required = new Set(s.required ?? []);
      /** @type {Record<string, z.ZodTypeAny>} */
      const shape = {};
      for (const [name, p] of Object.entries(s.properties ?? {})) {
        const t = zodFromJsonSchema(p, root);
        shape[name] = required.has(name) ? t : t.optional();
      }
      out = z.object(shape).strict();
      break;
    }
    default:
      throw new Error(`zodFromJsonSchema: unsupported type ${main[0]}`);
  }
  if (nullable) out = out.nullable();
  return s.description ? out.describe(s.description) : out;
}

/** The recall response (schema/recall-response.json) as zod: the recall tool's output schema. */
export const recallResponseZod = /** @type {z.ZodObject<any>} */ (zodFromJsonSchema(recallResponseSchema));

/**
 * The tools: name -> {title, description, inputSchema, outputSchema (zod shapes), annotations
 * (MCP's behaviour hints: readOnlyHint, destructiveHint, idempotentHint, openWorldHint)}.
 */
export const TOOLS = {
  recall: {
    title: 'Recall from memloom',
    description:
      'Search memloom (team docs and saved memories) with three arms fused by reciprocal rank fusion: a keyword arm (exact words, identifiers, error codes), an entity arm (names and identifiers extracted from the items) and a vector arm whose reach depends on the store\'s embedder: ' +
      'the offline default (hash-v1) matches shared words and identifiers only, not meaning, so phrase the query with the words the docs or memories likely use; static-v2 and static-v1 add some distilled meaning; an embeddings API matches by the model\'s meaning. ' +
      'Use it before answering anything about the project, its decisions, runbooks or conventions. Results come best first; ' +
      'each says where it came from (a chunk: source file › heading breadcrumb; a memory: its key and id), its fused score (rrfScore), ' +
      'its cosine similarity, and the rank each arm gave it (null where an arm did not find it). Cite the source or key of what you use.',
    inputSchema: {
      query: z
        .string()
        .min(1)
        .max(MAX_QUERY_CHARS)
        .describe('What to look for: a question, keywords, an identifier (e.g. "max_connections"), an error code or a file name.'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(MAX_LIMIT)
        .optional()
        .describe(`How many results to return, best first (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).`),
      kinds: z
        .array(kindEnum)
        .min(1)
        .optional()
        .describe('Only these kinds: "memory" (saved with remember) and/or "chunk" (ingested docs). Default: both.'),
      asOf: z
        .string()
        .min(10)
        .max(MAX_INSTANT_CHARS)
        .optional()
        .describe('Recall what was believed at this instant (ISO 8601, e.g. "2026-03-01T12:00Z"): the memory versions valid then and the docs ingested by then. Default: now.'),
      since: z
        .string()
        .min(10)
        .max(MAX_INSTANT_CHARS)
        .optional()
        .describe('Only results whose event time is at or after this date or time (ISO 8601; the at given to remember, else when it was saved or ingested).'),
      until: z
        .string()
        .min(10)
        .max(MAX_INSTANT_CHARS)
        .optional()
        .describe('Only results whose event time is at or before this date or time (ISO 8601; a date alone includes that whole day).'),
    },
    outputSchema: recallResponseZod,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  remember: {
    title: 'Remember in memloom',
    description:
      'Save a durable fact, decision, preference or lesson as a memory that later recalls (by you or other agents) will find. ' +
      'Write it self-contained (who, what, why), one fact per memory. With a key (a short stable name such as "deploy-freeze"), ' +
      'the memory is versioned: remembering the same key again supersedes the previous version, so recall only returns the newest. ' +
      'Returns the new memory\'s id and version.',
    inputSchema: {
      text: z.string().min(1).describe(`The memory's text, self-contained (at most ${MAX_MEMORY_BYTES / 1024} KB).`),
      key: z
        .string()
        .min(1)
        .max(MAX_KEY_CHARS)
        .optional()
        .describe('A stable name for this fact; a new memory with the same key replaces the old one. Omit for an unkeyed memory.'),
      at: z
        .string()
        .min(10)
        .max(MAX_INSTANT_CHARS)
        .optional()
        .describe('When the event this memory describes happened (ISO 8601, e.g. "2023-05-08"), if not now; recall since / until filter on it.'),
    },
    outputSchema: {
      id: z.number().int(),
      key: z.string().nullable(),
      version: z.number().int(),
    },
    // Not idempotent: an unkeyed memory is saved again on every call.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  forget: {
    title: 'Forget a memory',
    description:
      'Delete memories: by key (every version of that key) or by id (one memory, as returned by remember or recall). ' +
      'Pass exactly one of id or key. Only memories can be forgotten; document chunks are managed by ingesting files. ' +
      'Prefer remember with the same key to correct a fact (it keeps the history); forget is for things that must go.',
    inputSchema: {
      id: z.number().int().positive().optional().describe('The id of one memory (from remember or recall).'),
      key: z.string().min(1).max(MAX_KEY_CHARS).optional().describe('A memory key: every version of it is deleted.'),
    },
    outputSchema: {
      deleted: z.number().int(),
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  history: {
    title: 'History of a memory key',
    description:
      'Every version of a memory key, oldest first, with its status ("active" for the current version, "superseded" for older ones), ' +
      'its text and when it was saved. Use it to see how a fact changed, or to check what a key holds before superseding it.',
    inputSchema: {
      key: z.string().min(1).max(MAX_KEY_CHARS).describe('The memory key, as given to remember.'),
    },
    outputSchema: {
      key: z.string(),
      versions: z.array(
        z.object({
          id: z.number().int(),
          version: z.number().int(),
          status: z.enum(['active', 'superseded']),
          content: z.string(),
          createdAt: z.string(),
          validFrom: z.string(),
          validTo: z.string().nullable(),
          eventAt: z.string().nullable(),
        }),
      ),
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
};

// Helpers -------------------------------------------------------------------------------------
/** A tool result that tells the model what went wrong and what to do. */
export function toolError(message) {
  return { content: [{ type: 'text', text: `memloom: ${message}` }], isError: true };
}

/**
 * Why a remember call's text or key cannot be saved (a message for the model), or null.
 * @param {string} text
 * @param {string | undefined} key
 * @returns {string | null}
 */
export function rememberError(text, key) {
  if (text.trim() === '') return "text is empty; pass the memory's text";
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > MAX_MEMORY_BYTES) return `text has ${bytes} bytes; the limit is ${MAX_MEMORY_BYTES}: split it into several memories`;
  return checkKey(key);
}

/** Why `key` cannot be a memory key, or null. */
export function checkKey(key) {
  if (key === undefined) return null;
  if (key.trim() === '' || [...key].length > MAX_KEY_CHARS || /\p{Cc}/u.test(key)) {
    return `key must be 1 to ${MAX_KEY_CHARS} characters without control characters; omit it for an unkeyed memory`;
  }
  return null;
}

// The texts a model reads (a recall's hits with their citations, remember's confirmation) are
// memloom-core's (crates/memloom-core/src/recall_text.rs), through the wasm, so the edge
// worker, which calls the same Rust natively, writes the same words. Callers run after a store
// answered (a recall or a remember), hence after the wasm was loaded (ensureReady).
export { citation, formatRecall, rememberedText } from './core.js';
