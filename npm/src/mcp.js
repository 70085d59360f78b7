// memloom as an agent's memory over the Model Context Protocol: four tools (recall, remember,
// forget, history) on the official TypeScript SDK's McpServer. `memloom mcp` serves them over
// stdio; the edge worker serves the same tools (same names, schemas and result shapes) over
// streamable HTTP at /mcp (crates/edge-worker/src/mcp.rs). docs/MCP.md says how to connect.
//
// Every failure a tool meets comes back as a tool result with `isError: true` and a message
// that says what to do; the SDK turns schema violations into the same kind of result. Nothing
// here writes to stdout: on stdio, stdout carries protocol messages only.
//
// The MCP SDK is an optional peer dependency: importing this module loads it, and says which
// package to install when it is missing.
import { indexBuildLine } from './cli/progress.js';
import { importOptional } from './optional.js';
import { MemloomError } from './store.js';
import { DEFAULT_LIMIT, INSTRUCTIONS, TOOLS, formatRecall, rememberError, rememberedText, toolError } from './tools.js';

export { MAX_QUERY_CHARS, DEFAULT_LIMIT, MAX_LIMIT, MAX_MEMORY_BYTES, MAX_KEY_CHARS, TOOLS, citation, formatRecall } from './tools.js';

const FEATURE = 'the MCP server (memloom mcp)';
const { McpServer } = await importOptional('@modelcontextprotocol/sdk/server/mcp.js', FEATURE);
const { StdioServerTransport } = await importOptional('@modelcontextprotocol/sdk/server/stdio.js', FEATURE);

// Server --------------------------------------------------------------------------------------
/**
 * An McpServer with memloom's tools over `store` (an open Store). `log` receives diagnostics
 * (default: stderr).
 */
export function createMcpServer(store, { version = '0.0.0', log = (s) => process.stderr.write(s + '\n') } = {}) {
  const server = new McpServer({ name: 'memloom', title: 'memloom', version }, { instructions: INSTRUCTIONS });
  const tool = (name, handler) =>
    server.registerTool(name, TOOLS[name], async (args, extra) => {
      try {
        return await handler(args ?? {}, extra);
      } catch (e) {
        if (!(e instanceof MemloomError)) log(`memloom mcp: ${name} failed: ${e?.stack ?? e}`);
        return toolError(e instanceof MemloomError ? e.message : `${name} failed: ${e?.message ?? e}; retry, and if it persists see the server's stderr`);
      }
    });

  tool('recall', async ({ query, limit, kinds, asOf, since, until }) => {
    if (query.trim() === '') return toolError('query is empty; pass the text to look for');
    const r = await store.recall(query, { limit: limit ?? DEFAULT_LIMIT, kinds, asOf, since, until });
    return { content: [{ type: 'text', text: formatRecall(r) }], structuredContent: r };
  });

  tool('remember', async ({ text, key, at }, extra) => {
    const invalid = rememberError(text, key);
    if (invalid) return toolError(invalid);
    // The remember that takes an embedded store past its HNSW threshold (or the first after an
    // index of every version) builds the index first: up to minutes in which the call seems to
    // hang. Said in the server's log, to a client that asked for progress, and in the answer.
    let built = null;
    const onIndexBuild = (e) => {
      built = e;
      log(`memloom mcp: ${indexBuildLine(e)}`);
      const progressToken = extra?._meta?.progressToken;
      if (progressToken !== undefined) {
        extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 0, message: indexBuildLine(e) } }).catch(() => {});
      }
    };
    const r = await store.remember(text, { key, at, onIndexBuild });
    const said = rememberedText(r) + (built ? `\n(the store built its vector index over ${built.items} active items first, once)` : '');
    return { content: [{ type: 'text', text: said }], structuredContent: { id: r.id, key: r.key, version: r.version } };
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
    const versions = (await store.history(key)).map(({ id, version, status, content, createdAt, validFrom, validTo, eventAt }) => ({
      id,
      version,
      status,
      content,
      createdAt,
      validFrom,
      validTo,
      eventAt,
    }));
    if (versions.length === 0) return toolError(`no memory with key "${key}"; remember creates one`);
    const text = versions
      .map((v) => `v${v.version} (id ${v.id}, ${v.status}, held ${v.validFrom} .. ${v.validTo ?? 'now'}${v.eventAt ? `, event ${v.eventAt}` : ''}): ${v.content}`)
      .join('\n');
    return { content: [{ type: 'text', text: `history of "${key}", oldest first:\n${text}` }], structuredContent: { key, versions } };
  });

  return server;
}

/**
 * Serves `store` over stdio until stdin closes or a signal arrives, then closes the store.
 * Console output is diverted to stderr first: stdout is the protocol channel. `beforeClose`
 * runs before the store is closed (`memloom mcp`: its warm socket stops taking CLI commands).
 * @param {import('./store.js').Store} store
 * @param {{ version?: string, beforeClose?: () => Promise<void> | void }} [options]
 */
export async function serveStdio(store, { version, beforeClose } = {}) {
  divertConsoleToStderr();
  const server = createMcpServer(store, { version });
  const transport = new StdioServerTransport();
  let closing;
  const shutdown = () =>
    (closing ??= (async () => {
      await server.close().catch(() => {});
      await Promise.resolve(beforeClose?.()).catch(() => {});
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
  // The first recall's compile and planning (Store#_warmUp) while the client gets ready: a tool
  // call sent meanwhile waits for it on the store's connection and then runs warm.
  void store._warmUp();
  await done;
  await shutdown();
}

/** console.log/info/debug write to stderr from now on (call before opening the store). */
export function divertConsoleToStderr() {
  for (const m of ['log', 'info', 'debug']) console[m] = (...a) => console.error(...a);
}
