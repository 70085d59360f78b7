// `memloom mcp` end to end: the official SDK's Client spawns the CLI over stdio on an embedded
// store holding the fixture docs, lists the tools, and uses them as an agent would: remember ->
// recall, supersede -> the old version is gone, history, forget, and bad arguments -> tool
// errors (isError) from a server that keeps serving. stdout must carry protocol only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bin, fixtures, runCli, RESULT_KEYS } from './helpers.js';
import { brokenResponses, compile, goldenCases, validateRecall } from './contract-helpers.js';

const workerSrc = new URL('../../crates/edge-worker/src/', import.meta.url);

let tmp, store, client, transport;
let stderr = '';
const transportErrors = [];

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-mcp-'));
  store = join(tmp, 'store');
  for (const args of [['init'], ['ingest', join(fixtures, 'docs')]]) {
    const r = runCli([...args, '--store', store]);
    assert.equal(r.status, 0, r.stderr);
  }
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.MEMLOOM_EMBED_URL;
  transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--store', store], env, stderr: 'pipe' });
  transport.stderr.on('data', (d) => (stderr += d));
  client = new Client({ name: 'memloom-test', version: '1.0.0' });
  client.onerror = (e) => transportErrors.push(e);
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const call = (name, args) => client.callTool({ name, arguments: args });
const text = (r) => r.content.map((c) => c.text).join('\n');

test('initialize: server identity and instructions', () => {
  assert.equal(client.getServerVersion().name, 'memloom');
  assert.match(client.getInstructions(), /recall/);
  assert.ok(client.getServerCapabilities().tools);
});

test('tools/list: recall, remember, forget, history with schemas and descriptions', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['forget', 'history', 'recall', 'remember']);
  for (const t of tools) {
    assert.ok(t.description.length > 80, `${t.name} has a useful description`);
    assert.equal(t.inputSchema.type, 'object');
    assert.equal(t.outputSchema.type, 'object');
  }
  const recall = tools.find((t) => t.name === 'recall');
  assert.deepEqual(recall.inputSchema.required, ['query']);
  assert.deepEqual(Object.keys(recall.inputSchema.properties).sort(), ['asOf', 'kinds', 'limit', 'query', 'since', 'until']);
  assert.deepEqual(recall.inputSchema.properties.kinds.items.enum, ['memory', 'chunk']);
  const remember = tools.find((t) => t.name === 'remember');
  assert.deepEqual(remember.inputSchema.required, ['text']);
});

test('tools/list: each tool says whether it reads, destroys, or can be repeated (MCP annotations)', async () => {
  const { tools } = await client.listTools();
  const hints = Object.fromEntries(
    tools.map((t) => [t.name, [t.annotations?.readOnlyHint, t.annotations?.destructiveHint, t.annotations?.idempotentHint]]),
  );
  // [readOnly, destructive, idempotent]
  assert.deepEqual(hints, {
    recall: [true, false, true],
    remember: [false, false, false],
    forget: [false, true, true],
    history: [true, false, true],
  });
});

test('the edge worker serves the same tools and instructions (crates/edge-worker/src/mcp_tools.json)', async () => {
  const { tools } = await client.listTools();
  const worker = JSON.parse(readFileSync(new URL('mcp_tools.json', workerSrc), 'utf8'));
  const regenerate = 'regenerate mcp_tools.json (node scripts/gen-mcp-tools.mjs) after changing a tool or the instructions';
  assert.deepEqual(Object.keys(worker), ['instructions', 'tools']);
  assert.deepEqual(
    tools.map(({ execution, ...t }) => t),
    worker.tools,
    regenerate,
  );
  assert.equal(worker.instructions, client.getInstructions(), regenerate);
});

test("tools/list: recall's outputSchema is the recall response's (schema/recall-response.json)", async () => {
  const { tools } = await client.listTools();
  const validate = await compile(tools.find((t) => t.name === 'recall').outputSchema);
  for (const c of goldenCases) assert.ok(validate(c.response), `${c.name}: ${JSON.stringify(validate.errors)}`);
  for (const [what, r] of brokenResponses()) assert.ok(!validate(r), `the served outputSchema accepted ${what}`);
});

test('recall: a doc chunk comes back citable (source › breadcrumb, scores, ranks) and in the DESIGN.md shape', async () => {
  const r = await call('recall', { query: 'max_connections', limit: 3 });
  assert.ok(!r.isError, text(r));
  const top = r.structuredContent.results[0];
  assert.deepEqual(validateRecall(r.structuredContent), [], 'schema/recall-response.json');
  assert.deepEqual(Object.keys(r.structuredContent), ['query', 'results', 'tookMs']);
  assert.deepEqual(Object.keys(top), RESULT_KEYS);
  assert.equal(top.kind, 'chunk');
  assert.equal(top.source, 'postgres.md');
  assert.equal(top.breadcrumb, 'PostgreSQL operations > Connection limits');
  assert.ok(r.structuredContent.results.length <= 3);
  const t = text(r);
  assert.match(t, /\[1\] postgres\.md › PostgreSQL operations > Connection limits \(id \d+\)/);
  assert.match(t, /rrfScore 0\.\d{4} · similarity -?\d\.\d{3} · ranks: vector (\d+|-), keyword 1, entity (\d+|-)/);
});

