// memloom as an agent's memory over the Model Context Protocol: four tools (recall, remember,
// forget, history) on the official TypeScript SDK's McpServer. `memloom mcp` serves them over
// stdio; the edge worker serves the same tools (same names, schemas and result shapes) over
// streamable HTTP at /mcp (crates/edge-worker/src/mcp.rs). docs/MCP.md says how to connect.
//
// Every failure a tool meets comes back as a tool result with `isError: true` and a message
// that says what to do; the SDK turns schema violations into the same kind of result. Nothing
// here writes to stdout: on stdio, stdout carries protocol messages only.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { ARMS, MemloomError } from './store.js';

/** Limits shared with the edge worker (crates/edge-worker/src/api.rs). */
export const MAX_QUERY_CHARS = 1000;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 50;
export const MAX_MEMORY_BYTES = 32 * 1024;
export const MAX_KEY_CHARS = 200;

const INSTRUCTIONS = `memloom is a long-term memory: team notes and docs (chunks, each with a source file and a heading breadcrumb) and memories saved by agents (short facts, optionally under a stable key).
Call recall before answering questions about the project, its decisions, runbooks or conventions, and cite what you use (source › breadcrumb for a chunk, the key or id for a memory).
Call remember to save a durable fact, decision or preference; give it a key (e.g. "deploy-freeze") when it may change later: remembering the same key again supersedes the old version.`;

// Schemas -------------------------------------------------------------------------------------
const kindEnum = z.enum(['memory', 'chunk']);
const rank = z.number().int().nullable();
const hitSchema = z.object({
  id: z.number().int(),
  kind: kindEnum,
  source: z.string().nullable(),
  breadcrumb: z.string().nullable(),
  key: z.string().nullable(),
  content: z.string(),
  rrfScore: z.number(),
  similarity: z.number(),
  ranks: z.object({ vector: rank, keyword: rank, entity: rank }),
});

/** The tools: name -> {title, description, inputSchema, outputSchema} (zod shapes). */
export const TOOLS = {
  recall: {
    title: 'Recall from memloom',
    description:
      'Search memloom (team docs and saved memories) by meaning and by exact words at once: a vector, a keyword and an entity arm fused by reciprocal rank fusion. ' +
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
    },
    outputSchema: {
      query: z.string(),
      results: z.array(hitSchema),
      tookMs: z.number(),
    },
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
    },
    outputSchema: {
      id: z.number().int(),
      key: z.string().nullable(),
      version: z.number().int(),
    },
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
        }),
      ),
    },
  },
};

// Server --------------------------------------------------------------------------------------
/**
 * An McpServer with memloom's tools over `store` (an open Store). `log` receives diagnostics
 * (default: stderr).
 */
export function createMcpServer(store, { version = '0.0.0', log = (s) => process.stderr.write(s + '\n') } = {}) {
  const server = new McpServer({ name: 'memloom', title: 'memloom', version }, { instructions: INSTRUCTIONS });
  const tool = (name, handler) =>
    server.registerTool(name, TOOLS[name], async (args) => {
      try {
        return await handler(args ?? {});
      } catch (e) {
        if (!(e instanceof MemloomError)) log(`memloom mcp: ${name} failed: ${e?.stack ?? e}`);
        return toolError(e instanceof MemloomError ? e.message : `${name} failed: ${e?.message ?? e}; retry, and if it persists see the server's stderr`);
      }
    });

  tool('recall', async ({ query, limit, kinds }) => {
    if (query.trim() === '') return toolError('query is empty; pass the text to look for');
    const r = await store.recall(query, { limit: limit ?? DEFAULT_LIMIT, kinds });
    return { content: [{ type: 'text', text: formatRecall(r) }], structuredContent: r };
  });

  tool('remember', async ({ text, key }) => {
    if (text.trim() === '') return toolError('text is empty; pass the memory\'s text');
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > MAX_MEMORY_BYTES) return toolError(`text has ${bytes} bytes; the limit is ${MAX_MEMORY_BYTES}: split it into several memories`);
    const keyError = checkKey(key);
    if (keyError) return toolError(keyError);
    const r = await store.remember(text, { key });
    const text_ = r.key
      ? `remembered "${r.key}" version ${r.version} (id ${r.id})${r.version > 1 ? `; version ${r.version - 1} is superseded and no longer recalled` : ''}`
      : `remembered id ${r.id} (no key: it cannot be superseded, only forgotten by id)`;
    return { content: [{ type: 'text', text: text_ }], structuredContent: { id: r.id, key: r.key, version: r.version } };
  });

  tool('forget', async ({ id, key }) => {
    if ((id === undefined) === (key === undefined)) {
      return toolError('pass exactly one of id (one memory) or key (every version of a key)');
    }
    // The count memloom_forget reports (0: nothing matched, or a concurrent forget won); by id
    // it deletes memories only and says when the id names a document chunk.
    const { deleted, notAMemory } = await store.forget(id !== undefined ? { id, memoriesOnly: true } : { key });
    if (notAMemory) {
      return toolError(`item ${id} is a document chunk, not a memory; chunks are removed by deleting the file and ingesting again`);
    }
    if (deleted === 0) {
      return toolError(
        id !== undefined
          ? `no memory with id ${id}; recall or history show the ids of memories`
          : `no memory with key "${key}"; nothing was deleted (history shows what a key holds)`,
      );
    }
    const what = id !== undefined ? `memory ${id}` : `key "${key}" (${deleted} version${deleted === 1 ? '' : 's'})`;
    return { content: [{ type: 'text', text: `forgot ${what}` }], structuredContent: { deleted } };
  });

  tool('history', async ({ key }) => {
    const versions = (await store.history(key)).map(({ id, version, status, content, createdAt }) => ({ id, version, status, content, createdAt }));
    if (versions.length === 0) return toolError(`no memory with key "${key}"; remember creates one`);
    const text = versions.map((v) => `v${v.version} (id ${v.id}, ${v.status}, ${v.createdAt}): ${v.content}`).join('\n');
    return { content: [{ type: 'text', text: `history of "${key}", oldest first:\n${text}` }], structuredContent: { key, versions } };
  });

  return server;
}

