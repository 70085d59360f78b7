// The edge worker's MCP endpoint (POST /mcp, streamable HTTP) driven by the official
// TypeScript SDK's Client and StreamableHTTPClientTransport, in workerd against a real
// PostgreSQL. Run by scripts/test-worker.sh after e2e.test.mjs, with the same environment:
//   WORKER_URL, TOKEN_A (namespace team-a, examples/notes loaded), TOKEN_B (team-b)
// The SDK comes from npm/node_modules (npm ci --prefix npm).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client } from '../../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StreamableHTTPClientTransport } from '../../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';
import { validateRecall } from '../../npm/test/contract-helpers.js';

const { WORKER_URL, TOKEN_A, TOKEN_B } = process.env;
if (!WORKER_URL || !TOKEN_A || !TOKEN_B) throw new Error('run through scripts/test-worker.sh (WORKER_URL, TOKEN_A, TOKEN_B)');
const endpoint = new URL('/mcp', WORKER_URL);
// The tools file is `memloom mcp`'s instructions and tools (scripts/gen-mcp-tools.mjs).
const { instructions: INSTRUCTIONS, tools: TOOLS } = JSON.parse(readFileSync(new URL('../../crates/edge-worker/src/mcp_tools.json', import.meta.url), 'utf8'));

const clients = [];
async function connect(token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } });
  const client = new Client({ name: 'memloom-worker-test', version: '1.0.0' });
  const errors = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  clients.push(client);
  return { client, errors };
}
after(async () => {
  for (const c of clients) await c.close();
});

const text = (r) => r.content.map((c) => c.text).join('\n');
const post = (body, headers = {}) =>
  fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });

