// Ingest throughput, end to end, with its time split, before and after in one process:
// `store.ingest(folder)` of a corpus into a fresh store, for each package given (--baseline,
// then this one), embedded (PGlite in a directory, as the CLI uses) and on a server (--url).
//
//   node npm/bench/ingest.js [--baseline DIR] [--url URL] [--corpus DIR] [--small N] [--rounds R] [--probe]
//
// The embedder is MEMLOOM_EMBEDDER's (hash-v1 when unset), the same for every package.
//
// scripts/bench-ingest.sh (`make bench-ingest`) prepares the baseline package from git and a
// throwaway server and runs this. Corpora: the Node docs (../shared/eval/nodejs-docs/corpus;
// said plainly when absent) and N small files (--small 0: none) generated here in a temporary directory (never
// committed): paragraphs of the Node docs, or synthetic text without them, 3 to 8 per file,
// ingested as a folder and again as documents {root, source, file} (the preview's shape).
//
// Split, per run: read (the files' load: stat, read, UTF-8 check; the part not hidden behind the
// other steps, since the ingest reads ahead), embed (the embedder's calls, outside the writes they overlap),
// write (the transactions that write chunks), statistics (memloom_refresh_stats after a bulk
// load), other (chunking, hashing, the remaining queries: the remainder). Then `index` (the
// entity index run that follows an ingest, store.index()) is timed apart. --probe adds, on
// the newest package's stores, what bounds the write: the generated keyword columns
// (memloom_tsvector and its parts) recomputed over the stored chunks, and on the server the
// HNSW index inserts.
// Correctness inside the run: every package must store the same item rows (source, breadcrumb,
// content, embedding, metadata, in id order) and give the same recall ids for a query set;
// the script exits 1 otherwise. No figure is asserted.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

const here = new URL('.', import.meta.url).pathname;
const { values: opt } = parseArgs({
  options: {
    baseline: { type: 'string' },
    pkg: { type: 'string', default: resolve(here, '..') },
    url: { type: 'string' },
    corpus: { type: 'string', default: resolve(here, '../../../shared/eval/nodejs-docs/corpus') },
    small: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '1' },
    probe: { type: 'boolean', default: false },
    backends: { type: 'string', default: 'embedded,server' },
  },
});
const rounds = Number(opt.rounds);
const packages = [];
if (opt.baseline) packages.push({ label: 'before', dir: resolve(opt.baseline) });
packages.push({ label: opt.baseline ? 'after' : 'this', dir: resolve(opt.pkg) });
for (const p of packages) p.api = await import(pathToFileURL(join(p.dir, 'src/entry-node.js')).href);
const pg = opt.url ? (await import(pathToFileURL(join(packages.at(-1).dir, 'node_modules/pg/lib/index.js')).href)).default : null;

// Corpora ---------------------------------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), 'memloom-bench-ingest-'));
const corpora = [];
const haveDocs = existsSync(opt.corpus);
if (haveDocs) corpora.push({ name: 'Node docs', dir: opt.corpus });
else console.log(`Node docs: not there (${opt.corpus}); only the generated small-file corpus runs`);
const small = Number(opt.small);
if (!Number.isInteger(small) || small < 0) throw new Error(`--small takes a number of files (0: none), not ${opt.small}`);
if (small > 0) {
  const paras = [];
  if (haveDocs) {
    for (const f of readdirSync(opt.corpus).sort()) {
      if (!f.endsWith('.md')) continue;
      for (const p of readFileSync(join(opt.corpus, f), 'utf8').split(/\n\s*\n/)) {
        const t = p.trim();
        if (t.length >= 40 && !t.startsWith('```')) paras.push(t);
      }
    }
  } else {
    const words = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}x`);
    let s = 7;
    const rnd = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20000; i++) paras.push(Array.from({ length: 40 }, () => words[Math.floor(words.length * rnd() ** 3)]).join(' '));
  }
  const dir = join(work, 'small');
  const n = small;
  let k = 0;
  for (let i = 0; i < n; i++) {
    const sub = join(dir, `d${i % 50}`);
    if (i < 50) mkdirSync(sub, { recursive: true });
    const body = [`# Note ${i}`];
    for (let j = 0; j < 3 + (i % 6); j++) body.push(paras[k++ % paras.length]);
    writeFileSync(join(sub, `note-${i}.md`), body.join('\n\n') + '\n');
  }
  corpora.push({ name: `${n} small files`, dir });
  // The same files given as documents {root, source, file} in one call: the browser preview's
  // and the API's shape (each file read when its turn comes, as a picked File is).
  corpora.push({ name: `${n} small files as documents`, dir, documents: true });
}
if (corpora.length === 0) throw new Error(`nothing to ingest: no Node docs at ${opt.corpus} and --small 0`);
// Each corpus's files once, in path order: its size, and the documents of the documents form.
for (const c of corpora) {
  c.paths = [];
  const walk = (d, rel) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.')) continue;
      const path = join(d, e.name);
      const source = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path, source);
      else if (e.isFile()) c.paths.push({ path, source, size: statSync(path).size });
    }
  };
  walk(c.dir, '');
  c.bytes = c.paths.reduce((n, f) => n + f.size, 0);
  c.files = c.paths.length;
}

