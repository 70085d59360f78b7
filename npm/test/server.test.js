// The same data on the embedded store (PGlite) and on a real PostgreSQL server
// (MEMLOOM_TEST_DATABASE_URL; scripts/test-npm.sh starts one with scripts/pg.sh) gives the same
// top results. Each run writes to its own namespace, so a shared server needs no cleanup.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openStore } from '../src/entry-node.js';
import { runCli, fixtures } from './helpers.js';

const url = process.env.MEMLOOM_TEST_DATABASE_URL;
const skip = url ? false : 'MEMLOOM_TEST_DATABASE_URL is not set';
let tmp;
const ns = `test-${process.pid}-${Date.now()}`;

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-server-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

function load(target) {
  for (const args of [
    ['init'],
    ['ingest', join(fixtures, 'docs')],
    ['remember', '--file', join(fixtures, 'memories.jsonl')],
    ['index'],
  ]) {
    const r = runCli([...args, ...target]);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
  }
}

function recallAll(target) {
  const r = runCli(['recall', '--batch', join(fixtures, 'queries.jsonl'), '--json', '--limit', '5', ...target]);
  assert.equal(r.status, 0, r.stderr);
  // Ids differ between stores: compare what the results are.
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .map(({ id, results }) => ({
      id,
      results: results.map((h) => ({ kind: h.kind, source: h.source, breadcrumb: h.breadcrumb, key: h.key, ranks: h.ranks, rrfScore: h.rrfScore })),
    }));
}

test('embedded and server stores give the same top results', { skip }, () => {
  const embedded = ['--store', join(tmp, 'store')];
  const server = ['--database-url', url, '--namespace', ns];
  load(embedded);
  load(server);
  const a = recallAll(embedded);
  const b = recallAll(server);
  for (const [i, q] of a.entries()) {
    assert.ok(q.results.length > 0, `${q.id}: no results`);
    // The best hit is identical, ranks and score included.
    assert.deepEqual(b[i].results[0], q.results[0], `${q.id}: top result`);
    assert.deepEqual(
      b[i].results.map((h) => [h.source, h.breadcrumb, h.key]),
      q.results.map((h) => [h.source, h.breadcrumb, h.key]),
      `${q.id}: top 5`,
    );
  }
  const stats = JSON.parse(runCli(['stats', '--json', ...server]).stdout);
  assert.equal(stats.backend, 'server');
  assert.equal(stats.vectorIndex, 'hnsw');
  assert.equal(stats.files, 4);
});

test('both drivers answer a query with one shape: { rows, rowCount }', { skip }, async () => {
  const { openPglite } = await import('../src/db-pglite.js');
  const { openPg } = await import('../src/db-pg.js');
  const shapes = [];
  for (const db of [await openPglite(undefined), await openPg(url)]) {
    try {
      await db.exec('CREATE TEMP TABLE shape_probe (n int)');
      const written = await db.transaction((tx) => tx.query('INSERT INTO shape_probe SELECT generate_series(1, 3)'));
      const read = await db.query('SELECT n FROM shape_probe WHERE n > $1 ORDER BY n', [1]);
      const gone = await db.query('DELETE FROM shape_probe WHERE n < 3');
      shapes.push({ keys: Object.keys(read).sort(), written: written.rowCount, read: read.rowCount, rows: read.rows, gone: gone.rowCount });
    } finally {
      await db.close();
    }
  }
  assert.deepEqual(shapes[0], { keys: ['rowCount', 'rows'], written: 3, read: 2, rows: [{ n: 2 }, { n: 3 }], gone: 2 });
  assert.deepEqual(shapes[1], shapes[0]);
});

/**
 * Store#rememberMany is one memloom_remember_many call (sql/0021): the versions one remember per
 * record gives, and a record that fails in SQL midway (a key past the btree index's 2704-byte
 * row limit, which no check before the database catches) writes none of the batch. The same on
 * the embedded store and a server; tests/scale/ checks it through a PL/Proxy front.
 */
