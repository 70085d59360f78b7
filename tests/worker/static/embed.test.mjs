// The edge worker embedding with static-v2 in workerd (wrangler dev): the token table lives in
// the store (sql/memloom/12_static_table.sql), the worker tokenizes, the database sums, the core
// finishes. The vectors it stores must be the golden vectors bit for bit (the same file the Rust
// core, Node and Chromium check). Run by scripts/test-worker.sh, which sets WORKER_URL, TOKEN_S
// and DATABASE_URL (a static-v2 server store, superuser) for the second worker it starts
// (MEMLOOM_EMBEDDER=static-v2; static-v1 is the same path with other weights, checked natively
// by memloom-sql's static_table test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const { WORKER_URL, TOKEN_S, DATABASE_URL } = process.env;
if (!WORKER_URL || !TOKEN_S || !DATABASE_URL) {
  throw new Error('run through scripts/test-worker.sh (WORKER_URL, TOKEN_S, DATABASE_URL)');
}
const here = path.dirname(fileURLToPath(import.meta.url));
const EMBEDDER = 'static-v2';
const golden = JSON.parse(readFileSync(path.join(here, `../../golden/embeddings-${EMBEDDER}.json`), 'utf8'));

async function call(route, body) {
  const res = await fetch(`${WORKER_URL}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${TOKEN_S}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, json: await res.json() };
}

const psql = (sql) => execFileSync('psql', ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', DATABASE_URL, '-c', sql], { encoding: 'utf8' }).trim();
const bits = (xs) => Array.from(new Uint32Array(Float32Array.from(xs).buffer));

test('health: the worker embeds with static-v2 and the store matches', async () => {
  const res = await call('/v1/health');
  assert.equal(res.status, 200);
  assert.equal(res.json.embedder.worker, EMBEDDER);
  assert.equal(res.json.embedder.matches, true);
});

test('golden vectors: what the worker stores is the core\'s static-v2 bit for bit', async () => {
  assert.ok(golden.length >= 10);
  for (const [i, g] of golden.entries()) {
    assert.equal(g.embedder, EMBEDDER);
    if (g.text.trim() === '') continue; // the API refuses empty texts
    const res = await call('/v1/memories', { key: `golden-${i}`, text: g.text });
    assert.equal(res.status, 201, JSON.stringify(res.json));
    const stored = psql(`SELECT embedding::text FROM memloom_items WHERE namespace = 'team-s' AND key = 'golden-${i}' AND status = 'active'`);
    assert.deepEqual(bits(JSON.parse(stored)), bits(g.vector), `vector of ${JSON.stringify(g.text)}`);
  }
});

test('recall embeds the query the same way: a memory\'s own text finds it at similarity 1', async () => {
  const g = golden.find((x) => x.text.split(' ').length > 4);
  const i = golden.indexOf(g);
  const res = await call('/v1/recall', { query: g.text, limit: 3 });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  assert.equal(res.json.results[0].key, `golden-${i}`);
  assert.ok(Math.abs(res.json.results[0].similarity - 1) < 1e-6, String(res.json.results[0].similarity));
});

test('a store without the table: 409 naming the fix, and the worker recovers once it is back', async () => {
  psql('BEGIN; CREATE TABLE static_rows_saved AS SELECT * FROM memloom_static_rows; CREATE TABLE static_table_saved AS SELECT * FROM memloom_static_table; DELETE FROM memloom_static_rows; DELETE FROM memloom_static_table; COMMIT');
  try {
    const res = await call('/v1/recall', { query: 'where are the runbooks' });
    assert.equal(res.status, 409, JSON.stringify(res.json));
    assert.equal(res.json.error.code, 'embedder_mismatch');
    assert.match(res.json.error.message, /no static-v1 table .static-v1 and static-v2 share it.; load it with .memloom init --database-url URL --embedder static-v2/);
  } finally {
    psql('BEGIN; INSERT INTO memloom_static_table SELECT * FROM static_table_saved; INSERT INTO memloom_static_rows SELECT * FROM static_rows_saved; DROP TABLE static_rows_saved, static_table_saved; COMMIT');
  }
  const res = await call('/v1/recall', { query: 'where are the runbooks' });
  assert.equal(res.status, 200, JSON.stringify(res.json));
});