/** The corpus as ingest's inputs: its folder, or its files as documents read through `t`. */
function inputs(c, t) {
  if (!c.documents) return [c.dir];
  return c.paths.map(({ path, source, size }) => {
    const arrayBuffer = t.timeRead(async () => {
      const b = await readFile(path);
      return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    });
    return { root: 'small', source, file: { size, arrayBuffer } };
  });
}

// Stores ----------------------------------------------------------------------------------------
let dbSeq = 0;
async function freshStore(api, backend) {
  if (backend === 'embedded') {
    const dir = mkdtempSync(join(work, 'store-'));
    const store = await api.openStore({ dir, embedder: api.embedderFromEnv() });
    return { store, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `memloom_bench_ingest_${process.pid}_${dbSeq++}`;
  const admin = new pg.Client({ connectionString: opt.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(opt.url);
  u.pathname = `/${name}`;
  const store = await api.openStore({ url: u.toString(), embedder: api.embedderFromEnv() });
  return {
    store,
    drop: async () => {
      const a = new pg.Client({ connectionString: opt.url });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name}`);
      await a.end();
    },
  };
}

/** Intervals [start, end] merged into disjoint ones, in order. @param {number[][]} spans */
function union(spans) {
  const out = [];
  for (const [s, e] of [...spans].sort((a, b) => a[0] - b[0])) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** The length of `a` (disjoint intervals) outside `b` (disjoint intervals). */
function uncovered(a, b) {
  let total = 0;
  for (const [s, e] of a) {
    let covered = 0;
    for (const [bs, be] of b) covered += Math.max(0, Math.min(e, be) - Math.max(s, bs));
    total += e - s - covered;
  }
  return total;
}

/**
 * Wraps the store's database, embedder and file reader with timers. The ingest reads files
 * ahead of the batch it writes (npm/src/store/ingest.js, READ_AHEAD), so loads overlap each
 * other and the writes: `read` is the wall time with a load in flight and nothing else timed
 * running (what reading still adds to the end-to-end time), computed by `t.settle()`. A
 * batch is embedded while the one before is written: `embed` is the embedding time outside
 * the writes (on PGlite, which runs on this thread, about all of it).
 */
function instrument(store) {
  const t = { read: 0, embed: 0, write: 0, statistics: 0, queries: 0 };
  const spans = { read: [], embed: [], write: [], busy: [] };
  const timed = (key, fn) => async (...args) => {
    const s = performance.now();
    try {
      return await fn(...args);
    } finally {
      const e = performance.now();
      spans[key].push([s, e]);
      if (key !== 'read') {
        t[key] += e - s;
        spans.busy.push([s, e]);
      }
    }
  };
  Object.defineProperty(t, 'timeRead', { enumerable: false, value: (fn) => timed('read', fn) });
  Object.defineProperty(t, 'settle', {
    enumerable: false,
    value: () => {
      t.read = uncovered(union(spans.read), union(spans.busy));
      t.embed = uncovered(union(spans.embed), union(spans.write));
    },
  });
  const db = store.db;
  const query = db.query;
  db.query = async (sql, params) => {
    const s = performance.now();
    try {
      return await query(sql, params);
    } finally {
      const e = performance.now();
      t[/memloom_refresh_stats/.test(sql) ? 'statistics' : 'queries'] += e - s;
      spans.busy.push([s, e]);
    }
  };
  const transaction = db.transaction;
  db.transaction = timed('write', transaction);
  store.embedder = { ...store.embedder, embed: timed('embed', store.embedder.embed.bind(store.embedder)) };
  const files = store.files;
  store.files = {
    ...files,
    expand: async (p) => {
      const g = await files.expand(p);
      return { ...g, docs: g.docs.map((d) => ({ ...d, load: timed('read', d.load) })) };
    },
  };
  return t;
}

const QUERIES = ['readFile', 'ERR_REQUIRE_ESM', 'how do I spawn a child process', 'stream backpressure', 'Note 17', 'buffer from string encoding'];

async function snapshot(store) {
  const { rows } = await store.db.query(
    `SELECT kind, source, breadcrumb, content, md5(embedding::text) AS e, metadata->>'fileHash' AS h, status
     FROM memloom_items WHERE namespace = $1 ORDER BY id`,
    [store.namespace],
  );
  const digest = (await import('node:crypto')).createHash('sha256');
  for (const r of rows) digest.update(JSON.stringify([r.kind, r.source, r.breadcrumb, r.content, r.e, r.h, r.status]));
  // A server store's HNSW graphs are not the same from one build to the next (pgvector draws
  // each node's level at random), so two stores with equal rows could recall differently: the
  // indexes go first (a throwaway database), and both vector searches are exact.
  if (store.db.kind === 'server') await store.db.exec('DROP INDEX IF EXISTS memloom_items_embedding; DROP INDEX IF EXISTS memloom_entities_embedding');
  const recall = [];
  for (const q of QUERIES) recall.push((await store.recall(q, { limit: 10 })).results.map((x) => x.content.slice(0, 40)).join('|'));
  return { items: rows.length, digest: digest.digest('hex'), recall: recall.join('\n') };
}

async function probe(store, backend) {
  const q = async (sql) => {
    const s = performance.now();
    await store.db.query(sql);
    return performance.now() - s;
  };
  const src = `FROM memloom_items WHERE namespace = '${store.namespace.replace(/'/g, "''")}'`;
  const out = {
    tsvector: await q(`SELECT sum(length(memloom_tsvector(content))) ${src}`),
    to_tsvector: await q(`SELECT sum(length(to_tsvector('english', content))) ${src}`),
    identifiers: await q(`SELECT sum(cardinality(memloom_identifiers(content))) ${src}`),
    heading: await q(`SELECT sum(length(memloom_tsvector(memloom_heading(breadcrumb, key)))) ${src}`),
  };
  if (backend === 'server') {
    await store.db.query('CREATE TEMP TABLE bench_vec (e vector(256))');
    out.plain_insert = await q(`INSERT INTO bench_vec SELECT embedding ${src}`);
    await store.db.query('TRUNCATE bench_vec');
    await store.db.query('CREATE INDEX ON bench_vec USING hnsw (e vector_cosine_ops)');
    out.hnsw_insert = await q(`INSERT INTO bench_vec SELECT embedding ${src}`);
    await store.db.query('DROP TABLE bench_vec');
  }
  return out;
}

// Warm-up: V8 compiles PGlite's WebAssembly in tiers in the background; the first store of a
// process ran at half speed for seconds.
for (const p of packages) {
  const warm = await p.api.openStore({});
  // A folder of the small files, or without them (--small 0) the first corpus's first file.
  await warm.ingest([small > 0 ? join(corpora.at(-1).dir, 'd0') : corpora[0].paths[0].path]);
  await warm.close();
}

const backends = opt.backends.split(',').filter((b) => b === 'embedded' || (b === 'server' && opt.url));
if (!opt.url) console.log('server: no --url; embedded only');
console.log(`ingest bench: ${packages.map((p) => `${p.label} = ${p.dir}`).join(', ')}; ${rounds} round(s)\n`);
const results = [];
let failed = false;
for (const c of corpora) {
  for (const backend of backends) {
    const snaps = new Map();
    for (let r = 0; r < rounds; r++) {
      // Alternate the order per round so that neither package always runs on a warmer machine.
      const order = r % 2 === 0 ? packages : [...packages].reverse();
      for (const p of order) {
        const { store, drop } = await freshStore(p.api, backend);
        try {
          const t = instrument(store);
          const input = inputs(c, t);
          const s = performance.now();
          const rep = await store.ingest(input);
          const total = performance.now() - s;
          t.settle();
          const split = { ...t };
          const si = performance.now();
          const idx = await store.index();
          const index = performance.now() - si;
          const snap = await snapshot(store);
          const prev = snaps.get('ref');
          if (!prev) snaps.set('ref', { ...snap, label: p.label });
          else if (prev.digest !== snap.digest || prev.recall !== snap.recall || prev.items !== snap.items) {
            failed = true;
            console.error(`MISMATCH on ${c.name} (${backend}): ${p.label} stored ${snap.items} items (digest ${snap.digest.slice(0, 12)}), ${prev.label} ${prev.items} (${prev.digest.slice(0, 12)}); recall ${prev.recall === snap.recall ? 'same' : 'differs'}`);
          }
          const pr = opt.probe && p === packages.at(-1) && r === 0 ? await probe(store, backend) : null;
          results.push({ corpus: c, backend, pkg: p.label, round: r, total, t: split, chunks: rep.chunks, files: rep.files, index, mentions: idx.mentions, probe: pr });
          console.error(`  ${c.name} ${backend} ${p.label} round ${r + 1}: ${(c.bytes / 1e6 / (total / 1000)).toFixed(2)} MB/s`);
        } finally {
          await store.close();
          await drop();
        }
      }
    }
  }
}

// Report ----------------------------------------------------------------------------------------
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => x.toFixed(0);
console.log('| corpus | backend | package | MB | files | chunks | end to end s | MB/s | read | embed | write | statistics | other | index run s | MB/s vs before |');
console.log('| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const c of corpora) {
  for (const backend of backends) {
    let baseRate = null;
    for (const p of packages) {
      const rs = results.filter((x) => x.corpus === c && x.backend === backend && x.pkg === p.label);
      if (rs.length === 0) continue;
      const m = (f) => median(rs.map(f));
      const total = m((x) => x.total);
      const rate = c.bytes / 1e6 / (total / 1000);
      if (baseRate === null) baseRate = rate;
      const other = m((x) => x.total - x.t.read - x.t.embed - x.t.write - x.t.statistics);
      console.log(
        `| ${c.name} | ${backend} | ${p.label} | ${(c.bytes / 1e6).toFixed(2)} | ${rs[0].files} | ${rs[0].chunks} | ${(total / 1000).toFixed(2)} | ${rate.toFixed(2)} | ` +
          `${ms(m((x) => x.t.read))} | ${ms(m((x) => x.t.embed))} | ${ms(m((x) => x.t.write))} | ${ms(m((x) => x.t.statistics))} | ${ms(other)} | ` +
          `${(m((x) => x.index) / 1000).toFixed(2)} | ${(rate / baseRate).toFixed(2)}x |`,
      );
    }
  }
}
console.log('\n(read, embed, write, statistics, other: milliseconds of the end-to-end time; medians over rounds)');
const probes = results.filter((x) => x.probe);
if (probes.length > 0) {
  console.log('\nWhat bounds the write (newest package, recomputed over the stored chunks, ms):');
  console.log('| corpus | backend | chunks | write | memloom_tsvector(content) | to_tsvector alone | memloom_identifiers alone | heading tsvector | vector insert, no index | with HNSW |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const x of probes) {
    const p = x.probe;
    console.log(
      `| ${x.corpus.name} | ${x.backend} | ${x.chunks} | ${ms(x.t.write)} | ${ms(p.tsvector)} | ${ms(p.to_tsvector)} | ${ms(p.identifiers)} | ${ms(p.heading)} | ` +
        `${p.plain_insert === undefined ? '-' : ms(p.plain_insert)} | ${p.hnsw_insert === undefined ? '-' : ms(p.hnsw_insert)} |`,
    );
  }
}
rmSync(work, { recursive: true, force: true });
if (failed) {
  console.error('ingest bench: the packages stored different items or recalled different ids');
  process.exit(1);
}
