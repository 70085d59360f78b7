// The embedded store's HNSW build (store/maintenance.js): it says it is starting (a long import
// goes quiet for a minute per 100k rows while it runs), gives the build its own memory for the
// one transaction only, and leaves recall as it was (the exact scan and the index agree on a
// small store). Below the threshold the exact search reads the one-list IVFFlat index
// memloom_items_exact (sql/0040), with the results of a sequential scan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../src/entry-node.js';
import { EMBEDDED_INDEX_BUILD_MAX_MB, indexBuildMemoryMb } from '../src/store/maintenance.js';

const ids = (r) => r.results.map((x) => x.id);
const queries = ['deploy friday', 'which port does the orders api use', 'worker retries'];

/** Four memories over three keys: 3 active items, 4 stored rows (one superseded version). */
async function rememberVersions(store) {
  const texts = ['deploy freeze on friday', 'the orders api listens on port 8080', 'retry the queue worker on timeout', 'heap limit of the node process'];
  for (const [i, text] of texts.entries()) await store.remember(text, { key: `k${i % 3}` });
}

test('the embedded vector index build is announced, gets its own memory, and changes no result', async () => {
  const store = await openStore({});
  try {
    await rememberVersions(store);
    const before = [];
    for (const q of queries) before.push(ids(await store.recall(q)));
    const { rows: [{ maintenance_work_mem: base }] } = await store.db.query('SHOW maintenance_work_mem');

    const seen = [];
    assert.equal(await store.maintainVectorIndex({ force: true, onIndexBuild: (e) => seen.push(e) }), true);
    // 3 keys active, 4 rows stored (one superseded version): the index holds the 3 (sql/0033).
    assert.deepEqual(seen, [{ items: 3 }]);
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

test('an embedded store indexed before schema 33 (every version) rebuilds its index once over the active ones', async () => {
  const store = await openStore({});
  try {
    await rememberVersions(store);
    // The index an older schema built: every stored version.
    await store.db.query('SELECT memloom_ensure_vector_index()');
    await store.db.query('DROP INDEX memloom_items_embedding');
    await store.db.query('CREATE INDEX memloom_items_embedding ON memloom_items USING hnsw (embedding vector_cosine_ops)');
    const holds = async () => (await store.db.query('SELECT memloom_vector_index_holds_history() AS h')).rows[0].h;
    assert.equal(await holds(), true);
    const before = [];
    for (const q of queries) before.push(ids(await store.recall(q)));
    const seen = [];
    assert.equal(await store.maintainVectorIndex({ force: true, onIndexBuild: (e) => seen.push(e) }), true);
    assert.deepEqual(seen, [{ items: 3 }]);
    assert.equal(await holds(), false);
    const { rows: [{ def }] } = await store.db.query(`SELECT pg_get_indexdef('memloom_items_embedding'::regclass) AS def`);
    assert.match(def, /WHERE \(status = 'active'::text\)/);
    for (const [i, q] of queries.entries()) assert.deepEqual(ids(await store.recall(q)), before[i], q);
  } finally {
    await store.close();
  }
});

test('below the HNSW threshold the vector arm reads memloom_items_exact and ranks as a sequential scan does', async () => {
  const store = await openStore({});
  try {
    // 700 memories, 120 distinct texts: many items share a vector, so ties cross every cut.
    const words = ['deploy', 'friday', 'orders', 'api', 'port', 'worker', 'retry', 'queue', 'timeout', 'heap', 'limit', 'node', 'cache', 'token', 'shard'];
    const records = [];
    for (let i = 0; i < 700; i++) {
      const w = (/** @type {number} */ k) => words[(i * (k + 3) + k * k) % words.length];
      records.push({ text: `${w(0)} ${w(1)} ${w(2)} note ${i % 40}` });
    }
    await store.rememberMany(records);
    const exact = async () => (await store.db.query(`SELECT to_regclass('memloom_items_exact') IS NOT NULL AS x`)).rows[0].x;
    assert.equal(await exact(), true, 'a new embedded store has the exact search index');
    const scans = async () => {
      await store.db.query('SELECT pg_stat_force_next_flush()');
      await store.db.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await store.db.query(`SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'memloom_items_exact'`);
      return Number(rows[0].idx_scan);
    };
    const asked = ['deploy friday', 'orders api port', 'worker retry queue timeout', 'note 7', 'heap limit node cache'];
    const run = async () => {
      const out = [];
      for (const q of asked) {
        for (const limit of [1, 5, 10, 37]) out.push((await store.recall(q, { limit })).results.map((r) => [r.id, r.rrfScore, r.similarity]));
      }
      return out;
    };
    const before = await scans();
    const throughIndex = await run();
    assert.ok((await scans()) - before >= asked.length * 4, 'every recall read the index');
    await store.db.query('DROP INDEX memloom_items_exact');
    assert.deepEqual(await run(), throughIndex, 'the same ranked results, scores and similarities as a sequential scan');
    // The HNSW build replaces it.
    await store.db.query('SELECT memloom_ensure_exact_index()');
    assert.equal(await exact(), true);
    assert.equal(await store.maintainVectorIndex({ force: true }), true);
    assert.equal(await exact(), false);
  } finally {
    await store.close();
  }
});
