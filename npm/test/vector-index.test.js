// The embedded store's HNSW build (store/maintenance.js): it says it is starting (a long import
// goes quiet for a minute per 100k rows while it runs), gives the build its own memory for the
// one transaction only, and leaves recall as it was (the exact scan and the index agree on a
// small store).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { openStore } from '../src/entry-node.js';
import { compactEmbedded, EMBEDDED_INDEX_BUILD_MAX_MB, indexBuildMemoryMb } from '../src/store/maintenance.js';

const ids = (r) => r.results.map((x) => x.id);

test('the embedded vector index build is announced, gets its own memory, and changes no result', async () => {
  const store = await openStore({});
  try {
    const texts = ['deploy freeze on friday', 'the orders api listens on port 8080', 'retry the queue worker on timeout', 'heap limit of the node process'];
    for (const [i, text] of texts.entries()) await store.remember(text, { key: `k${i % 3}` });
    const queries = ['deploy friday', 'which port does the orders api use', 'worker retries'];
    const before = [];
    for (const q of queries) before.push(ids(await store.recall(q)));
    const { rows: [{ maintenance_work_mem: base }] } = await store.db.query('SHOW maintenance_work_mem');

    const seen = [];
    assert.equal(await store.maintainVectorIndex({ force: true, onIndexBuild: (e) => seen.push(e) }), true);
    // 3 keys active, 4 rows stored (one superseded version).
    assert.deepEqual(seen, [{ items: 3, rows: 4 }]);
    const { rows: [{ present }] } = await store.db.query('SELECT memloom_vector_index_exists() AS present');
    assert.equal(present, true);
    // SET LOCAL: the session's setting is back once the build's transaction ended.
    const { rows: [{ maintenance_work_mem: after }] } = await store.db.query('SHOW maintenance_work_mem');
    assert.equal(after, base);
    // Built once: a second call neither builds nor announces.
    assert.equal(await store.maintainVectorIndex({ force: true, onIndexBuild: (e) => seen.push(e) }), true);
    assert.equal(seen.length, 1);
    for (const [i, q] of queries.entries()) assert.deepEqual(ids(await store.recall(q)), before[i], q);
  } finally {
    await store.close();
  }
});

test('the build memory: the default for a small graph, the estimate up to the cap, the default past it', () => {
  assert.equal(indexBuildMemoryMb(4, 256), null);
  const mb = indexBuildMemoryMb(100_000, 256);
  // 100k rows of 256 dimensions: what the benchmark measured to fit (more than 128 MB, at most 256).
  assert.ok(mb > 128 && mb <= EMBEDDED_INDEX_BUILD_MAX_MB, String(mb));
  assert.ok(indexBuildMemoryMb(60_000, 256) < mb);
  assert.equal(indexBuildMemoryMb(1_000_000, 256), null);
});

test('a bulk index run leaves memloom_items no larger than the ingest did, rows in the same order', async () => {
  // store/maintenance.js compactEmbedded: the run's UPDATE of indexed_at moves every item's row
  // to a new page; without VACUUM FULL the heap kept the emptied pages (twice the pages for the
  // exact vector scan to read). VACUUM FULL copies rows in physical order: same ranked results.
  const store = await openStore({});
  const pages = async () => Number((await store.db.query(`SELECT pg_relation_size('memloom_items') / 8192 AS n`)).rows[0].n);
  const order = async () => (await store.db.query('SELECT id FROM memloom_items ORDER BY ctid')).rows.map((r) => Number(r.id));
  try {
    await store.ingest(fileURLToPath(new URL('../../tests/fixtures/nodejs', import.meta.url)));
    const ingested = await pages();
    await store.index();
    assert.ok(ingested > 2, `the fixture fills ${ingested} pages`);
    assert.ok((await pages()) <= ingested, `after the index run ${await pages()} pages, after the ingest ${ingested}`);
    // refreshStats' VACUUM marked the rewritten pages all-visible.
    const { rows: [vis] } = await store.db.query(`SELECT relpages, relallvisible FROM pg_class WHERE relname = 'memloom_items'`);
    assert.equal(vis.relallvisible, vis.relpages);

    // Compaction itself: rows leave the emptied pages in the order they were in.
    await store.db.query('UPDATE memloom_items SET indexed_at = indexed_at');
    await store.db.query('VACUUM memloom_items');
    const queries = ['punycode.toASCII', 'encode a domain name', 'parse a URL query string'];
    const before = [];
    for (const q of queries) before.push((await store.recall(q)).results.map((r) => [r.id, r.rrfScore]));
    const rows = await order();
    const bloated = await pages();
    await compactEmbedded(store);
    assert.ok((await pages()) < bloated, `${await pages()} pages after VACUUM FULL, ${bloated} before`);
    assert.deepEqual(await order(), rows);
    for (const [i, q] of queries.entries()) assert.deepEqual((await store.recall(q)).results.map((r) => [r.id, r.rrfScore]), before[i], q);
  } finally {
    await store.close();
  }
});
