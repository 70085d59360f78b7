// In-process recall on the embedded store (PGlite) next to what a user would pick instead:
// Orama (hybrid, full text, vector) and MiniSearch (BM25), over the SAME chunks and the SAME
// hash-v1 vectors, interleaved in one Node process. Part of `make bench-embedded` (issue 19,
// docs/BENCHMARKS.md "Embedded recall").
//
//   node npm/bench/recall.js [--set DIR] [--scales 1,10] [--passes 3] [--pkg DIR] [--baseline DIR] [--breakdown]
//
// --baseline DIR adds another checkout's package (e.g. /work/main/npm, before a change) as the
// engine "memloom (baseline)": its own store over the same corpus, measured interleaved with
// the others, so a before/after ratio comes from one run.
// The chunks are memloom's own (the Node docs ingested into an in-memory PGlite store, then
// entity-indexed); Orama and MiniSearch index the same rows (breadcrumb + content, and for Orama
// the stored 256-d vector). At scale N the pool holds N copies of every chunk (copies get their
// own source, `copyI/...`, and their own entity mentions), written by SQL so that the 10x store
// does not take the ingest path's minutes; past EMBEDDED_HNSW_THRESHOLD the store builds its HNSW
// index exactly as `maintainVectorIndex` does after a write. Each timed call includes embedding
// the query (memloom's recall does it; the Orama vector and hybrid calls are given the same
// embedder's vector, embedded inside the timed call). The order of the engines rotates per query.
// "paired ratio" = median over (query, pass) of memloom's time / the other engine's time.
// --breakdown prints where a memloom recall's milliseconds go (breakdown.js: the query embedding,
// a bare round trip, memloom_fuse's fixed part, each arm alone, the fusion and the rows).
// No set (../shared/eval/nodejs-docs absent): says so and exits 0.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { breakdownParts, breakdownTable, interleaved, pct } from './breakdown.js';

const here = new URL('.', import.meta.url).pathname;
const { values: opt } = parseArgs({
  options: {
    set: { type: 'string', default: resolve(here, '../../../shared/eval/nodejs-docs') },
    scales: { type: 'string', default: '1,10' },
    passes: { type: 'string', default: '3' },
    pkg: { type: 'string', default: resolve(here, '..') },
    breakdown: { type: 'boolean', default: false },
    baseline: { type: 'string' },
  },
});
if (!existsSync(join(opt.set, 'corpus')) || !existsSync(join(opt.set, 'queries.jsonl'))) {
  console.log(`recall bench: skipped, no Node docs set at ${opt.set} (needs corpus/ and queries.jsonl; the lead's ../shared/eval)`);
  process.exit(0);
}
// Each package opens its stores with the embedder MEMLOOM_EMBEDDER names (hash-v1 when unset).
const withEmbedder = (api) => (options) => api.openStore({ ...options, embedder: api.embedderFromEnv() });
const openStore = withEmbedder(await import(pathToFileURL(join(opt.pkg, 'src/entry-node.js')).href));
const baseline = opt.baseline ? withEmbedder(await import(pathToFileURL(join(opt.baseline, 'src/entry-node.js')).href)) : null;
const { create, insertMultiple, search } = await import('@orama/orama');
const { default: MiniSearch } = await import('minisearch');