/**
 * Serves `store` over stdio until stdin closes or a signal arrives, then closes the store.
 * Console output is diverted to stderr first: stdout is the protocol channel.
 */
export async function serveStdio(store, { version } = {}) {
  divertConsoleToStderr();
  const server = createMcpServer(store, { version });
  const transport = new StdioServerTransport();
  let closing;
  const shutdown = () =>
    (closing ??= (async () => {
      await server.close().catch(() => {});
      await store.close().catch(() => {});
    })());
  const done = new Promise((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
    transport.onclose = resolve;
  });
  await server.connect(transport);
  process.stderr.write(`memloom mcp: serving ${store.location} (namespace ${store.namespace}) on stdio\n`);
  await done;
  await shutdown();
}

/** console.log/info/debug write to stderr from now on (call before opening the store). */
export function divertConsoleToStderr() {
  for (const m of ['log', 'info', 'debug']) console[m] = (...a) => console.error(...a);
}

// Helpers -------------------------------------------------------------------------------------
function toolError(message) {
  return { content: [{ type: 'text', text: `memloom: ${message}` }], isError: true };
}

function checkKey(key) {
  if (key === undefined) return null;
  if (key.trim() === '' || [...key].length > MAX_KEY_CHARS || /\p{Cc}/u.test(key)) {
    return `key must be 1 to ${MAX_KEY_CHARS} characters without control characters; omit it for an unkeyed memory`;
  }
  return null;
}

/** Where a hit comes from, as an agent should cite it. */
export function citation(h) {
  if (h.kind === 'memory') return h.key ? `memory "${h.key}" (id ${h.id})` : `memory id ${h.id}`;
  return h.breadcrumb ? `${h.source} › ${h.breadcrumb} (id ${h.id})` : `${h.source} (id ${h.id})`;
}

/** The recall result as text: numbered hits, each with its citation, scores, ranks and text. */
export function formatRecall(r) {
  if (r.results.length === 0) {
    return `no results for "${r.query}"; try other words, an identifier, or remember the fact first`;
  }
  const lines = [`${r.results.length} result${r.results.length === 1 ? '' : 's'} for "${r.query}", best first (cite the source or key):`];
  for (const [i, h] of r.results.entries()) {
    const ranks = ARMS.map((a) => `${a} ${h.ranks[a] ?? '-'}`).join(', ');
    const body =
      h.kind === 'chunk' && h.breadcrumb && h.content.startsWith(`${h.breadcrumb}\n\n`) ? h.content.slice(h.breadcrumb.length + 2) : h.content;
    lines.push('');
    lines.push(`[${i + 1}] ${citation(h)}`);
    lines.push(`rrfScore ${h.rrfScore.toFixed(4)} · similarity ${h.similarity.toFixed(3)} · ranks: ${ranks}`);
    lines.push(body.trim());
  }
  return lines.join('\n');
}
