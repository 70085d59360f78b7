// End-to-end tests of the edge worker running in workerd (wrangler dev) against a real
// PostgreSQL + pgvector. Run by scripts/test-worker.sh, which starts both and sets:
//   WORKER_URL, TOKEN_A, TOKEN_B, DATABASE_URL, MEMLOOM_PG_STATE
// Loopback only; a bounded number of requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
// The recall response's one definition (schema/recall-response.json), compiled with ajv.
import { recallSchema, validateRecall } from '../../npm/test/contract-helpers.js';

const { WORKER_URL, TOKEN_A, TOKEN_B, DATABASE_URL } = process.env;
if (!WORKER_URL || !TOKEN_A || !TOKEN_B || !DATABASE_URL) {
  throw new Error('run through scripts/test-worker.sh (WORKER_URL, TOKEN_A, TOKEN_B, DATABASE_URL)');
}
const here = path.dirname(fileURLToPath(import.meta.url));

async function call(route, { token, body, method = 'POST', raw } = {}) {
  const headers = {};
  if (token) headers.authorization = token.includes(' ') ? token : `Bearer ${token}`;
  if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${WORKER_URL}${route}`, {
    method,
    headers,
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

const recall = (token, body) => call('/v1/recall', { token, body });
const remember = (token, body) => call('/v1/memories', { token, body });

function assertError(res, status, code) {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.json), ['error'], res.text);
  assert.deepEqual(Object.keys(res.json.error).sort(), ['code', 'message']);
  if (code) assert.equal(res.json.error.code, code, res.text);
  assert.ok(res.json.error.message.length > 0);
}

function psql(sql) {
  execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', DATABASE_URL, '-c', sql], { stdio: 'pipe' });
}

test('health: database reachable, schema version, embedder, no secrets', async () => {
  const res = await call('/v1/health', { method: 'GET' });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.status, 'ok');
  assert.equal(res.json.database.reachable, true);
  assert.ok(res.json.database.schemaVersion >= 2);
  assert.equal(res.json.embedder.worker, 'hash-v1');
  assert.equal(res.json.embedder.matches, true);
  assert.ok(!res.text.includes('postgres://') && !res.text.includes(TOKEN_A));
});

test('recall: an identifier query finds its chunk first, in the DESIGN.md shape', async () => {
  const res = await recall(TOKEN_A, { query: 'max_connections' });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(validateRecall(res.json), [], 'schema/recall-response.json');
  assert.deepEqual(Object.keys(res.json).sort(), ['query', 'results', 'tookMs']);
  assert.equal(res.json.query, 'max_connections');
  assert.equal(typeof res.json.tookMs, 'number');
  const top = res.json.results[0];
  assert.deepEqual(Object.keys(top).sort(), [
    'breadcrumb', 'content', 'id', 'key', 'kind', 'ranks', 'rrfScore', 'similarity', 'source',
  ]);
  assert.deepEqual(Object.keys(top.ranks).sort(), ['entity', 'keyword', 'vector']);
  assert.equal(top.kind, 'chunk');
  assert.equal(top.source, 'postgres-runbook.md');
  assert.equal(top.breadcrumb, 'Postgres runbook > Connection limits');
  assert.equal(top.ranks.keyword, 1);
  assert.ok(top.content.startsWith('Postgres runbook > Connection limits\n\n'));
});

test('recall: paraphrases find the right section', async () => {
  for (const [query, breadcrumb] of [
    ['two transactions waiting on each other', 'Postgres runbook > Deadlocks'],
    ['restore the database to a point in time', 'Postgres runbook > Backups'],
  ]) {
    const res = await recall(TOKEN_A, { query, limit: 3 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.results[0].breadcrumb, breadcrumb, query);
  }
});

test('recall: limit, kinds and explain', async () => {
  const res = await recall(TOKEN_A, { query: 'nginx reload', limit: 2, kinds: ['chunk'], explain: true });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.results.length, 2);
  assert.ok(res.json.results.every((r) => r.kind === 'chunk'));
  assert.deepEqual(validateRecall(res.json), [], 'schema/recall-response.json');
  assert.equal(res.json.explain.embedder, 'hash-v1');
  assert.deepEqual(res.json.explain.weights, { vector: 1, keyword: 2, entity: 0.5 });
  assert.equal(res.json.explain.k, 60);
  assert.ok(res.json.explain.connectMs >= 0 && res.json.explain.queryMs >= 0);
  for (const r of res.json.results) {
    // Each hit's terms (the npm store's explain shape) add up to its score.
    const sum = ['vector', 'keyword', 'entity'].reduce((s, a) => s + (r.explain.terms[a]?.term ?? 0), 0);
    assert.ok(Math.abs(sum - r.rrfScore) < 1e-12, `${sum} vs ${r.rrfScore}`);
    assert.equal(r.explain.k, 60);
  }
});

test('memories: saved through the worker, recalled, and a key supersedes', async () => {
  const key = `on-call-${Date.now()}`;
  const v1 = await remember(TOKEN_A, { key, text: 'Alice is on call for the orders service this week' });
  assert.equal(v1.status, 201, v1.text);
  assert.equal(v1.json.version, 1);
  assert.equal(v1.json.key, key);
  const v2 = await remember(TOKEN_A, { key, text: 'Bob is on call for the orders service this week' });
  assert.equal(v2.status, 201, v2.text);
  assert.equal(v2.json.version, 2);
  assert.notEqual(v2.json.id, v1.json.id);

  const res = await recall(TOKEN_A, { query: 'who is on call for the orders service', kinds: ['memory'] });
  assert.equal(res.status, 200, res.text);
  const ids = res.json.results.map((r) => r.id);
  assert.equal(ids[0], v2.json.id, res.text);
  assert.equal(res.json.results[0].key, key);
  assert.ok(res.json.results[0].content.includes('Bob'));
  assert.ok(!ids.includes(v1.json.id), 'the superseded version must not be recalled');

  const unkeyed = await remember(TOKEN_A, { text: 'The staging database is refreshed every Sunday' });
  assert.equal(unkeyed.status, 201, unkeyed.text);
  assert.equal(unkeyed.json.version, 1);
  assert.equal(unkeyed.json.key, null);
});

test('namespaces: a token of A never sees B, and B never sees A', async () => {
  const codename = 'zanzibar-quokka-7';
  const b = await remember(TOKEN_B, { key: 'codename', text: `Team B's project codename is ${codename}` });
  assert.equal(b.status, 201, b.text);

  const fromB = await recall(TOKEN_B, { query: codename });
  assert.equal(fromB.status, 200, fromB.text);
  assert.equal(fromB.json.results[0].id, b.json.id);

  const fromA = await recall(TOKEN_A, { query: codename, limit: 50 });
  assert.equal(fromA.status, 200, fromA.text);
  assert.ok(fromA.json.results.every((r) => r.id !== b.json.id && !r.content.includes(codename)));

  // B has no chunks: A's runbook is invisible to it.
  const runbook = await recall(TOKEN_B, { query: 'max_connections', limit: 50 });
  assert.equal(runbook.status, 200, runbook.text);
  assert.ok(runbook.json.results.every((r) => r.kind === 'memory' && r.source === null), runbook.text);

  // The same key in two namespaces is two independent histories.
  const a = await remember(TOKEN_A, { key: 'codename', text: 'Team A has no codename' });
  assert.equal(a.json.version, 1);
});

