#!/usr/bin/env node
// Rewrites crates/edge-worker/src/mcp_tools.json, the edge worker's MCP tools file, from what
// `memloom mcp` serves on a throwaway embedded store: `instructions` (initialize's server
// instructions) and `tools` (tools/list, each tool without "execution"). Run it after changing
// a tool or INSTRUCTIONS in npm/src/tools.js or schema/recall-response.json (after
// scripts/build-wasm.sh), then review the diff; npm/test/mcp.test.js fails while they differ.
//   node scripts/gen-mcp-tools.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';

const bin = fileURLToPath(new URL('../npm/bin/memloom.js', import.meta.url));
const out = fileURLToPath(new URL('../crates/edge-worker/src/mcp_tools.json', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'memloom-gen-tools-'));
try {
  const store = join(tmp, 'store');
  execFileSync(process.execPath, [bin, 'init', '--store', store, '-q']);
  const client = new Client({ name: 'gen-mcp-tools', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--store', store], stderr: 'ignore' }));
  const instructions = client.getInstructions();
  const { tools } = await client.listTools();
  await client.close();
  writeFileSync(out, JSON.stringify({ instructions, tools: tools.map(({ execution, ...t }) => t) }, null, 2) + '\n');
  console.log(`gen-mcp-tools: the instructions and ${tools.length} tools written to crates/edge-worker/src/mcp_tools.json`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
