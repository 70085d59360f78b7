// Bad input at the edge worker: oversized bodies (by Content-Length and streamed without one),
// malformed and hostile JSON, NUL characters, lone surrogates, SQL and tsquery metacharacters,
// Unicode edge cases, the MCP endpoint's JSON-RPC framing. Each gets a JSON 4xx that says what
// is wrong or a 2xx: never a 500, a hang or a dropped connection, and nothing stored before is
// lost (row counts before and after). Run by scripts/test-worker.sh (WORKER_URL, TOKEN_A,
// DATABASE_URL). Loopback only, a bounded number of requests.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { validateRecall } from '../../npm/test/contract-helpers.js';

const { WORKER_URL, TOKEN_A, DATABASE_URL } = process.env;
if (!WORKER_URL || !TOKEN_A || !DATABASE_URL) {
  throw new Error('run through scripts/test-worker.sh (WORKER_URL, TOKEN_A, DATABASE_URL)');
}

let tried = 0;

async function call(route, { body, raw, headers = {}, method = 'POST', token = TOKEN_A, duplex } = {}) {
  const h = { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers };
  const res = await fetch(`${WORKER_URL}${route}`, {
    method,
    headers: h,
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    duplex,
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** A 4xx JSON error with a code and a message, or the given 2xx; never a 5xx. */
function handled(res, status, code, what) {
  tried++;
  assert.ok(res.status < 500, `${what}: ${res.status} ${res.text}`);
  assert.equal(res.status, status, `${what}: ${res.text}`);
  if (code) {
    assert.equal(res.json?.error?.code, code, `${what}: ${res.text}`);
    assert.ok(res.json.error.message.length > 10, what);
  }
}

function counts() {
  const out = execFileSync('psql', ['-X', '-At', DATABASE_URL, '-c',
    `SELECT count(*) FILTER (WHERE kind = 'chunk') || ' ' || count(*) FILTER (WHERE kind = 'memory') FROM memloom_items`]);
  const [chunks, memories] = out.toString().trim().split(' ').map(Number);
  return { chunks, memories };
}

let baseline;
before(async () => {
  const r = await call('/v1/memories', { body: { key: 'bad-input-anchor', text: 'The anchor memory must survive bad input' } });
  assert.equal(r.status, 201, r.text);
  baseline = counts();
  assert.ok(baseline.chunks > 0);
});

after(() => {
  process.stderr.write(`worker bad-input: ${tried} bad requests tried\n`);
});

test('oversized bodies: 413 by Content-Length and by actual size when streamed without one', async () => {
  for (const route of ['/v1/recall', '/v1/memories', '/mcp']) {
    handled(await call(route, { raw: JSON.stringify({ query: 'a'.repeat(70_000), text: 'b' }) }), 413, route === '/mcp' ? undefined : 'payload_too_large', `${route} 70 KB`);
    // 8 MB streamed in 64 KiB pieces, no Content-Length (chunked transfer encoding).
    const piece = new TextEncoder().encode(' '.repeat(64 * 1024));
    let n = 0;
    const stream = new ReadableStream({
      pull(c) {
        if (n++ < 128) c.enqueue(piece);
        else c.close();
      },
    });
    const t = Date.now();
    const res = await call(route, { raw: stream, duplex: 'half' });
    handled(res, 413, route === '/mcp' ? undefined : 'payload_too_large', `${route} 8 MB streamed`);
    assert.ok(Date.now() - t < 15_000);
  }
  // A memory text of 40 KB fits the body but not the text limit.
  handled(await call('/v1/memories', { body: { text: 'x'.repeat(40_000) } }), 400, 'invalid_text', 'text over 32 KiB');
});

test('malformed JSON: 400 invalid_json / invalid_request with a message', async () => {
  // Deep nesting under the 64 KiB cap (serde_json stops at 128 levels: no stack overflow).
  const deep = '['.repeat(30_000) + ']'.repeat(30_000);
  const deepObj = '{"query":'.repeat(6_000) + '"x"' + '}'.repeat(6_000);
  const cases = [
    ['', 'invalid_json'], ['   \n', 'invalid_json'], ['{', 'invalid_json'], ['{"query": "x"', 'invalid_json'],
    ['{"query": "x"}}', 'invalid_json'], ['{"query": "x",}', 'invalid_json'], ["{'query': 'x'}", 'invalid_json'],
    ['{query: "x"}', 'invalid_json'], ['{"query": "x" "limit": 1}', 'invalid_json'], ['null', 'invalid_request'],
    ['true', 'invalid_request'], ['42', 'invalid_request'], ['"x"', 'invalid_request'], ['[]', 'invalid_request'],
    ['{}', 'invalid_request'], ['{"query": null}', 'invalid_request'], ['{"query": 42}', 'invalid_request'],
    ['{"query": ["x"]}', 'invalid_request'], ['{"query": {"$ne": 1}}', 'invalid_request'],
    ['{"query": "x", "limit": "5"}', 'invalid_request'], ['{"query": "x", "limit": 1e400}', 'invalid_json'],
    ['{"query": "x", "limit": 5.5}', 'invalid_request'], ['{"query": "x", "limit": -1}', 'invalid_limit'],
    ['{"query": "x", "limit": 99999999999999999999}', 'invalid_request'], ['{"query": "x", "limit": NaN}', 'invalid_json'],
    ['{"query": "x", "weights": {"vector": Infinity}}', 'invalid_json'], ['{"query": "x", "weights": {"vector": 1e308}}', 'invalid_weights'],
    ['{"query": "x", "weights": {"vector": 1e999}}', 'invalid_json'],
    ['{"query": "x", "kinds": "chunk"}', 'invalid_request'], ['{"query": "x", "kinds": ["chunk\'; --"]}', 'invalid_kinds'],
    ['{"query": "x", "namespace": "team-b"}', 'invalid_request'], ['{"query": "\\ud800"}', 'invalid_json'],
    ['{"query": "\\uDC00x"}', 'invalid_json'], ['{"query": "\\u00"}', 'invalid_json'], ['{"query": "\\x41"}', 'invalid_json'],
    ['{"query": "a\u0000b"}', 'invalid_json'], ['{"query": "a\\u0000b"}', 'invalid_query'],
    ['\uFEFF{"query": "bom"}', 'invalid_json'], [deep, 'invalid_request'], [deepObj, 'invalid_request'],
  ];
  for (const [raw, code] of cases) {
    const res = await call('/v1/recall', { raw });
    handled(res, 400, code, `recall ${JSON.stringify(raw.slice(0, 60))}`);
  }
  // Not UTF-8 at all.
  handled(await call('/v1/recall', { raw: Buffer.from([0x7b, 0x22, 0x71, 0x75, 0x65, 0x72, 0x79, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }), 400, 'invalid_json', 'invalid UTF-8 body');
  const memoryCases = [
    ['{"text": "a\\u0000b"}', 'invalid_text'], ['{"text": "ok", "key": "a\\u0000b"}', 'invalid_key'],
    ['{"text": "ok", "key": "\\ud800"}', 'invalid_json'], ['{"text": "ok", "key": 7}', 'invalid_request'],
    [`{"text": "ok", "key": "${'k'.repeat(201)}"}`, 'invalid_key'],
    ['{"text": "ok", "metadata": {"a": 1}}', 'invalid_request'], ['{"text": "ok", "namespace": "team-b"}', 'invalid_request'],
    ['{"text": "ok", "id": 1}', 'invalid_request'], ['{"text": "ok", "text": ""}', 'invalid_request'],
  ];
  for (const [raw, code] of memoryCases) {
    handled(await call('/v1/memories', { raw }), 400, code, `memories ${raw.slice(0, 60)}`);
  }
  // A content type other than JSON still parses as JSON or says why.
  handled(await call('/v1/recall', { raw: 'query=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 400, 'invalid_json', 'form body');
  assert.deepEqual(counts(), baseline, 'nothing written by bad requests');
});

test('recall: SQL and tsquery metacharacters and Unicode edge cases are 200', async () => {
  const queries = [
    "'", "''", "'; DROP TABLE memloom_items; --", '" OR 1=1 --', 'a & b', 'a | b', '!a', '!!!', 'max:*', ':*',
    'a <-> b', '<->', '<2>', '(', ')', '(a | b) & !c', '\\', '\\\\', 'back\\slash\\', "E'\\x00'", '$1', '$$',
    '%', '_%_', '*', ';', '--', '/* c */', "O'Reilly's", '& max_connections', 'pg_hba.conf & ', 'שלום עולם',
    '\u202Eevil\u202C', 'e\u0301\u0301', '🧠🔥', '👩‍👩‍👧', 'x\uFEFFy', '\u200B', '全角　スペース', 'tab\there',
    'new\nline', '\u0001\u001f', 'a & '.repeat(240), "'".repeat(1000), '\\'.repeat(1000), '<-> '.repeat(240),
  ];
  for (const query of queries) {
    const res = await call('/v1/recall', { body: { query, limit: 5, explain: true } });
    handled(res, 200, undefined, `recall ${JSON.stringify(query.slice(0, 40))}`);
    assert.deepEqual(validateRecall(res.json), [], `recall ${JSON.stringify(query.slice(0, 40))}: schema/recall-response.json`);
  }
  const id = await call('/v1/recall', { body: { query: '& max_connections' } });
  assert.equal(id.json.results[0].breadcrumb, 'Postgres runbook > Connection limits');
  assert.deepEqual(counts(), baseline, 'recall wrote nothing');
});

test('memories: Unicode edge cases are stored as sent', async () => {
  const texts = ['שלום עולם \u202Evault\u202C', 'Cafe\u0301 Z\u0351\u0352\u0353algo', 'Mascot 🧠🔥 👩‍👩‍👧', '全角　スペース', "'; DROP TABLE memloom_items; --"];
  for (const [i, text] of texts.entries()) {
    const res = await call('/v1/memories', { body: { key: `bad-unicode-${i}`, text } });
    handled(res, 201, undefined, `remember ${JSON.stringify(text)}`);
    const got = execFileSync('psql', ['-X', '-At', DATABASE_URL, '-c', `SELECT content FROM memloom_items WHERE id = ${Number(res.json.id)}`]).toString().replace(/\n$/, '');
    assert.equal(got, text);
  }
  const now = counts();
  assert.equal(now.memories, baseline.memories + texts.length);
  assert.equal(now.chunks, baseline.chunks);
});

test('MCP: malformed JSON-RPC gets a JSON-RPC error, never a 500', async () => {
  const mcp = (raw) => call('/mcp', { raw, headers: { accept: 'application/json, text/event-stream' } });
  const cases = [
    '', '{', 'null', '[]', '42', '{"jsonrpc": "2.0"}', '{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}',
    '{"jsonrpc": "2.0", "id": 1, "method": 42}', '{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}',
    '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "a\\u0000b"}}}',
    '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": {"text": "a\\u0000b"}}}',
    '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope", "arguments": {}}}',
    '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": "x"}}',
    '[' + '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},'.repeat(50) + '{}]',
    '['.repeat(50_000),
  ];
  for (const raw of cases) {
    const res = await mcp(raw);
    tried++;
    assert.ok(res.status < 500, `mcp ${raw.slice(0, 60)}: ${res.status} ${res.text}`);
    if (res.status === 200 && res.json?.result?.isError !== undefined) assert.equal(res.json.result.isError, true, raw);
  }
  assert.equal(counts().chunks, baseline.chunks);
});