test('401: missing, malformed and unknown tokens', async () => {
  for (const token of [undefined, 'Basic dXNlcjpwYXNz', 'not-a-known-token-0123456789', 'short']) {
    const res = await recall(token, { query: 'max_connections' });
    assertError(res, 401, 'unauthorized');
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
  }
  assertError(await remember(undefined, { text: 'x' }), 401, 'unauthorized');
});

test('400: malformed JSON and invalid fields, with clear messages', async () => {
  const cases = [
    [{ raw: '{"query": ' }, 'invalid_json'],
    [{ raw: '' }, 'invalid_json'],
    [{ body: { query: '   ' } }, 'invalid_query'],
    [{ body: { query: 'x'.repeat(1001) } }, 'invalid_query'],
    [{ body: { query: 'q', limit: 0 } }, 'invalid_limit'],
    [{ body: { query: 'q', limit: 500 } }, 'invalid_limit'],
    [{ body: { query: 'q', kinds: ['doc'] } }, 'invalid_kinds'],
    [{ body: { query: 'q', weights: { vector: -1 } } }, 'invalid_weights'],
    [{ body: { query: 'q', lmit: 3 } }, 'invalid_request'],
    [{ body: ['q'] }, 'invalid_request'],
  ];
  for (const [req, code] of cases) {
    const res = await call('/v1/recall', { token: TOKEN_A, ...req });
    assertError(res, 400, code);
  }
  const unknown = await recall(TOKEN_A, { query: 'q', lmit: 3 });
  assert.match(unknown.json.error.message, /lmit/);
  assertError(await remember(TOKEN_A, { text: '' }), 400, 'invalid_text');
  assertError(await remember(TOKEN_A, { text: 't', key: '' }), 400, 'invalid_key');
});