test('mcp: a missing or unknown token is refused with 401 before any protocol', async () => {
  await assert.rejects(connect(undefined), (e) => /401/.test(String(e?.code ?? '') + e.message));
  await assert.rejects(connect('mlt_not_a_real_token'), (e) => /401/.test(String(e?.code ?? '') + e.message));
  const res = await post({ jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.equal(res.status, 401);
  assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
});

test('mcp: the official client connects, and gets the same instructions and tools as `memloom mcp`', async () => {
  const { client, errors } = await connect(TOKEN_A);
  assert.equal(client.getServerVersion().name, 'memloom');
  assert.equal(client.getInstructions(), INSTRUCTIONS);
  await client.ping();
  const { tools } = await client.listTools();
  assert.deepEqual(tools, TOOLS);
  // The MCP behaviour hints reach a client over HTTP as they do over stdio (npm/test/mcp.test.js).
  const hints = Object.fromEntries(tools.map((t) => [t.name, [t.annotations?.readOnlyHint, t.annotations?.destructiveHint, t.annotations?.idempotentHint]]));
  assert.deepEqual(hints, { recall: [true, false, true], remember: [false, false, false], forget: [false, true, true], history: [true, false, true] });
  assert.deepEqual(errors, [], 'GET /mcp answers 405 and the client takes it as "no SSE stream"');
});

test('mcp: recall cites a doc chunk (source › breadcrumb) with scores and ranks, in the DESIGN.md shape', async () => {
  const { client } = await connect(TOKEN_A);
  const r = await client.callTool({ name: 'recall', arguments: { query: 'max_connections', limit: 3 } });
  assert.ok(!r.isError, text(r));
  assert.deepEqual(validateRecall(r.structuredContent), [], 'schema/recall-response.json');
  assert.deepEqual(Object.keys(r.structuredContent).sort(), ['query', 'results', 'tookMs']);
  const top = r.structuredContent.results[0];
  assert.equal(top.source, 'postgres-runbook.md');
  assert.equal(top.breadcrumb, 'Postgres runbook > Connection limits');
  assert.ok(r.structuredContent.results.length <= 3);
  assert.match(text(r), /\[1\] postgres-runbook\.md › Postgres runbook > Connection limits \(id \d+\)\nrrfScore 0\.\d{4} · similarity -?\d\.\d{3} · ranks: vector (\d+|-), keyword 1, entity (\d+|-)/);
});

test('mcp: remember -> recall; supersede -> the old version is gone; history; namespaces hold; forget', async () => {
  const { client: a } = await connect(TOKEN_A);
  const { client: b } = await connect(TOKEN_B);
  const key = `mcp-freeze-${process.pid}`;
  const first = await a.callTool({ name: 'remember', arguments: { key, text: 'The payments deploy freeze starts Fridays at 15:00 UTC' } });
  assert.ok(!first.isError, text(first));
  assert.deepEqual(first.structuredContent, { id: first.structuredContent.id, key, version: 1 });

  const query = { query: 'when does the payments deploy freeze start', kinds: ['memory'] };
  const found = await a.callTool({ name: 'recall', arguments: query });
  assert.equal(found.structuredContent.results[0].id, first.structuredContent.id, text(found));
  assert.match(text(found), new RegExp(`\\[1\\] memory "${key}" \\(id ${first.structuredContent.id}\\)`));

  const second = await a.callTool({ name: 'remember', arguments: { key, text: 'The payments deploy freeze starts Thursdays at 12:00 UTC' } });
  assert.equal(second.structuredContent.version, 2);
  assert.match(text(second), /version 1 is superseded/);
  const again = await a.callTool({ name: 'recall', arguments: query });
  const ids = again.structuredContent.results.map((h) => h.id);
  assert.equal(ids[0], second.structuredContent.id);
  assert.ok(!ids.includes(first.structuredContent.id), 'the superseded version is not recalled');

  const hist = await a.callTool({ name: 'history', arguments: { key } });
  assert.deepEqual(
    hist.structuredContent.versions.map((v) => [v.id, v.version, v.status]),
    [
      [first.structuredContent.id, 1, 'superseded'],
      [second.structuredContent.id, 2, 'active'],
    ],
  );
  assert.match(hist.structuredContent.versions[0].createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  // Team B sees none of it and cannot touch it.
  const theirs = await b.callTool({ name: 'recall', arguments: query });
  assert.ok(theirs.structuredContent.results.every((h) => h.key !== key));
  assert.equal((await b.callTool({ name: 'history', arguments: { key } })).isError, true);
  assert.equal((await b.callTool({ name: 'forget', arguments: { key } })).isError, true);
  assert.equal((await b.callTool({ name: 'forget', arguments: { id: second.structuredContent.id } })).isError, true);

  const gone = await a.callTool({ name: 'forget', arguments: { key } });
  assert.ok(!gone.isError, text(gone));
  assert.equal(gone.structuredContent.deleted, 2);
  const none = await a.callTool({ name: 'history', arguments: { key } });
  assert.equal(none.isError, true);
  assert.match(text(none), /no memory with key/);

  const loose = await a.callTool({ name: 'remember', arguments: { text: `An unkeyed memory ${process.pid}` } });
  assert.equal(loose.structuredContent.key, null);
  const one = await a.callTool({ name: 'forget', arguments: { id: loose.structuredContent.id } });
  assert.equal(one.structuredContent.deleted, 1);
  const chunk = (await a.callTool({ name: 'recall', arguments: { query: 'max_connections', kinds: ['chunk'], limit: 1 } })).structuredContent.results[0];
  const refused = await a.callTool({ name: 'forget', arguments: { id: chunk.id } });
  assert.equal(refused.isError, true);
  assert.match(text(refused), /document chunk, not a memory/);
});

test('mcp: bad arguments are tool errors with actionable text; an unknown tool is -32602', async () => {
  const { client } = await connect(TOKEN_A);
  const cases = [
    ['recall', {}, /query/],
    ['recall', { query: 42 }, /invalid type/],
    ['recall', { query: 'x', limit: 0 }, /limit must be between 1 and 50/],
    ['recall', { query: 'x', kinds: ['docs'] }, /kind/],
    ['recall', { query: 'x', explain: true }, /unknown argument "explain"/],
    ['remember', { text: ' ' }, /text is empty/],
    ['remember', { text: 'x'.repeat(33 * 1024) }, /limit is 32768/],
    ['forget', {}, /exactly one of id/],
    ['forget', { id: 1, key: 'k' }, /exactly one of id/],
    ['history', {}, /key is required/],
  ];
  for (const [name, args, message] of cases) {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args).slice(0, 60)}: ${text(r)}`);
    assert.match(text(r), message);
  }
  await assert.rejects(client.callTool({ name: 'no-such-tool', arguments: {} }), (e) => e.code === -32602 && /no tool "no-such-tool"/.test(e.message));
  await client.ping();
});

test('mcp: raw protocol errors, 202 for notifications, 405 for GET', async () => {
  const auth = { authorization: `Bearer ${TOKEN_A}` };
  const bad = await post('{nope', auth);
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.code, -32700);
  const batch = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }], auth);
  assert.equal(batch.status, 400);
  assert.equal((await batch.json()).error.code, -32600);
  const unknown = await post({ jsonrpc: '2.0', id: 5, method: 'resources/list' }, auth);
  assert.deepEqual((await unknown.json()).error.code, -32601);
  const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, auth);
  assert.equal(note.status, 202);
  assert.equal(await note.text(), '');
  const version = await post({ jsonrpc: '2.0', id: 6, method: 'ping' }, { ...auth, 'mcp-protocol-version': '1999-01-01' });
  assert.equal(version.status, 400);
  const get = await fetch(endpoint, { headers: { ...auth, accept: 'text/event-stream' } });
  assert.equal(get.status, 405);
});
