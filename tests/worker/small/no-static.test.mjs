// The small build of the edge worker (scripts/build-worker.sh --no-static: without static-v1,
// the build the 300 KB budget is for) in workerd. It serves a hash-v1 store like the default
// build, and says which build to deploy when a static embedder is asked of it: 500 misconfigured
// when MEMLOOM_EMBEDDER=static-v2, and a static-v1 store's 409 embedder_mismatch names it too.
// Run by scripts/test-worker.sh, which sets WORKER_URL (the small build, hash-v1, on the
// examples/notes store), STATIC_WORKER_URL (the small build with MEMLOOM_EMBEDDER=static-v2),
// TOKEN_A, TOKEN_S and DATABASE_URL (the examples/notes store, superuser).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

const { WORKER_URL, STATIC_WORKER_URL, TOKEN_A, TOKEN_S, DATABASE_URL } = process.env;
if (!WORKER_URL || !STATIC_WORKER_URL || !TOKEN_A || !TOKEN_S || !DATABASE_URL) {
  throw new Error('run through scripts/test-worker.sh (WORKER_URL, STATIC_WORKER_URL, TOKEN_A, TOKEN_S, DATABASE_URL)');
}

async function call(base, token, route, body) {
  const res = await fetch(`${base}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, json: await res.json() };
}

const psql = (sql) => execFileSync('psql', ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', DATABASE_URL, '-c', sql], { encoding: 'utf8' }).trim();

test('the small build recalls from a hash-v1 store', async () => {
  const health = await call(WORKER_URL, TOKEN_A, '/v1/health');
  assert.equal(health.status, 200, JSON.stringify(health.json));
  assert.equal(health.json.embedder.worker, 'hash-v1');
  assert.equal(health.json.embedder.matches, true);
  const res = await call(WORKER_URL, TOKEN_A, '/v1/recall', { query: 'max_connections', limit: 3 });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  assert.ok(res.json.results.length > 0, JSON.stringify(res.json));
});

test('MEMLOOM_EMBEDDER=static-v2 on the small build: 500 misconfigured naming the build to deploy', async () => {
  const res = await call(STATIC_WORKER_URL, TOKEN_S, '/v1/recall', { query: 'where are the runbooks' });
  assert.equal(res.status, 500, JSON.stringify(res.json));
  assert.equal(res.json.error.code, 'misconfigured');
  assert.match(res.json.error.message, /built without static-v1 .*deploy the default build \(bash scripts\/build-worker\.sh/);
});

test('a static-v1 store: the 409 adds that this build lacks static-v1', async () => {
  psql("UPDATE memloom_meta SET embedder_name = 'static', embedder_dims = 512");
  try {
    const res = await call(WORKER_URL, TOKEN_A, '/v1/recall', { query: 'max_connections' });
    assert.equal(res.status, 409, JSON.stringify(res.json));
    assert.equal(res.json.error.code, 'embedder_mismatch');
    assert.match(res.json.error.message, /store built with static-v1 .*this worker was built without static-v1 .*MEMLOOM_EMBEDDER=static-v1/);
  } finally {
    psql("UPDATE memloom_meta SET embedder_name = 'hash', embedder_dims = 256");
  }
  const res = await call(WORKER_URL, TOKEN_A, '/v1/recall', { query: 'max_connections' });
  assert.equal(res.status, 200, JSON.stringify(res.json));
});