test('413: a body over 64 KiB', async () => {
  const res = await call('/v1/recall', { token: TOKEN_A, raw: JSON.stringify({ query: 'a'.repeat(70_000) }) });
  assertError(res, 413, 'payload_too_large');
});

test('404 and 405 are JSON errors too', async () => {
  assertError(await call('/v2/recall', { token: TOKEN_A, body: {} }), 404, 'not_found');
  assertError(await call('/v1/recall', { token: TOKEN_A, method: 'GET' }), 405, 'method_not_allowed');
});

test('openapi: served and names every route', async () => {
  const res = await call('/v1/openapi.json', { method: 'GET' });
  assert.equal(res.status, 200);
  for (const p of ['/v1/recall', '/v1/memories', '/v1/health']) assert.ok(res.json.paths[p], p);
  // Its recall response is the schema file's (built from it: crates/edge-worker/src/contracts.rs).
  const served = res.json.components.schemas;
  assert.deepEqual(served.RecallResponse.required, recallSchema.required);
  assert.deepEqual(Object.keys(served.RecallHit.properties), Object.keys(recallSchema.$defs.hit.properties));
  assert.equal(served.Hit, undefined);
});

test('409: a store built with another embedder is refused, naming both', async () => {
  psql('UPDATE memloom_meta SET embedder_version = 2');
  try {
    const res = await recall(TOKEN_A, { query: 'max_connections' });
    assertError(res, 409, 'embedder_mismatch');
    assert.match(res.json.error.message, /hash-v1/);
    assert.match(res.json.error.message, /hash-v2/);
    assertError(await remember(TOKEN_A, { text: 'x' }), 409, 'embedder_mismatch');
  } finally {
    psql('UPDATE memloom_meta SET embedder_version = 1');
  }
  assert.equal((await recall(TOKEN_A, { query: 'max_connections' })).status, 200);
});

test('503, not a hang, when the database accepts connections but never answers', async () => {
  const pgctl = path.join(here, 'pg-ctl.sh');
  execFileSync('bash', [pgctl, 'freeze'], { stdio: 'inherit' });
  try {
    const t = Date.now();
    const res = await recall(TOKEN_A, { query: 'max_connections' });
    const took = Date.now() - t;
    assertError(res, 503, 'database_unavailable');
    assert.match(res.json.error.message, /within 2000 ms/);
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assert.ok(took >= 1900 && took < 10_000, `answered after ${took} ms`);
  } finally {
    execFileSync('bash', [pgctl, 'thaw'], { stdio: 'inherit' });
  }
  assert.equal((await recall(TOKEN_A, { query: 'max_connections' })).status, 200);
});

test('503 with Retry-After while the database is down, then recovery', async () => {
  const pgctl = path.join(here, 'pg-ctl.sh');
  execFileSync('bash', [pgctl, 'pause'], { stdio: 'inherit' });
  try {
    const t = Date.now();
    const res = await recall(TOKEN_A, { query: 'max_connections' });
    assert.ok(Date.now() - t < 10_000, 'must not hang');
    assertError(res, 503, 'database_unavailable');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assertError(await remember(TOKEN_A, { text: 'while down' }), 503, 'database_unavailable');
    const health = await call('/v1/health', { method: 'GET' });
    assert.equal(health.status, 503);
    assert.equal(health.json.database.reachable, false);
    assert.ok(Number(health.headers.get('retry-after')) > 0);
  } finally {
    execFileSync('bash', [pgctl, 'resume'], { stdio: 'inherit' });
  }
  let last;
  for (let i = 0; i < 20; i++) {
    last = await recall(TOKEN_A, { query: 'max_connections' });
    if (last.status === 200) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.equal(last.status, 200, last.text);
  assert.equal(last.json.results[0].breadcrumb, 'Postgres runbook > Connection limits');
});
