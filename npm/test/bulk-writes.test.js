// sql/0013: ingest and index write through memloom_replace_chunks / memloom_index_batch, a
// batch of files per call. The store they leave must be the one the row-by-row writes left:
// a reference store is written here with the plain statements sql/README.md documents (one
// INSERT per chunk with pgvector's text of JS's own number formatting; one INSERT per entity and
// per mention), and the two are compared: item rows in id order (content, breadcrumb, source,
// metadata, embedding, both tsvectors), keyword and entity statistics, entities and mentions,
// and the recall ids for the fixtures' queries. Embedded (PGlite, in memory) and, when
// MEMLOOM_TEST_DATABASE_URL is set, on a server (namespaces of their own).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chunk, embedBatch, extractEntities, openStore } from '../src/entry-node.js';
import { fixtures } from './helpers.js';

const nodeDocs = fileURLToPath(new URL('../../tests/fixtures/nodejs', import.meta.url));
const docsDir = join(fixtures, 'docs');
const serverUrl = process.env.MEMLOOM_TEST_DATABASE_URL;
const QUERIES = [
  ...readFileSync(join(fixtures, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).query),
  'punycode.encode', 'querystring.parse', 'ERR_INVALID_URI', 'how are query strings escaped', 'domain names to ASCII',
];

function files(root) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk(root);
  return out.sort().map((p) => ({ source: relative(root, p), text: readFileSync(p, 'utf8') }));
}

