// Browser smoke test in Debian's Chromium (playwright-core, no browser download): the package
// loaded unbundled (ES modules straight from npm/) chunks, embeds bit-identically and fuses; the
// esbuild bundle runs an embedded PGlite store in memory and recalls. Skipped when
// /usr/bin/chromium is missing (apt-get install -y chromium).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const CHROMIUM = process.env.MEMLOOM_CHROMIUM ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} not found`;
const pkg = fileURLToPath(new URL('..', import.meta.url));
const golden = JSON.parse(readFileSync(new URL('../../tests/golden/embeddings.json', import.meta.url), 'utf8'));
const goldenStatic = Object.fromEntries(
  ['static-v1', 'static-v2'].map((id) => [id, JSON.parse(readFileSync(new URL(`../../tests/golden/embeddings-${id}.json`, import.meta.url), 'utf8'))]),
);

const TYPES = { '.bin': 'application/octet-stream', '.js': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm', '.json': 'application/json' };
let server, base, browser, tmp;

before(async () => {
  if (skip) return;
  tmp = mkdtempSync(join(tmpdir(), 'memloom-browser-'));
  // The bundle: esbuild, ESM with splitting, PGlite's assets copied next to it.
  const esbuild = await import('esbuild');
  writeFileSync(
    join(tmp, 'app.js'),
    `import { init, openStore } from ${JSON.stringify(join(pkg, 'src/entry-browser.js'))};
     window.runStore = async () => {
       await init(new URL('./memloom_wasm_bg.wasm', import.meta.url));
       const store = await openStore({});
       await store.ingest([{ source: 'pg.md', text: '# Postgres\\n\\n## Auth\\n\\nRules live in pg_hba.conf.\\n\\n## Pools\\n\\nKeep pools small.\\n' }]);
       await store.remember('Deploys freeze on Fridays.', { key: 'freeze' });
       const r = await store.recall('pg_hba.conf', { limit: 3 });
       await store.close();
       return r;
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
    // PGlite's Node code paths import node:* lazily; a browser never takes them.
    external: ['node:*'],
    nodePaths: [join(pkg, 'node_modules')],
  });
  const pglite = join(pkg, 'node_modules/@electric-sql/pglite/dist');
  for (const f of ['pglite.wasm', 'initdb.wasm', 'pglite.data']) cpSync(join(pglite, f), join(tmp, 'dist', f));
  cpSync(join(pkg, 'node_modules/@electric-sql/pglite-pgvector/dist/vector.tar.gz'), join(tmp, 'dist/vector.tar.gz'));
  cpSync(join(pkg, 'wasm/memloom_wasm_bg.wasm'), join(tmp, 'dist/memloom_wasm_bg.wasm'));
  writeFileSync(join(tmp, 'dist/index.html'), '<!doctype html><script type="module" src="app.js"></script>');
  writeFileSync(join(tmp, 'unbundled.html'), '<!doctype html><title>memloom</title>');

  // /pkg/* serves npm/ as is (unbundled); /dist/* the bundle.
  server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    let file;
    if (url.pathname.startsWith('/pkg/')) file = join(pkg, normalize(url.pathname.slice(5)));
    else if (url.pathname.startsWith('/dist/')) file = join(tmp, 'dist', normalize(url.pathname.slice(6)));
    else file = join(tmp, 'unbundled.html');
    if (!existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('unbundled: use before init fails clearly, then chunk, embed (bit-identical) and fuse', { skip }, async () => {
  const page = await browser.newPage();
  await page.goto(`${base}/`);
  const out = await page.evaluate(async (texts) => {
    const m = await import('/pkg/src/entry-browser.js');
    let before;
    try {
      m.embed('x');
    } catch (e) {
      before = e.message;
    }
    await m.init();
    return {
      before,
      chunks: m.chunk('a.md', '# A\n\none\n\n## B\n\ntwo\n').map((c) => c.breadcrumb),
      vectors: texts.map((t) => Array.from(new Uint32Array(m.embed(t).buffer))),
      fused: m.fuse({ vector: [1, 2], keyword: [2] }),
    };
  }, golden.map((g) => g.text));
  assert.match(out.before, /await init\(\)/);
  assert.deepEqual(out.chunks, ['A', 'A > B']);
  for (const [i, g] of golden.entries()) {
    assert.deepEqual(out.vectors[i], Array.from(new Uint32Array(Float32Array.from(g.vector.map(Math.fround)).buffer)), g.text);
  }
  assert.deepEqual(out.fused[0], { id: 2, rrfScore: 1 / 62 + 2 / 61, ranks: { vector: 2, keyword: 1, entity: null } });
  await page.close();
});

test('unbundled: static-v1 and static-v2 fetch their table next to the package and embed bit-identically', { skip }, async () => {
  const page = await browser.newPage();
  await page.goto(`${base}/`);
  const out = await page.evaluate(async (texts) => {
    const m = await import('/pkg/src/entry-browser.js');
    await m.init();
    const got = {};
    for (const version of [1, 2]) {
      const e = m.staticEmbedder({ version }); // default table: fetched from /pkg/data/static-v1.bin
      const vs = await e.embed(texts);
      got[e.id] = { dims: e.dims, vectors: vs.map((v) => Array.from(new Uint32Array(v.buffer))) };
    }
    return got;
  }, goldenStatic['static-v2'].map((g) => g.text));
  for (const id of ['static-v1', 'static-v2']) {
    assert.equal(out[id].dims, 512);
    for (const [i, g] of goldenStatic[id].entries()) {
      assert.equal(g.text, goldenStatic['static-v2'][i].text);
      assert.deepEqual(out[id].vectors[i], Array.from(new Uint32Array(Float32Array.from(g.vector.map(Math.fround)).buffer)), `${id} ${g.text}`);
    }
  }
  await page.close();
});

test('bundled (esbuild): an in-memory PGlite store ingests, remembers and recalls', { skip }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}/dist/index.html`);
  await page.waitForFunction(() => typeof window.runStore === 'function');
  const r = await page.evaluate(() => window.runStore());
  assert.deepEqual(errors, []);
  assert.equal(r.results[0].breadcrumb, 'Postgres > Auth');
  assert.equal(r.results[0].ranks.keyword, 1);
  await page.close();
});
