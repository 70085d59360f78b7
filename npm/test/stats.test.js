// sql/0009 on PGlite (PostgreSQL 18): the keyword and entity statistics that the writes keep
// equal a full recompute (memloom_recompute_stats) after a random mix of the store's own
// writes (ingest, remember, supersede, forget, index, an in-place change), and recall ranks as
// after a full refresh. An in-memory store, no network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../src/entry-node.js';

/** A small deterministic generator (mulberry32): the same mix on every run. */
function rng(seed) {
  let s = seed >>> 0;
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

const WORDS = ['deploy', 'freeze', 'Friday', 'billing', 'Postgres', 'connection', 'timeout', 'retry',
  'max_connections', 'pg_hba.conf', 'ERR_REQUIRE_ESM', 'node:fs', 'fs.readFile', 'worker', 'queue',
  'JIRA-4512', 'orders-api', 'v18.0.0', 'stream', 'socket', 'the', 'and', 'service', 'database'];

function sentence(r) {
  const n = 2 + r(10);
  return Array.from({ length: n }, () => {
    const i = r(WORDS.length);
    return WORDS[Math.floor((i * i) / WORDS.length)];
  }).join(' ');
}

function doc(r) {
  const sections = 1 + r(3);
  let md = `# ${sentence(r)}\n\n`;
  for (let i = 0; i < sections; i++) md += `## ${WORDS[r(WORDS.length)]} ${i}\n\n${sentence(r)}. ${sentence(r)}.\n\n`;
  return md;
}

async function stats(db) {
  const q = async (sql) => (await db.query(sql)).rows;
  return {
    terms: await q('SELECT namespace, lexeme, df FROM memloom_term_stats ORDER BY 1, 2'),
    namespaces: await q('SELECT namespace, doc_count::int AS n, total_len::int AS len, avg_doc_len FROM memloom_namespace_stats ORDER BY 1'),
    entities: await q('SELECT entity_id::int AS id, namespace, df FROM memloom_entity_stats ORDER BY 1'),
  };
}

/** The incremental statistics, then a full recompute of every namespace, rolled back. */
async function assertIncrementalEqualsFull(store, when) {
  const incremental = await stats(store.db);
  let full;
  await store.db
    .transaction(async (tx) => {
      await tx.query(`SELECT memloom_recompute_stats(ns) FROM (SELECT namespace AS ns FROM memloom_items
                      UNION SELECT namespace FROM memloom_namespace_stats) n`);
      full = await stats(tx);
      throw new Error('rollback');
    })
    .catch((e) => {
      if (e.message !== 'rollback') throw e;
    });
  assert.deepEqual(incremental.namespaces, full.namespaces, `namespace stats ${when}`);
  assert.deepEqual(incremental.terms, full.terms, `term stats ${when}`);
  assert.deepEqual(incremental.entities, full.entities, `entity stats ${when}`);
}

test('incremental statistics equal a full recompute after a random mix of writes (PGlite)', async () => {
  const store = await openStore({});
  const r = rng(19);
  try {
    let ops = 0;
    for (let step = 0; step < 60; step++) {
      const op = r(10);
      if (op < 2) {
        // Ingest: new files, changed files (chunks replaced), and sometimes one gone.
        const docs = Array.from({ length: 1 + r(3) }, () => ({ root: 'docs', source: `d${r(5)}.md`, text: doc(r) }));
        await store.ingest(docs);
      } else if (op < 5) {
        const records = Array.from({ length: 1 + r(3) }, () => ({ text: sentence(r), key: r(4) ? `k${r(5)}` : undefined }));
        await store.rememberMany(records);
      } else if (op === 5) {
        await store.forget(`k${r(5)}`);
      } else if (op === 6) {
        const { rows } = await store.db.query(`SELECT id FROM memloom_items WHERE kind = 'memory' ORDER BY id`);
        if (rows.length) await store.forget({ id: Number(rows[r(rows.length)].id) });
      } else if (op < 9) {
        await store.index();
      } else {
        // An in-place content change (sql/0004 marks it for re-indexing).
        await store.db.query(`UPDATE memloom_items SET content = $1 WHERE id = (SELECT id FROM memloom_items ORDER BY id OFFSET $2 LIMIT 1)`, [
          sentence(r),
          step % 5,
        ]);
      }
      ops++;
      if (step % 6 === 5) await assertIncrementalEqualsFull(store, `after step ${step}`);
    }
    const s = await stats(store.db);
    assert.ok(ops === 60 && s.terms.length > 10 && s.entities.length > 0, JSON.stringify(s.namespaces));
    await assertIncrementalEqualsFull(store, 'at the end');

    // Recall ranks exactly as after a full refresh (the statistics are the same values).
    const queries = ['deploy freeze', 'max_connections timeout', 'ERR_REQUIRE_ESM', 'billing database retry'];
    const before = [];
    for (const q of queries) before.push((await store.recall(q)).results.map((x) => [x.id, x.rrfScore]));
    await store.db.query(`SELECT memloom_refresh_stats($1)`, [store.namespace]);
    for (const [i, q] of queries.entries()) {
      assert.deepEqual((await store.recall(q)).results.map((x) => [x.id, x.rrfScore]), before[i], q);
    }
  } finally {
    await store.close();
  }
});

test('a write costs what it writes: remember changes only its own lexemes', async () => {
  const store = await openStore({});
  try {
    await store.ingest([{ root: 'r', source: 'a.md', text: '# Deploys\n\nDeploys freeze on Fridays.\n' }]);
    const before = await stats(store.db);
    await store.remember('The billing service retries on timeout.', { key: 'billing' });
    const after = await stats(store.db);
    const changed = after.terms.filter((t) => !before.terms.some((b) => b.lexeme === t.lexeme && b.df === t.df));
    assert.deepEqual(changed.map((t) => t.lexeme).sort(), ['bill', 'retri', 'servic', 'timeout']);
    assert.equal(after.namespaces[0].n, before.namespaces[0].n + 1);
  } finally {
    await store.close();
  }
});