test('remember -> recall finds the memory; supersede -> only the new version is recalled', async () => {
  const first = await call('remember', { text: 'The orders service deploy freeze starts Fridays at 15:00 UTC', key: 'deploy-freeze' });
  assert.ok(!first.isError, text(first));
  assert.deepEqual(Object.keys(first.structuredContent).sort(), ['id', 'key', 'version']);
  assert.equal(first.structuredContent.version, 1);
  assert.equal(first.structuredContent.key, 'deploy-freeze');

  const found = await call('recall', { query: 'when does the deploy freeze start', kinds: ['memory'] });
  assert.ok(!found.isError, text(found));
  assert.equal(found.structuredContent.results[0].id, first.structuredContent.id);
  assert.equal(found.structuredContent.results[0].key, 'deploy-freeze');
  assert.match(text(found), /\[1\] memory "deploy-freeze" \(id \d+\)/);
  assert.match(text(found), /Fridays at 15:00 UTC/);

  const second = await call('remember', { text: 'The orders service deploy freeze starts Thursdays at 12:00 UTC', key: 'deploy-freeze' });
  assert.ok(!second.isError, text(second));
  assert.equal(second.structuredContent.version, 2);
  assert.match(text(second), /version 1 is superseded/);

  const again = await call('recall', { query: 'when does the deploy freeze start', kinds: ['memory'] });
  const ids = again.structuredContent.results.map((h) => h.id);
  assert.equal(ids[0], second.structuredContent.id);
  assert.ok(!ids.includes(first.structuredContent.id), 'the superseded version is not recalled');
  assert.doesNotMatch(text(again), /Fridays at 15:00/);

  const hist = await call('history', { key: 'deploy-freeze' });
  assert.ok(!hist.isError, text(hist));
  assert.deepEqual(
    hist.structuredContent.versions.map((v) => [v.version, v.status]),
    [
      [1, 'superseded'],
      [2, 'active'],
    ],
  );
});

test('forget: by key removes every version; by id removes one memory; chunks cannot be forgotten', async () => {
  const kept = await call('remember', { text: 'Staging database is rebuilt every Monday night' });
  assert.equal(kept.structuredContent.key, null);
  const gone = await call('forget', { key: 'deploy-freeze' });
  assert.ok(!gone.isError, text(gone));
  assert.equal(gone.structuredContent.deleted, 2);
  const after = await call('recall', { query: 'deploy freeze Thursdays', kinds: ['memory'] });
  assert.ok(after.structuredContent.results.every((h) => h.key !== 'deploy-freeze'));
  const noHistory = await call('history', { key: 'deploy-freeze' });
  assert.equal(noHistory.isError, true);
  assert.match(text(noHistory), /no memory with key "deploy-freeze"/);

  const one = await call('forget', { id: kept.structuredContent.id });
  assert.ok(!one.isError, text(one));
  assert.equal(one.structuredContent.deleted, 1);

  const chunk = (await call('recall', { query: 'max_connections', kinds: ['chunk'], limit: 1 })).structuredContent.results[0];
  const refused = await call('forget', { id: chunk.id });
  assert.equal(refused.isError, true);
  assert.match(text(refused), /is a document chunk, not a memory/);
});

