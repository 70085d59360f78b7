// Recall in headless Chromium (Debian's /usr/bin/chromium through playwright-core): memloom's
// browser bundle on an in-memory PGlite store next to Orama hybrid and MiniSearch in the SAME
// page, over the same chunks and hash-v1 vectors, interleaved. Part of `make bench-embedded`
// (issue 19). The page is served on 127.0.0.1 (an ephemeral port) for this run only.
//
//   node npm/bench/browser-recall.js [--set DIR] [--passes 3] [--pkg DIR] [--breakdown]
//
// The page ingests the Node docs ({source, text} documents fetched from the local server) and
// entity-indexes them as the preview does, then Orama and MiniSearch index memloom's own rows.
// Timings are performance.now() inside the page; "paired ratio" = median over (query, pass) of
// memloom's time / the other engine's. --breakdown: then, in the same page, where memloom's
// milliseconds go (breakdown.js, the same steps as recall.js --breakdown prints in Node).
// No set: says so and exits 0.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { breakdownTable, pct } from './breakdown.js';

const here = new URL('.', import.meta.url).pathname;
const { values: opt } = parseArgs({
  options: {
    pkg: { type: 'string', default: resolve(here, '..') },
    set: { type: 'string', default: resolve(here, '../../../shared/eval/nodejs-docs') },
    passes: { type: 'string', default: '3' },
    breakdown: { type: 'boolean', default: false },
  },
});
// --pkg bundles another checkout's package (e.g. /work/main/npm) for a before/after pair; the
// comparison engines always come from this package's node_modules.
const pkg = resolve(opt.pkg);
const mine = resolve(here, '..');
const CHROMIUM = process.env.MEMLOOM_CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(join(opt.set, 'corpus'))) {
  console.log(`browser recall bench: skipped, no Node docs set at ${opt.set}`);
  process.exit(0);
}
if (!existsSync(CHROMIUM)) {
  console.log(`browser recall bench: skipped, ${CHROMIUM} not found (apt-get install chromium)`);
  process.exit(0);
}

const docs = readdirSync(join(opt.set, 'corpus'))
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => ({ source: f, text: readFileSync(join(opt.set, 'corpus', f), 'utf8') }));
const queries = readFileSync(join(opt.set, 'queries.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).query);

const tmp = mkdtempSync(join(tmpdir(), 'memloom-bench-browser-'));
const esbuild = await import('esbuild');
writeFileSync(
  join(tmp, 'app.js'),
  `import { init, openStore } from ${JSON.stringify(join(pkg, 'src/entry-browser.js'))};
   import { breakdownParts, interleaved } from ${JSON.stringify(join(here, 'breakdown.js'))};
   import { create, insertMultiple, search } from '@orama/orama';
   import MiniSearch from 'minisearch';
   window.runBench = async ({ passes, similarity, breakdown }) => {
     await init(new URL('./memloom_wasm_bg.wasm', import.meta.url));
     const { docs, queries } = await (await fetch('./data.json')).json();
     const store = await openStore({});
     const t0 = performance.now();
     await store.ingest(docs);
     const ingestS = (performance.now() - t0) / 1000;
     await store.index();
     const buildS = (performance.now() - t0) / 1000;
     const { rows } = await store.db.query("SELECT id::int AS id, breadcrumb, content, embedding::text AS embedding FROM memloom_items WHERE status = 'active' ORDER BY id");
     const orama = create({ schema: { text: 'string', embedding: 'vector[' + store.embedder.dims + ']' } });
     await insertMultiple(orama, rows.map((r) => ({ id: String(r.id), text: (r.breadcrumb ?? '') + '\\n' + r.content, embedding: JSON.parse(r.embedding) })), 1000);
     const mini = new MiniSearch({ fields: ['text'] });
     mini.addAll(rows.map((r) => ({ id: r.id, text: (r.breadcrumb ?? '') + '\\n' + r.content })));
     const embed = async (q) => Array.from((await store.embedder.embed([q]))[0]);
     const fns = {
       memloom: async (q) => (await store.recall(q, { limit: 10 })).results.length,
       'orama hybrid': async (q) => (await search(orama, { mode: 'hybrid', term: q, vector: { value: await embed(q), property: 'embedding' }, similarity, limit: 10 })).hits.length,
       minisearch: async (q) => mini.search(q).slice(0, 10).length,
     };
     const times = await interleaved(fns, queries, passes);
     const steps = breakdown ? await interleaved(await breakdownParts(store, queries), queries, passes) : null;
     await store.close();
     return { chunks: rows.length, ingestS, buildS, times, steps };
   };`,
);
await esbuild.build({
  entryPoints: [join(tmp, 'app.js')],
  bundle: true,
  format: 'esm',
  splitting: true,
  platform: 'browser',
  outdir: join(tmp, 'dist'),
  logLevel: 'error',
  external: ['node:*'],
  nodePaths: [join(mine, 'node_modules'), join(pkg, 'node_modules')],
});
const pglite = join(mine, 'node_modules/@electric-sql/pglite/dist');
for (const f of ['pglite.wasm', 'initdb.wasm', 'pglite.data']) cpSync(join(pglite, f), join(tmp, 'dist', f));
cpSync(join(mine, 'node_modules/@electric-sql/pglite-pgvector/dist/vector.tar.gz'), join(tmp, 'dist/vector.tar.gz'));
cpSync(join(pkg, 'wasm/memloom_wasm_bg.wasm'), join(tmp, 'dist/memloom_wasm_bg.wasm'));
writeFileSync(join(tmp, 'dist/index.html'), '<!doctype html><script type="module" src="app.js"></script>');
writeFileSync(join(tmp, 'dist/data.json'), JSON.stringify({ docs, queries }));

const TYPES = { '.js': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm', '.json': 'application/json' };
const server = createServer((req, res) => {
  const file = join(tmp, 'dist', normalize(new URL(req.url, 'http://x').pathname === '/' ? 'index.html' : new URL(req.url, 'http://x').pathname));
  if (!file.startsWith(join(tmp, 'dist')) || !existsSync(file)) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const { chromium } = await import('playwright-core');
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => typeof window.runBench === 'function');
  const passes = Number(opt.passes);
  const out = await page.evaluate((a) => window.runBench(a), { passes, similarity: 0.1, breakdown: opt.breakdown });
  console.log(`browser recall bench (package ${pkg}): Chromium ${browser.version()}, ${out.chunks} chunks (in the page: ingest ${out.ingestS.toFixed(1)} s, then index ${(out.buildS - out.ingestS).toFixed(1)} s), ${queries.length} queries x ${passes} passes, interleaved`);
  console.log('\n| engine (Chromium) | p50 ms | p95 ms | paired ratio memloom / engine (median) |');
  console.log('| --- | ---: | ---: | ---: |');
  const mem = out.times.memloom;
  for (const [n, ts] of Object.entries(out.times)) {
    const ratio = n === 'memloom' ? '1.00' : pct(ts.map((t, i) => mem[i] / Math.max(t, 0.01)), 50).toFixed(2);
    console.log(`| ${n} | ${pct(ts, 50).toFixed(2)} | ${pct(ts, 95).toFixed(2)} | ${ratio} |`);
  }
  if (out.steps) console.log(`\nbreakdown, memloom in the same page after the engines (its steps interleaved with each other):\n\n${breakdownTable(out.steps)}`);
} finally {
  await browser.close();
  server.close();
  rmSync(tmp, { recursive: true, force: true });
}
