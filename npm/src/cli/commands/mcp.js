import { readFileSync } from 'node:fs';
import { UsageError } from '../args.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'mcp',
  summary: 'serve the store to an agent over MCP (stdio)',
  description:
    'Serves the store to an agent over the Model Context Protocol on stdin/stdout (tools recall, remember, forget, history; docs/MCP.md). Creates the store when missing. Runs until stdin closes. ' +
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
    await serveStdio(store, { version });
    return 0;
  },
};
