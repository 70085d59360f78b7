// The worker configured with an OpenAI-compatible embeddings API (MEMLOOM_EMBED_*), against a
// mock API on loopback served by this test. The store was built with hash-v1, so a good
// answer must end in 409 naming both embedders; a failing or malformed API in 502. Starts its
// own wrangler dev (the main worker of scripts/test-worker.sh keeps hash-v1).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const { DATABASE_URL } = process.env;
if (!DATABASE_URL) throw new Error('run through scripts/test-worker.sh (DATABASE_URL)');
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TOKEN = `mlt_embed_api_${process.pid}_0123456789`;
const DIMS = 256;

let api; // mock embeddings API
let mode = 'ok';
const seen = [];
let wrangler;
let workDir;
let url;

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

before(async () => {
  api = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ auth: req.headers.authorization, body: JSON.parse(body) });
      if (mode === 'down') {
        res.writeHead(500).end('upstream exploded');
        return;
      }
      const n = mode === 'wrong-dims' ? DIMS - 1 : DIMS;
      const embedding = Array.from({ length: n }, (_, i) => (i === 0 ? 1 : 0));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ index: 0, embedding }] }));
    });
  });
  const apiPort = await listen(api);
  workDir = mkdtempSync(path.join(tmpdir(), 'memloom-embed-api-'));
  const hash = createHash('sha256').update(TOKEN).digest('hex');
  writeFileSync(
    path.join(workDir, 'worker.env'),
    [
      `DATABASE_URL=${DATABASE_URL}`,
      `MEMLOOM_TOKENS={"${hash}":"team-a"}`,
      `MEMLOOM_EMBED_URL=http://127.0.0.1:${apiPort}/v1`,
      'MEMLOOM_EMBED_MODEL=mock-embed',
      `MEMLOOM_EMBED_DIMS=${DIMS}`,
      'MEMLOOM_EMBED_KEY=sk-test-key',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((r) => probe.close(r));
  url = `http://127.0.0.1:${port}`;
  wrangler = spawn(
    path.join(root, 'crates/edge-worker/node_modules/.bin/wrangler'),
    ['dev', '--config', path.join(root, 'wrangler.toml'), '--ip', '127.0.0.1', '--port', String(port),
      '--local', '--env-file', path.join(workDir, 'worker.env'), '--persist-to', path.join(workDir, 'state'),
      '--show-interactive-dev-session=false'],
    { cwd: workDir, detached: true, stdio: 'ignore',
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', CLOUDFLARE_API_TOKEN: '' } },
  );
  for (let i = 0; i < 120; i++) {
    try {
      const r = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(2000) });
      if (r.status === 200 || r.status === 503) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the second worker did not start in 30 s');
});

after(() => {
  if (wrangler) {
    try {
      process.kill(-wrangler.pid, 'SIGTERM'); // its own process group: wrangler and workerd
    } catch {
      /* already gone */
    }
  }
  api?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

async function recall(query) {
  const res = await fetch(`${url}/v1/recall`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, json: await res.json() };
}

test('the API embedder is called, and a hash-v1 store refuses it naming both', async () => {
  mode = 'ok';
  const res = await recall('max_connections');
  assert.equal(res.status, 409, JSON.stringify(res.json));
  assert.equal(res.json.error.code, 'embedder_mismatch');
  assert.match(res.json.error.message, /api:mock-embed/);
  assert.match(res.json.error.message, /hash/);
  const call = seen.at(-1);
  assert.equal(call.auth, 'Bearer sk-test-key');
  assert.deepEqual(call.body, { model: 'mock-embed', input: ['max_connections'], dimensions: DIMS, encoding_format: 'float' });
});

test('health names the worker embedder and says it does not match', async () => {
  const res = await fetch(`${url}/v1/health`);
  const json = await res.json();
  assert.equal(json.embedder.worker, 'api:mock-embed-v1');
  assert.equal(json.embedder.matches, false);
});

test('a failing or malformed embeddings API is a 502 without its details', async () => {
  for (const m of ['down', 'wrong-dims']) {
    mode = m;
    const res = await recall('max_connections');
    assert.equal(res.status, 502, JSON.stringify(res.json));
    assert.equal(res.json.error.code, 'embedding_failed');
    assert.ok(!res.json.error.message.includes('exploded'));
  }
});