async function rememberManyIsOneCall(store) {
  const out = await store.rememberMany([
    { key: 'deploy', text: 'deploys run on Tuesdays' },
    { text: 'an unkeyed note', metadata: { from: 'test' } },
    { key: 'deploy', text: 'deploys run on Thursdays now', at: '2026-03-01' },
    { key: 'deploy', text: 'deploys run on Thursdays now', at: '2026-03-01' },
    { key: 'oncall', text: 'alice is on call' },
  ]);
  assert.deepEqual(
    out.map((o) => [o.key, o.version]),
    [['deploy', 1], [null, 1], ['deploy', 2], ['deploy', 2], ['oncall', 1]],
  );
  assert.equal(out[3].id, out[2].id, 'the active content again: the active version, unchanged');
  const h = await store.history('deploy');
  assert.deepEqual(
    h.map((v) => [v.id, v.version, v.status, v.eventAt]),
    [
      [out[0].id, 1, 'superseded', null],
      [out[2].id, 2, 'active', '2026-03-01T00:00:00.000Z'],
    ],
  );
  const before = (await store.stats()).memories;
  const longKey = randomBytes(3000).toString('base64');
  await assert.rejects(
    store.rememberMany([
      { key: 'deploy', text: 'deploys are frozen' },
      { text: 'another unkeyed note' },
      { key: longKey, text: 'a key too long for the index' },
      { key: 'oncall', text: 'bob is on call' },
    ]),
    /index row/,
  );
  assert.deepEqual((await store.stats()).memories, before, 'nothing of the failed batch was written');
  assert.equal((await store.history('deploy')).length, 2);
  assert.deepEqual(await store.rememberMany([]), []);
}

test('rememberMany is one call: versions as one remember per record, and a failing record writes none (embedded)', async () => {
  const store = await openStore({});
  try {
    await rememberManyIsOneCall(store);
  } finally {
    await store.close();
  }
});

test('rememberMany is one call: versions as one remember per record, and a failing record writes none (server)', { skip }, async () => {
  const store = await openStore({ url, namespace: `${ns}-many` });
  try {
    await rememberManyIsOneCall(store);
  } finally {
    await store.close();
  }
});