async function sha256(text) {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** What ingest wrote before 0013, row by row: one INSERT per chunk, vectors as JS printed them. */
async function referenceIngest(store, root) {
  for (const f of files(root)) {
    const meta = JSON.stringify({ root, fileHash: await sha256(f.text) });
    const chunks = chunk(f.source, f.text);
    const vectors = embedBatch(chunks.map((c) => c.content));
    for (const [i, c] of chunks.entries()) {
      await store.db.query(
        `INSERT INTO memloom_items (namespace, kind, source, breadcrumb, content, embedding, metadata)
         VALUES ($1, 'chunk', $2, $3, $4, $5::vector, $6::jsonb)`,
        [store.namespace, f.source, c.breadcrumb, c.content, `[${Array.prototype.join.call(vectors[i], ',')}]`, meta],
      );
    }
  }
}

/** What index wrote before 0013 (hash-v1 embeds an entity's name), one row at a time. */
async function referenceIndex(store) {
  const { rows } = await store.db.query(
    `SELECT id, breadcrumb, content FROM memloom_items WHERE namespace = $1 AND status = 'active' ORDER BY id`,
    [store.namespace],
  );
  for (const r of rows) {
    const prefix = r.breadcrumb ? `${r.breadcrumb}\n\n` : '';
    const text = prefix && r.content.startsWith(prefix) ? r.content.slice(prefix.length) : r.content;
    const best = new Map();
    for (const m of extractEntities(text, r.breadcrumb ?? undefined)) {
      const k = `${m.kind}\u0000${m.name}`;
      if (!best.has(k) || best.get(k).strength < m.strength) best.set(k, m);
    }
    for (const m of best.values()) {
      const [v] = embedBatch([m.name]);
      await store.db.query(
        `INSERT INTO memloom_entities (namespace, name, kind, embedding) VALUES ($1, $2, $3, $4::vector)
         ON CONFLICT (namespace, name, kind) DO NOTHING`,
        [store.namespace, m.name, m.kind, `[${Array.prototype.join.call(v, ',')}]`],
      );
      await store.db.query(
        `INSERT INTO memloom_mentions (entity_id, item_id, strength)
         SELECT id, $4, $5 FROM memloom_entities WHERE namespace = $1 AND name = $2 AND kind = $3`,
        [store.namespace, m.name, m.kind, r.id, m.strength],
      );
    }
    await store.db.query('INSERT INTO memloom_indexed (item_id, namespace) VALUES ($1, $2)', [r.id, store.namespace]);
  }
}

/** Everything a recall depends on, with ids replaced by positions in the namespace. */
async function contents(store) {
  const q = async (sql) => (await store.db.query(sql, [store.namespace])).rows;
  const items = await q(
    `SELECT kind, source, breadcrumb, content, metadata->>'fileHash' AS h, embedding::text AS e, tsv::text AS tsv,
            heading_tsv::text AS htsv, content_hash, status,
            EXISTS (SELECT 1 FROM memloom_indexed x WHERE x.item_id = memloom_items.id) AS indexed
     FROM memloom_items WHERE namespace = $1 ORDER BY id`,
  );
  const pos = new Map((await q('SELECT id FROM memloom_items WHERE namespace = $1 ORDER BY id')).map((r, i) => [String(r.id), i]));
  const ents = await q('SELECT id, name, kind, embedding::text AS e FROM memloom_entities WHERE namespace = $1 ORDER BY id');
  const epos = new Map(ents.map((r, i) => [String(r.id), i]));
  const mentions = (
    await q(`SELECT mt.entity_id, mt.item_id, mt.strength FROM memloom_mentions mt JOIN memloom_items m ON m.id = mt.item_id
             WHERE m.namespace = $1`)
  )
    .map((r) => `${epos.get(String(r.entity_id))}/${pos.get(String(r.item_id))}/${r.strength}`)
    .sort();
  const terms = await q('SELECT lexeme, df FROM memloom_term_stats WHERE namespace = $1 ORDER BY lexeme');
  const ns = await q('SELECT doc_count::int AS n, total_len::int AS len, avg_doc_len FROM memloom_namespace_stats WHERE namespace = $1');
  const edf = (await q('SELECT entity_id, df FROM memloom_entity_stats WHERE namespace = $1')).map((r) => `${epos.get(String(r.entity_id))}:${r.df}`).sort();
  const recall = [];
  for (const query of QUERIES) {
    const r = await store.recall(query, { limit: 10 });
    recall.push(r.results.map((x) => `${pos.get(String(x.id))}:${x.ranks.vector}/${x.ranks.keyword}/${x.ranks.entity}`).join(' '));
  }
  return { items, entities: ents.map((e) => [e.name, e.kind, e.e]), mentions, terms, ns, edf, recall };
}

async function compare(open) {
  const a = await open('bulk');
  const b = await open('rows');
  try {
    // Small batches, so that files and items span several calls.
    const ra = await a.ingest([docsDir, nodeDocs], { batchFiles: 2, batchBytes: 4000 });
    await a.index({ batchSize: 7 });
    await referenceIngest(b, docsDir);
    await referenceIngest(b, nodeDocs);
    await referenceIndex(b);
    await b.db.query('SELECT memloom_refresh_stats($1)', [b.namespace]);
    const ca = await contents(a);
    const cb = await contents(b);
    assert.ok(ra.chunks > 20 && ca.items.length === ra.chunks, `ingested ${ra.chunks} chunks`);
    assert.ok(ca.mentions.length > 50, `indexed ${ca.mentions.length} mentions`);
    assert.deepEqual(ca.items, cb.items, 'item rows');
    assert.deepEqual(ca.entities, cb.entities, 'entities');
    assert.deepEqual(ca.mentions, cb.mentions, 'mentions');
    assert.deepEqual(ca.terms, cb.terms, 'keyword statistics');
    assert.deepEqual(ca.ns, cb.ns, 'namespace statistics');
    assert.deepEqual(ca.edf, cb.edf, 'entity statistics');
    assert.deepEqual(ca.recall, cb.recall, 'recall ids and ranks for the queries');
    assert.ok(ca.recall.every((r) => r !== ''), 'every query recalls something');

    // Re-ingesting changes nothing; a changed and a removed file are replaced under the same calls.
    const again = await a.ingest([docsDir, nodeDocs], { batchFiles: 2 });
    assert.equal(again.unchanged, again.files);
    assert.equal(again.chunks, 0);
    assert.deepEqual((await contents(a)).items, ca.items);
  } finally {
    await a.close();
    await b.close();
  }
}

test('embedded: batched ingest and index store what row-by-row writes stored, and recall the same', { timeout: 300_000 }, async () => {
  await compare(() => openStore({}));
});

test('server: batched ingest and index store what row-by-row writes stored, and recall the same', { skip: !serverUrl, timeout: 300_000 }, async () => {
  const run = `${process.pid}_${Date.now()}`;
  await compare((tag) => openStore({ url: serverUrl, namespace: `bulk_${tag}_${run}` }));
});

test('memloom_replace_chunks: a file with no chunks is emptied, and mismatched arrays are refused with the counts', async () => {
  const s = await openStore({});
  try {
    await s.ingest([{ source: 'a.md', text: '# A\n\none\n\n## B\n\ntwo' }, { source: 'b.md', text: 'three' }]);
    const n = async () => (await s.db.query(`SELECT source, count(*)::int AS n FROM memloom_items GROUP BY 1 ORDER BY 1`)).rows;
    assert.deepEqual(await n(), [{ source: 'a.md', n: 2 }, { source: 'b.md', n: 1 }]);
    const { rows } = await s.db.query(`SELECT * FROM memloom_replace_chunks($1, '', '{a.md}', '{x}', '{}', '{}', '{}', '{}')`, [s.namespace]);
    assert.deepEqual(rows.map((r) => [Number(r.deleted), Number(r.inserted)]), [[2, 0]]);
    assert.deepEqual(await n(), [{ source: 'b.md', n: 1 }]);
    await assert.rejects(
      s.db.query(`SELECT * FROM memloom_replace_chunks($1, '', '{a.md}', '{x}', '{1,1}', '{null}', '{c}', '{}')`, [s.namespace]),
      /one file, breadcrumb and embedding per chunk \(1 chunks: 2 files, 1 breadcrumbs, 0 embeddings\)/,
    );
    await assert.rejects(
      s.db.query(`SELECT * FROM memloom_replace_chunks($1, '', '{a.md}', '{x}', '{2}', '{null}', '{c}', ARRAY[array_fill(0, ARRAY[256])::vector])`, [s.namespace]),
      /1-based index into sources \(1\.\.1\)/,
    );
  } finally {
    await s.close();
  }
});
