import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chunk, embed, embedBatch, embedderInfo, extractEntities, fuse } from '../src/entry-node.js';

test('embedderInfo names hash-v1', () => {
  assert.deepEqual(embedderInfo(), { id: 'hash-v1', name: 'hash', version: 1, dims: 256 });
});

test('embed returns a unit Float32Array; embedBatch matches it', () => {
  const v = embed('connection pool size');
  assert.ok(v instanceof Float32Array);
  assert.equal(v.length, 256);
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  assert.ok(Math.abs(norm - 1) < 1e-6);
  const [a, b] = embedBatch(['connection pool size', '']);
  assert.deepEqual(a, v);
  assert.equal(b.length, 256);
});

test('chunk returns plain objects with breadcrumbs', () => {
  const out = chunk('guide.md', '# Guide\n\nIntro.\n\n## Setup\n\nRun it.\n');
  assert.deepEqual(
    out.map((c) => [c.breadcrumb, c.text, c.content]),
    [
      ['Guide', 'Intro.', 'Guide\n\nIntro.'],
      ['Guide > Setup', 'Run it.', 'Guide > Setup\n\nRun it.'],
    ],
  );
  assert.equal(Object.getPrototypeOf(out[0]), Object.prototype, 'a plain object, not a Map');
});

test('fuse gives camelCase results with null for arms that did not vote', () => {
  const out = fuse({ vector: [1, 2], keyword: [2] });
  assert.deepEqual(out[0], { id: 2, rrfScore: 1 / 62 + 2 / 61, ranks: { vector: 2, keyword: 1, entity: null } });
  assert.equal(out[1].id, 1);
  // Partial weights fall back to the core's defaults.
  const w = fuse({ vector: [1], keyword: [2] }, { weights: { keyword: 0.5 } });
  assert.deepEqual(w.map((f) => f.id), [1, 2]);
});

test('core errors become JS Errors carrying the core message', () => {
  // A chunk option is the caller's to fix: a MemloomError (the CLI prints it as an error, not as
  // an unexpected one), still an Error.
  assert.throws(() => chunk('a.md', '# A', { maxBytes: 3 }), (e) =>
    e instanceof Error && e.name === 'MemloomError' && e.message === 'maxBytes must be at least 64, not 3');
  assert.throws(() => fuse({ vector: [1] }, { weights: { entity: -1 } }), {
    name: 'Error',
    message: 'the entity weight must be a finite number >= 0, not -1',
  });
  assert.throws(() => fuse({ vector: ['x'] }), (e) => e instanceof Error && /invalid fuse arms/.test(e.message));
  assert.throws(() => embed(42), TypeError);
});

test('extractEntities finds identifiers and error codes', () => {
  const m = extractEntities('It threw ERR_REQUIRE_ESM after fs.readFile() failed.', 'Errors > Loading');
  const names = m.map((x) => x.name);
  assert.ok(names.includes('ERR_REQUIRE_ESM'), names.join(', '));
  for (const x of m) assert.ok(x.strength > 0 && x.strength <= 1);
});
