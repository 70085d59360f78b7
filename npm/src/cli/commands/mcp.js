import { readFileSync } from 'node:fs';
import { UsageError } from '../args.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'mcp',
  summary: 'serve the store to an agent over MCP (stdio)',
  description:
    'Serves the store to an agent over the Model Context Protocol on stdin/stdout (tools recall, remember, forget, history; docs/MCP.md). Creates the store when missing. Runs until stdin closes. ' +
    'On an embedded store it also serves the store\'s warm socket while it runs, so recall, remember, forget, stats and history from the CLI on the same store (same namespace and embedder) run in it, warm, instead of failing on the store\'s lock (daemon.idleSeconds 0: not). ' +
    'No --json: stdout carries MCP messages, which are JSON already.',
  examples: [['memloom mcp --store ~/notes/.memloom', 'in an MCP client config: {"command": "memloom", "args": ["mcp", "--store", "..."]}']],
  noJson: 'stdout carries MCP protocol messages (JSON-RPC) only',
  async run(ctx) {
    if (ctx.json) throw new UsageError('mcp takes no --json: stdout carries MCP protocol messages (JSON-RPC), which are JSON already');
    const { serveStdio, divertConsoleToStderr } = await import('../../mcp.js');
    divertConsoleToStderr();
    if (!ctx.exists()) ctx.info(`mcp: creating a new store at ${ctx.target.dir}`);
    const store = await ctx.open({ create: true });
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    const socket = await warmSocket(ctx, store);
    await serveStdio(store, { version, beforeClose: () => socket?.close() });
    return 0;
  },
};

/**
 * The store's warm socket, served by this process (cli/warm-socket.js): one PGlite owner for
 * the MCP client and the CLI beside it. None for a server store (no lock to share), on Windows
 * (no Unix sockets), with the warm process turned off (daemon.idleSeconds 0: the CLI would not
 * ask), or when it cannot listen (said on stderr; the MCP server goes on without it).
 * @param {import('../context.js').Context} ctx
 * @param {import('../../store.js').Store} store
 */
async function warmSocket(ctx, store) {
  const dir = ctx.target.dir;
  if (!dir || process.platform === 'win32' || !Number(ctx.settings.values['daemon.idleSeconds'])) return undefined;
  const { fingerprint, serveWarmSocket } = await import('../warm-socket.js');
  try {
    return await serveWarmSocket({ dir, store, fingerprint: fingerprint(ctx), owner: 'mcp' });
  } catch (e) {
    ctx.warn(`mcp: the CLI's commands on this store will not run here (cannot listen on its warm socket: ${/** @type {any} */ (e)?.message ?? e})`);
    return undefined;
  }
}
