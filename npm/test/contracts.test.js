// The recall response as data: schema/recall-response.json is its one definition. The golden
// responses (tests/golden/recall-response.json, computed by make_recall_response.py apart from
// any builder) pass it and broken ones fail; the npm builder makes the golden responses from
// their rows, as the worker's does (crates/edge-worker/src/contracts.rs); the recall tool's zod
// output schema is built from the file; and what the store and `memloom recall --json` really
// answer passes it. The MCP server's answers: mcp.test.js.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/entry-node.js';
import { recallResponse } from '../src/recall-response.js';
import { recallResponseZod, zodFromJsonSchema } from '../src/tools.js';
import { brokenResponses, goldenCases, recallSchema, validateRecall } from './contract-helpers.js';
import { fixtures, runCli } from './helpers.js';

test('the golden responses pass the schema; broken ones fail it', () => {
  for (const c of goldenCases) assert.deepEqual(validateRecall(c.response), [], c.name);
  for (const [what, r] of brokenResponses()) assert.notDeepEqual(validateRecall(r), [], `the schema accepted ${what}`);
});

test('the npm builder makes the golden responses from their memloom_fuse rows', () => {
  assert.ok(goldenCases.length >= 4);
  for (const c of goldenCases) {
    const { query, explain = false, weights } = c.request;
    const got = recallResponse(query, c.rows, { tookMs: c.tookMs, explain, weights, timings: c.timings });
    assert.deepEqual(got, c.response, c.name);
  }
});

test("the MCP recall tool's output schema is built from the schema file", () => {
  for (const c of goldenCases) assert.ok(recallResponseZod.safeParse(c.response).success, c.name);
  for (const [what, r] of brokenResponses()) assert.ok(!recallResponseZod.safeParse(r).success, `zod accepted ${what}`);
  // Every keyword of the file is one the converter knows; one it does not know is an error.
  assert.throws(() => zodFromJsonSchema({ type: 'string', pattern: '^a' }), /unsupported keyword\(s\) pattern/);
  assert.throws(() => zodFromJsonSchema({ type: 'object', properties: {} }), /additionalProperties: false/);
  assert.equal(recallSchema.$defs.hit.properties.rrfScore.type, 'number');
});

let tmp, store;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-contracts-'));
  store = await openStore({});
  await store.ingest([
    { source: 'postgres.md', text: '# PostgreSQL\n\n## Connection limits\n\nRaise max_connections only with PgBouncer in front.\n' },
    { source: 'notes.md', text: 'Connections are cheap behind a pooler.\n' },
  ]);
  await store.remember('The orders service keeps 20 connections per pod (ERR_POOL_TIMEOUT when full).', { key: 'pg-pool' });
  await store.remember('An unkeyed note about max_connections.');
  await store.index();
});
after(async () => {
  await store?.close();
  rmSync(tmp, { recursive: true, force: true });
});

test("the store's recall answers in the schema's shape, with and without explain", async () => {
  const plain = await store.recall('max_connections pooler');
  assert.ok(plain.results.length >= 3, JSON.stringify(plain));
  assert.deepEqual(validateRecall(plain), []);
  assert.equal(plain.explain, undefined);

  const r = await store.recall('max_connections pooler', { explain: true, weights: { entity: 1 } });
  assert.deepEqual(validateRecall(r), []);
  assert.deepEqual(r.explain.weights, { vector: 1, keyword: 2, entity: 1 });
  assert.equal(r.explain.embedder, 'hash-v1');
  assert.equal(r.explain.k, 60);
  assert.ok(r.explain.embedMs >= 0 && r.explain.queryMs >= 0 && r.explain.queryMs <= r.tookMs);
  let voted = 0;
  for (const h of r.results) {
    const terms = Object.values(h.explain.terms).filter(Boolean);
    voted += terms.length > 0 ? 1 : 0;
    // The terms add up to the score the SQL computed (summed in the same order).
    const sum = ['vector', 'keyword', 'entity'].reduce((s, a) => s + (h.explain.terms[a]?.term ?? 0), 0);
    assert.ok(Math.abs(sum - h.rrfScore) < 1e-12, `${sum} vs ${h.rrfScore}`);
  }
  assert.ok(voted >= 2);
});

test('`memloom recall --json` (and --explain) answers in the schema shape', () => {
  const dir = join(tmp, 'cli');
  for (const args of [['init'], ['ingest', join(fixtures, 'docs'), '--index']]) {
    const r = runCli([...args, '--store', dir, '-q']);
    assert.equal(r.status, 0, r.stderr);
  }
  for (const extra of [[], ['--explain']]) {
    const r = runCli(['recall', 'max_connections rolling restart', '--json', '--store', dir, ...extra]);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.ok(out.results.length > 0);
    assert.deepEqual(validateRecall(out), [], extra.join(' '));
    if (extra.length) assert.match(out.explain.vectorArm, /hash-v1/);
    else assert.equal(out.explain, undefined);
  }
});

test('the schema ships with the package as a module equal to the file', async () => {
  const { default: shipped } = await import('../schema/recall-response.js');
  const file = JSON.parse(readFileSync(new URL('../../schema/recall-response.json', import.meta.url), 'utf8'));
  assert.deepEqual(shipped, file, 'run scripts/build-wasm.sh (npm/src/gen-schema.js) after editing the schema');
});

test('the request limits ship as a module equal to schema/limits.json, and the MCP tools take them', async () => {
  const { default: shipped } = await import('../schema/limits.js');
  const file = JSON.parse(readFileSync(new URL('../../schema/limits.json', import.meta.url), 'utf8'));
  assert.deepEqual(shipped, file, 'run scripts/build-wasm.sh (npm/src/gen-schema.js) after editing the limits');
  const { TOOLS, rememberError } = await import('../src/tools.js');
  // zod's own bounds (the MCP server publishes them as maxLength / maximum in tools/list).
  const field = (tool, name) => {
    const f = TOOLS[tool].inputSchema[name];
    return f.isOptional() ? f.unwrap() : f;
  };
  assert.equal(field('recall', 'query').maxLength, file.maxQueryChars.value);
  assert.equal(field('recall', 'limit').maxValue, file.maxLimit.value);
  assert.match(TOOLS.recall.inputSchema.limit.description, new RegExp(`default ${file.defaultLimit.value}, at most ${file.maxLimit.value}`));
  for (const t of ['asOf', 'since', 'until']) assert.equal(field('recall', t).maxLength, file.maxInstantChars.value, t);
  assert.equal(field('remember', 'key').maxLength, file.maxKeyChars.value);
  assert.equal(field('remember', 'at').maxLength, file.maxInstantChars.value);
  assert.equal(field('forget', 'key').maxLength, file.maxKeyChars.value);
  assert.equal(field('history', 'key').maxLength, file.maxKeyChars.value);
  assert.equal(rememberError('x'.repeat(file.maxMemoryBytes.value), undefined), null);
  assert.match(rememberError('x'.repeat(file.maxMemoryBytes.value + 1), undefined), new RegExp(`the limit is ${file.maxMemoryBytes.value}`));
  assert.equal(rememberError('x', 'k'.repeat(file.maxKeyChars.value)), null);
  assert.match(rememberError('x', 'k'.repeat(file.maxKeyChars.value + 1)), new RegExp(`1 to ${file.maxKeyChars.value} characters`));
});