test('bad arguments come back as tool errors with actionable text; the server keeps serving', async () => {
  const cases = [
    ['recall', {}, /query/],
    ['recall', { query: 42 }, /query/],
    ['recall', { query: 'x', limit: 0 }, /limit/],
    ['recall', { query: 'x', limit: 51 }, /limit/],
    ['recall', { query: 'x', kinds: ['docs'] }, /kinds/],
    ['recall', { query: '   ' }, /query is empty/],
    ['remember', { key: 'k' }, /text/],
    ['remember', { text: '  ' }, /text is empty/],
    ['remember', { text: 'x'.repeat(33 * 1024) }, /limit is 32768/],
    ['remember', { text: 'ok', key: 'a\nb' }, /control characters/],
    ['forget', {}, /exactly one of id .* or key/],
    ['forget', { id: 1, key: 'k' }, /exactly one of id .* or key/],
    ['forget', { id: -3 }, /id/],
    ['forget', { id: 999999 }, /no memory with id 999999/],
    ['forget', { key: 'never-saved' }, /no memory with key "never-saved"/],
    ['history', {}, /key/],
    ['no-such-tool', {}, /not found/],
  ];
  for (const [name, args, message] of cases) {
    const r = await call(name, args);
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args).slice(0, 60)} -> ${text(r)}`);
    assert.match(text(r), message, `${name} ${JSON.stringify(args).slice(0, 60)}`);
  }
  await client.ping();
  const ok = await call('recall', { query: 'rolling restart' });
  assert.ok(!ok.isError && ok.structuredContent.results.length > 0);
});

test('stdout carries protocol only; diagnostics go to stderr', () => {
  assert.deepEqual(transportErrors, [], 'no unparsable line reached the client');
  assert.match(stderr, /memloom mcp: serving .* on stdio/);
});

test('on a PostgreSQL server (--database-url, --namespace): remember, supersede, recall, forget', { skip: !process.env.MEMLOOM_TEST_DATABASE_URL && 'MEMLOOM_TEST_DATABASE_URL is not set' }, async () => {
  const namespace = `mcp-test-${process.pid}-${Date.now()}`;
  const env = { ...process.env, DATABASE_URL: process.env.MEMLOOM_TEST_DATABASE_URL };
  delete env.MEMLOOM_EMBED_URL;
  const server = new Client({ name: 'memloom-test', version: '1.0.0' });
  await server.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--namespace', namespace], env, stderr: 'pipe' }));
  try {
    const v1 = await server.callTool({ name: 'remember', arguments: { key: 'pool', text: 'PgBouncer pools connections in session mode' } });
    const v2 = await server.callTool({ name: 'remember', arguments: { key: 'pool', text: 'PgBouncer pools connections in transaction mode' } });
    assert.equal(v2.structuredContent.version, 2, text(v2));
    const r = await server.callTool({ name: 'recall', arguments: { query: 'PgBouncer pool mode', kinds: ['memory'] } });
    assert.deepEqual(r.structuredContent.results.map((h) => h.id), [v2.structuredContent.id]);
    assert.notEqual(v1.structuredContent.id, v2.structuredContent.id);
    const gone = await server.callTool({ name: 'forget', arguments: { key: 'pool' } });
    assert.equal(gone.structuredContent.deleted, 2, text(gone));
    assert.equal((await server.callTool({ name: 'history', arguments: { key: 'pool' } })).isError, true);
  } finally {
    await server.close();
  }
});

test('mcp refuses bad options before serving (exit 2, nothing on stdout)', () => {
  const r = runCli(['mcp', '--store', store, '--database-url', 'postgres://x@127.0.0.1:1/x']);
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /either --store or --database-url/);
  const extra = runCli(['mcp', 'positional', '--store', store]);
  assert.equal(extra.status, 2);
  assert.match(extra.stderr, /mcp takes no arguments/);
});

test('a second process on the served embedded store is stopped by the lock: one line, exit 2 (docs/MCP.md)', async () => {
  // The server above holds `store` for as long as it runs.
  for (const args of [['mcp'], ['remember', 'written while the agent runs', '--key', 'second-process']]) {
    const r = await runCli([...args, '--store', store], { async: true });
    assert.equal(r.status, 2, `${args[0]}: ${r.stderr}`);
    assert.match(r.stderr.trim(), /^memloom: error: store .* in use by pid \d+; an embedded store is one process at a time: wait for it, or use a PostgreSQL server \(--database-url\) for concurrent clients$/);
    assert.equal(r.stdout, '');
  }
  // The server still serves, and the refused write is not there.
  const h = await call('history', { key: 'second-process' });
  assert.equal(h.isError, true, text(h));
});

test('a remember that builds the vector index says so: server log, progress to a client that asked, the answer', async () => {
  const { createMcpServer } = await import('../src/mcp.js');
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  const { openStore } = await import('../src/entry-node.js');
  const mem = await openStore({});
  // The build itself needs 20,000 active items (vector-index.test.js covers it); here the
  // store's remember reports one, as it does when it crosses the threshold.
  const remember = mem.remember.bind(mem);
  mem.remember = async (text, options) => {
    options.onIndexBuild({ items: 20000 });
    return remember(text, options);
  };
  const logged = [];
  const server = createMcpServer(mem, { log: (s) => logged.push(s) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const local = new Client({ name: 'memloom-test', version: '1.0.0' });
  try {
    await server.connect(serverSide);
    await local.connect(clientSide);
    const progress = [];
    const r = await local.callTool({ name: 'remember', arguments: { text: 'the build server is ci-7', key: 'ci' } }, undefined, { onprogress: (p) => progress.push(p) });
    assert.ok(!r.isError, text(r));
    assert.match(text(r), /built its vector index over 20000 active items/);
    assert.equal(logged.length, 1);
    assert.match(logged[0], /^memloom mcp: the store holds 20000 active items now: building its vector index/);
    assert.equal(progress.length, 1);
    assert.match(progress[0].message, /building its vector index/);
    // Without a build nothing extra is said.
    mem.remember = remember;
    const plain = await local.callTool({ name: 'remember', arguments: { text: 'the build server is ci-8', key: 'ci' } });
    assert.doesNotMatch(text(plain), /vector index/);
    assert.equal(logged.length, 1);
  } finally {
    await local.close();
    await mem.close();
  }
});
