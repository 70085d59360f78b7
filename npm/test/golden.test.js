// The golden files in tests/golden/ (shared with the Rust core, the SQL and the worker),
// reproduced bit for bit in Node through the wasm build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { chunk, embed, embedBatch, embedStaticBatch, fuse, staticEmbedder, tokenizeStatic } from '../src/entry-node.js';

const golden = new URL('../../tests/golden/', import.meta.url);
const load = (name) => JSON.parse(readFileSync(new URL(name, golden), 'utf8'));
const present = (name) => existsSync(new URL(name, golden));

/** The f32 bit pattern of each component, so -0 vs 0 and NaN payloads count too. */
const bits = (arr) => Array.from(new Uint32Array(Float32Array.from(arr).buffer));

test('embeddings: hash-v1 vectors are bit-identical to the Rust core', { skip: !present('embeddings.json') }, () => {
  const cases = load('embeddings.json');
  assert.ok(cases.length > 0);
  for (const c of cases) {
    const got = embed(c.text);
    assert.equal(got.length, c.dims, `dims for ${JSON.stringify(c.text)}`);
    // Math.fround of each decimal gives the exact f32 the core wrote.
    assert.deepEqual(bits(got), bits(c.vector.map(Math.fround)), `vector for ${JSON.stringify(c.text)}`);
  }
  const batch = embedBatch(cases.map((c) => c.text));
  for (const [i, c] of cases.entries()) assert.deepEqual(bits(batch[i]), bits(c.vector.map(Math.fround)));
});

for (const version of [1, 2]) {
  const id = `static-v${version}`;
  test(`embeddings: ${id} vectors are bit-identical to the Rust core`, { skip: !present(`embeddings-${id}.json`) }, async () => {
    const cases = load(`embeddings-${id}.json`);
    assert.ok(cases.length > 0);
    const e = staticEmbedder({ version }); // loads the package's data/static-v1.bin
    assert.deepEqual([e.id, e.name, e.version, e.dims], [id, 'static', version, 512]);
    const got = await e.embed(cases.map((c) => c.text));
    for (const [i, c] of cases.entries()) {
      assert.equal(c.embedder, id);
      assert.equal(got[i].length, c.dims, `dims for ${JSON.stringify(c.text)}`);
      assert.deepEqual(bits(got[i]), bits(c.vector.map(Math.fround)), `vector for ${JSON.stringify(c.text)}`);
    }
  });
}

test('staticEmbedder(): static-v2 unless asked for version 1; other versions are refused', async () => {
  assert.equal(staticEmbedder().id, 'static-v2');
  assert.throws(() => staticEmbedder({ version: 3 }), /no static embedder version 3; the versions are 1 \(static-v1\) and 2 \(static-v2\)/);
  assert.throws(() => staticEmbedder({ version: 1.5 }), /a static embedder version is a whole number, not 1\.5/);
  // The raw batch call names its version: without one it is refused, never a silent default.
  await staticEmbedder().embed(['load the table']);
  assert.throws(() => embedStaticBatch(['x']), /a static embedder version is a whole number, not undefined/);
  assert.equal(embedStaticBatch(['x'], 1)[0].length, 512);
});

test('wordpiece: static-v1 tokenizes like Hugging Face tokenizers', { skip: !present('wordpiece.json') }, async () => {
  await staticEmbedder().embed(['load the table']);
  const cases = load('wordpiece.json');
  assert.ok(cases.length > 3000);
  const wrong = cases.filter((c) => JSON.stringify(Array.from(tokenizeStatic(c.text))) !== JSON.stringify(c.ids));
  assert.deepEqual(wrong.map((c) => c.text), []);
});

test('chunks: the chunker gives the golden chunks', { skip: !present('chunks.json') }, () => {
  const cases = load('chunks.json');
  assert.ok(cases.length > 0);
  const tests = new URL('../../tests/', import.meta.url);
  for (const c of cases) {
    const text = readFileSync(new URL(c.file, tests), 'utf8');
    const got = chunk(c.source, text, { maxBytes: c.maxBytes });
    assert.deepEqual(got, c.chunks, `chunks of ${c.file}`);
  }
});

test('fusion: fuse gives the golden order, scores and ranks', { skip: !present('fusion.json') }, () => {
  const cases = load('fusion.json');
  assert.ok(cases.length > 0);
  for (const c of cases) {
    const got = fuse(c.arms, { k: c.k, weights: c.weights });
    assert.deepEqual(got, c.expected, c.name);
  }
});

test('vectors: PGlite stores what the core wrote, bit for bit (pgvector\'s binary form, as store/vectors.js sends it)', async () => {
  const { openPglite } = await import('../src/db-pglite.js');
  const { vectorArrayBinary, vectorBinary } = await import('../src/core.js');
  const db = await openPglite(undefined);
  try {
    await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
    const { rows: t } = await db.query(`SELECT 'vector'::regtype::oid AS v, 'vector[]'::regtype::oid AS a`);
    db.useVectorTypes({ vector: Number(t[0].v), array: Number(t[0].a) });
    const edge = [0.1, -0.25, 1, 0, -0, 1e-10, 3.4e38, 1.1754943508222875e-38, 1.401298464324817e-45, 1.1754942106924411e-38, -0.5773502691896257];
    const cases = [Float32Array.from(edge), ...staticCases(), ...load('embeddings.json').slice(0, 5).map((c) => Float32Array.from(c.vector))];
    const withNull = [cases[0], null, ...cases.slice(1)];
    const { rows } = await db.query('SELECT v::real[] AS v FROM unnest($1::vector[]) WITH ORDINALITY u(v, i) ORDER BY i', [vectorArrayBinary(withNull, Number(t[0].v))]);
    assert.equal(rows.length, withNull.length);
    for (const [i, c] of withNull.entries()) assert.deepEqual(rows[i].v === null ? null : bits(rows[i].v), c === null ? null : bits(c), `vector ${i}`);
    for (const c of cases.slice(0, 3)) {
      const { rows: one } = await db.query('SELECT $1::vector::real[] AS v', [vectorBinary(c)]);
      assert.deepEqual(bits(one[0].v), bits(c));
    }
    const { rows: none } = await db.query('SELECT cardinality($1::vector[]) AS n', [vectorArrayBinary([], Number(t[0].v))]);
    assert.equal(none[0].n, 0);
    // pgvector's checks hold for bytes as for text: its own message, nothing stored.
    await assert.rejects(db.query('SELECT $1::vector', [vectorBinary([1, Number.NaN])]), /NaN not allowed in vector/);
  } finally {
    await db.close();
  }
});

function staticCases() {
  return present('embeddings-static-v2.json') ? load('embeddings-static-v2.json').map((c) => Float32Array.from(c.vector)) : [];
}