const queries = readFileSync(join(opt.set, 'queries.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).query);
const passes = Number(opt.passes);
const median = (xs) => pct(xs, 50);
const f2 = (x) => x.toFixed(2);

/** Copies every chunk (and its entity mentions) `copies` times, by SQL, in one transaction. */
async function multiply(store, copies) {
  if (copies <= 0) return;
  await store.db.transaction(async (tx) => {
    const { rows } = await tx.query(`SELECT max(id)::bigint AS m, to_regclass('memloom_indexed') IS NOT NULL AS marks FROM memloom_items`);
    const step = Number(rows[0].m) + 1;
    // The indexer's marks: a table of their own since schema 24, a column before (a --baseline package).
    const marks = rows[0].marks;
    for (let c = 1; c <= copies; c++) {
      await tx.query(
        `INSERT INTO memloom_items (id, namespace, kind, source, breadcrumb, key, version, content, status, embedding, metadata${marks ? '' : ', indexed_at'})
         OVERRIDING SYSTEM VALUE
         SELECT id + $1::bigint, namespace, kind, 'copy' || $2::int || '/' || source, breadcrumb, key, version, content, status, embedding, metadata${marks ? '' : ', indexed_at'}
         FROM memloom_items WHERE kind = 'chunk' AND id < $3::bigint`,
        [c * step, c, step],
      );
      if (marks) {
        await tx.query(
          `INSERT INTO memloom_indexed (item_id, namespace, indexed_at)
           SELECT x.item_id + $1::bigint, x.namespace, x.indexed_at FROM memloom_indexed x
           JOIN memloom_items m ON m.id = x.item_id WHERE m.kind = 'chunk' AND x.item_id < $2::bigint`,
          [c * step, step],
        );
      }
      await tx.query(
        `INSERT INTO memloom_mentions (entity_id, item_id, strength)
         SELECT mt.entity_id, mt.item_id + $1::bigint, mt.strength FROM memloom_mentions mt
         JOIN memloom_items m ON m.id = mt.item_id WHERE m.kind = 'chunk' AND mt.item_id < $2::bigint`,
        [c * step, step],
      );
    }
  });
  await store.db.query(`SELECT setval(pg_get_serial_sequence('memloom_items', 'id'), (SELECT max(id) FROM memloom_items))`);
  await store._afterWrite();
}

async function buildStore(open, scale) {
  const store = await open({});
  const t0 = performance.now();
  await store.ingest(join(opt.set, 'corpus'));
  const ingestS = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  await store.index();
  const indexS = (performance.now() - t1) / 1000;
  const t2 = performance.now();
  await multiply(store, scale - 1);
  const multiplyS = (performance.now() - t2) / 1000;
  return { store, ingestS, indexS, multiplyS };
}

async function buildEngines(scale) {
  let base = null;
  if (baseline) {
    base = await buildStore(baseline, scale);
    console.log(`baseline (${opt.baseline}): ingest ${base.ingestS.toFixed(1)} s, index ${base.indexS.toFixed(1)} s`);
  }
  const built = await buildStore(openStore, scale);
  const { store, ingestS, indexS, multiplyS } = built;
  return { ...(await buildOthers(store, scale, { ingestS, indexS, multiplyS })), base: base?.store };
}

async function buildOthers(store, scale, { ingestS, indexS, multiplyS }) {
  const { rows } = await store.db.query(`SELECT id::int AS id, source, breadcrumb, content, embedding::text AS embedding FROM memloom_items WHERE status = 'active' ORDER BY id`);
  const dims = store.embedder.dims;
  const t3 = performance.now();
  const orama = create({ schema: { text: 'string', embedding: `vector[${dims}]` } });
  await insertMultiple(orama, rows.map((r) => ({ id: String(r.id), text: `${r.breadcrumb ?? ''}\n${r.content}`, embedding: JSON.parse(r.embedding) })), 1000);
  const oramaS = (performance.now() - t3) / 1000;
  const t4 = performance.now();
  const mini = new MiniSearch({ fields: ['text'], idField: 'id' });
  mini.addAll(rows.map((r) => ({ id: r.id, text: `${r.breadcrumb ?? ''}\n${r.content}` })));
  const miniS = (performance.now() - t4) / 1000;
  const indexed = await store._hasVectorIndex();
  return { store, chunks: rows.length, orama, mini, indexed, build: { ingestS, indexS, multiplyS, oramaS, miniS } };
}

/** Orama's vector threshold: the default 0.8 drops nearly every hash-v1 neighbour; 0.1 keeps them. */
const ORAMA_SIMILARITY = 0.1;

function engines({ store, orama, mini, base }) {
  const embed = async (q) => (await store.embedder.embed([q]))[0];
  return {
    memloom: async (q) => (await store.recall(q, { limit: 10 })).results.length,
    ...(base ? { 'memloom (baseline)': async (q) => (await base.recall(q, { limit: 10 })).results.length } : {}),
    'orama hybrid': async (q) => (await search(orama, { mode: 'hybrid', term: q, vector: { value: Array.from(await embed(q)), property: 'embedding' }, similarity: ORAMA_SIMILARITY, limit: 10 })).hits.length,
    'orama full text': async (q) => (await search(orama, { term: q, limit: 10 })).hits.length,
    'orama vector': async (q) => (await search(orama, { mode: 'vector', vector: { value: Array.from(await embed(q)), property: 'embedding' }, similarity: ORAMA_SIMILARITY, limit: 10 })).hits.length,
    minisearch: async (q) => mini.search(q).slice(0, 10).length,
  };
}

/** Every function over every query, interleaved (breakdown.js). */
const measure = (fns) => interleaved(fns, queries, passes);

async function breakdown(store) {
  console.log(`\n${breakdownTable(await measure(await breakdownParts(store, queries)))}`);
}

console.log(`recall bench: ${queries.length} queries x ${passes} passes, interleaved; set ${opt.set}; package ${opt.pkg}`);
for (const scale of opt.scales.split(',').map(Number)) {
  const built = await buildEngines(scale);
  const b = built.build;
  console.log(`\n## ${scale}x: ${built.chunks} chunks, memloom vector search ${built.indexed ? 'HNSW' : 'exact'}`);
  console.log(`build s: memloom ingest ${b.ingestS.toFixed(1)} + index ${b.indexS.toFixed(1)}${scale > 1 ? ` + ${scale - 1} copies by SQL (and HNSW if built) ${b.multiplyS.toFixed(1)}` : ''}; orama ${b.oramaS.toFixed(1)}; minisearch ${b.miniS.toFixed(1)}`);
  const times = await measure(engines(built));
  const mem = times.memloom;
  console.log('\n| engine | p50 ms | p95 ms | paired ratio memloom / engine (median) |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const [n, ts] of Object.entries(times)) {
    const ratio = n === 'memloom' ? '1.00' : f2(median(ts.map((t, i) => mem[i] / t)));
    console.log(`| ${n} | ${f2(median(ts))} | ${f2(pct(ts, 95))} | ${ratio} |`);
  }
  if (built.base) {
    // Same store contents, same query: the ranked ids must be the same (an exact change).
    let same = 0;
    for (const q of queries) {
      const a = (await built.store.recall(q)).results.map((r) => r.content).join('\0');
      const b = (await built.base.recall(q)).results.map((r) => r.content).join('\0');
      if (a === b) same++;
    }
    console.log(`\nranked results identical to the baseline's: ${same}/${queries.length} queries`);
  }
  if (opt.breakdown) {
    console.log('\nbreakdown, memloom:');
    await breakdown(built.store);
    if (built.base) {
      console.log('\nbreakdown, memloom (baseline):');
      await breakdown(built.base);
    }
  }
  await built.store.close();
  await built.base?.close();
}