// A new server store's first ingest and first index run build each HNSW index once at their end
// (memloom_defer_vector_index, sql/0025) instead of inserting every row into it: the index is
// rebuilt (a new relation) in a new store, left alone in a store that already holds rows, and
// both recall the same top results.
test('a new server store builds its vector indexes after its first ingest and index run', { skip }, async () => {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const names = ['fresh', 'used'].map((k) => `memloom_defer_${k}_${process.pid}_${Date.now()}`);
  try {
    const runs = [];
    for (const name of names) {
      await admin.query(`CREATE DATABASE ${name}`);
      const dbUrl = new URL(url);
      dbUrl.pathname = `/${name}`;
      const store = await openStore({ url: dbUrl.toString(), namespace: 'docs' });
      if (name === names[1]) {
        const other = await openStore({ url: dbUrl.toString(), namespace: 'other' });
        await other.remember('a row in another namespace before the first ingest');
        await other.close();
      }
      const oids = async () =>
        (await store.db.query(`SELECT to_regclass('memloom_items_embedding')::oid AS items, to_regclass('memloom_entities_embedding')::oid AS entities`)).rows[0];
      const before = await oids();
      await store.ingest(join(fixtures, 'docs'));
      const afterIngest = await oids();
      await store.index();
      const afterIndex = await oids();
      const top = [];
      for (const q of ['connection pool size', 'ERR_REQUIRE_ESM', 'how do I rotate the deploy key']) {
        const r = await store.recall(q, { limit: 5 });
        top.push(r.results.map((h) => [h.source, h.breadcrumb, h.rrfScore]));
      }
      runs.push({ before, afterIngest, afterIndex, top });
      await store.close();
    }
    const [fresh, used] = runs;
    for (const r of runs) {
      assert.ok(r.afterIndex.items && r.afterIndex.entities, 'both HNSW indexes exist after the runs');
    }
    assert.notEqual(fresh.afterIngest.items, fresh.before.items, 'a new store: the pool index built after the ingest');
    assert.notEqual(fresh.afterIndex.entities, fresh.afterIngest.entities, 'a new store: the entity index built after the index run');
    assert.equal(used.afterIngest.items, used.before.items, 'a store with rows keeps its pool index');
    assert.deepEqual(fresh.top, used.top);
  } finally {
    for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});

// A first load killed during its write (no `finally` ran) leaves an index to build: the next
// write through the npm store builds whichever of the two is missing.
test('the next write on a server store builds an HNSW index a killed first load left missing', { skip }, async () => {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const name = `memloom_defer_killed_${process.pid}_${Date.now()}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const dbUrl = new URL(url);
    dbUrl.pathname = `/${name}`;
    let store = await openStore({ url: dbUrl.toString(), namespace: 'docs' });
    await store.ingest(join(fixtures, 'docs'));
    await store.db.query('DROP INDEX memloom_entities_embedding');
    await store.close();
    store = await openStore({ url: dbUrl.toString(), namespace: 'docs' });
    await store.remember('the deploy key rotates every 90 days');
    const { rows } = await store.db.query(
      `SELECT to_regclass('memloom_items_embedding') IS NOT NULL AS items, to_regclass('memloom_entities_embedding') IS NOT NULL AS entities`,
    );
    assert.deepEqual(rows[0], { items: true, entities: true });
    await store.close();
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});

/**
 * Every vector the store writes travels as bytes (store/vectors.js: pgvector's binary form,
 * vector_recv on the server) and is stored as the embedder's exact bits: chunks (ingest),
 * memories (remember, rememberMany), entities (index, including a batch that mixes new entities
 * with found ones, whose vectors go as NULL) and a recall's query. Both drivers.
 */
async function vectorsAreTheEmbeddersBits(store) {
  const { entityEmbeddingText } = await import('../src/store/entities.js');
  await store.ingest([
    { source: 'a.md', text: '# Pools\n\nSet `max_connections` in postgresql.conf; PgBouncer pools them.\n\n## Vacuum\n\nautovacuum_naptime controls how often VACUUM runs.' },
    { source: 'b.md', text: '# Node\n\nERR_REQUIRE_ESM means require() of an ES module; use import() instead.' },
  ]);
  await store.remember('deploys freeze on Fridays', { key: 'deploy' });
  await store.rememberMany([{ key: 'deploy', text: 'deploys freeze on Thursdays' }, { text: 'PgBouncer runs on port 6432' }]);
  await store.index();
  await store.ingest([{ source: 'c.md', text: '# More\n\nPgBouncer and max_connections again, with ERR_REQUIRE_ESM.' }]);
  await store.index(); // entities found (NULL vectors in the batch) beside new ones
  const bits = (v) => Array.from(new Uint32Array(Float32Array.from(v).buffer));
  const { rows: items } = await store.db.query('SELECT content, embedding::real[] AS v FROM memloom_items WHERE namespace = $1 ORDER BY id', [store.namespace]);
  assert.ok(items.length >= 6, `${items.length} items`);
  const want = await store.embedder.embed(items.map((r) => r.content));
  for (const [i, r] of items.entries()) assert.deepEqual(bits(r.v), bits(want[i]), `item ${i}: ${r.content.slice(0, 30)}`);
  const { rows: ents } = await store.db.query('SELECT name, kind, embedding::real[] AS v FROM memloom_entities WHERE namespace = $1 ORDER BY id', [store.namespace]);
  assert.ok(ents.length > 0);
  const wantE = await store.embedder.embed(ents.map((e) => entityEmbeddingText(e.name, e.kind, store.embedder)));
  for (const [i, e] of ents.entries()) assert.deepEqual(bits(e.v), bits(wantE[i]), `entity ${e.name}`);
  const r = await store.recall('ERR_REQUIRE_ESM', { limit: 3 });
  assert.match(r.results[0].content, /ERR_REQUIRE_ESM/);
}

test('vectors travel as bytes and are stored bit for bit (embedded)', async () => {
  const store = await openStore({});
  try {
    await vectorsAreTheEmbeddersBits(store);
  } finally {
    await store.close();
  }
});

test('vectors travel as bytes and are stored bit for bit (server)', { skip }, async () => {
  const store = await openStore({ url, namespace: `${ns}-bits` });
  try {
    await vectorsAreTheEmbeddersBits(store);
  } finally {
    await store.close();
  }
});
