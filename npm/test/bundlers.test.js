// The bundler recipes of docs/BUNDLERS.md (examples/bundlers/: Vite with no config, esbuild,
// webpack), each built here into a temp project that has memloom in node_modules (a link to
// this package, as `npm install` of it would place it) and run in Debian's Chromium: the store
// page ingests, recalls and finds the right chunk; esbuild's core-only page chunks and embeds
// with no externals and nothing of PGlite in the bundle; a store page whose PGlite file is
// missing (a wasm, the data, or pgvector's vector.tar.gz) fails in under 5 s with an error that
// names the file. Skipped when /usr/bin/chromium
// is missing (apt-get install -y chromium).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const CHROMIUM = process.env.MEMLOOM_CHROMIUM ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} not found`;
const pkg = fileURLToPath(new URL('..', import.meta.url));
const recipes = fileURLToPath(new URL('../../examples/bundlers/', import.meta.url));
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };
const DOCS = [
  { source: 'pg.md', text: '# Postgres\n\n## Auth\n\nRules live in pg_hba.conf.\n\n## Pools\n\nKeep pools small.\n' },
  { source: 'deploy.md', text: '# Deploys\n\nDeploys freeze on Fridays.\n' },
];
let tmp, server, base, browser;
/** Which Vite build /assets/... comes from: the one whose page was loaded last. */
let viteRoot;
const built = {};

/** A temp project with memloom and the bundlers in node_modules, and one recipe copied in. */
function project(recipe) {
  const dir = join(tmp, recipe);
  cpSync(join(recipes, recipe), dir, { recursive: true });
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(pkg, join(dir, 'node_modules/memloom'), 'dir');
  for (const tool of ['esbuild', 'webpack', 'vite']) symlinkSync(join(pkg, 'node_modules', tool), join(dir, 'node_modules', tool), 'dir');
  return dir;
}

/** Runs a build step in its own process (a bundler's workers and caches stay out of this one). */
function run(cwd, script) {
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `${cwd}: ${r.stderr}`);
  console.log(`# built ${cwd.slice(tmp.length + 1)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function sizeOf(dir) {
  return readdirSync(dir, { recursive: true }).reduce((n, f) => n + (statSync(join(dir, f)).isFile() ? statSync(join(dir, f)).size : 0), 0);
}

before(async () => {
  if (skip) return;
  tmp = mkdtempSync(join(tmpdir(), 'memloom-bundlers-'));

  const esb = project('esbuild');
  run(esb, `await import(${JSON.stringify(join(esb, 'build.mjs'))});`);
  built.esbuild = join(esb, 'dist');
  // The same build with one of PGlite's files missing.
  built.missing = join(tmp, 'esbuild-missing');
  cpSync(built.esbuild, built.missing, { recursive: true });
  rmSync(join(built.missing, 'pglite.data'));
  built['esbuild-novector'] = join(tmp, 'esbuild-novector');
  cpSync(built.esbuild, built['esbuild-novector'], { recursive: true });
  rmSync(join(built['esbuild-novector'], 'vector.tar.gz'));

  const wp = project('webpack');
  run(
    wp,
    `import webpack from 'webpack'; import config from './webpack.config.mjs';
     const stats = await new Promise((res, rej) => webpack(config, (e, s) => (e ? rej(e) : res(s))));
     if (stats.hasErrors()) { console.error(stats.toString('errors-only')); process.exit(1); }`,
  );
  cpSync(join(wp, 'index.html'), join(wp, 'dist/index.html'));
  built.webpack = join(wp, 'dist');

  const vite = project('vite');
  run(vite, `import { build } from 'vite'; await build({ root: process.cwd(), logLevel: 'error' });`);
  built.vite = join(vite, 'dist');
  // Vite's build with PGlite's wasm missing (no `assets`: PGlite resolves its files itself).
  built['vite-missing'] = join(tmp, 'vite-missing');
  cpSync(built.vite, built['vite-missing'], { recursive: true });
  const wasm = readdirSync(join(built.vite, 'assets')).find((f) => /^pglite-.*\.wasm$/.test(f));
  rmSync(join(built['vite-missing'], 'assets', wasm));
  // ... and with pgvector's extension bundle missing (PGlite would start without it).
  built['vite-novector'] = join(tmp, 'vite-novector');
  cpSync(built.vite, built['vite-novector'], { recursive: true });
  const bundle = readdirSync(join(built.vite, 'assets')).find((f) => /^vector\.tar.*\.gz$/.test(f));
  assert.ok(bundle, `Vite emitted pgvector's bundle (${readdirSync(join(built.vite, 'assets')).join(', ')})`);
  rmSync(join(built['vite-novector'], 'assets', bundle));

  // /<name>/... serves built[name].
  server = createServer((req, res) => {
    let [, name, ...rest] = new URL(req.url, 'http://x').pathname.split('/');
    // Vite's default base is '/': its page refers to /assets/..., so anything else is Vite's.
    if (name?.startsWith('vite') && built[name]) viteRoot = built[name];
    if (!built[name] || name.startsWith('vite')) [name, rest] = ['vite', new URL(req.url, 'http://x').pathname.replace(/^\/vite(-[a-z]+)?\//, '/').split('/').slice(1)];
    const root = name === 'vite' ? viteRoot : built[name];
    const file = root && join(root, normalize(rest.join('/') || 'index.html'));
    if (!file || !file.startsWith(root) || !existsSync(file)) return res.writeHead(404).end('not found');
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

/** Opens /<name>/<page>, waits for window.run, runs it with `args`; page errors fail the test. */
async function runPage(name, page, args) {
  const tab = await browser.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  try {
    await tab.goto(`${base}/${name}/${page}`);
    await tab.waitForFunction(() => typeof window.run === 'function', null, { timeout: 30_000 });
    const out = await tab.evaluate(async (a) => {
      const started = performance.now();
      try {
        return { value: await window.run(...a), ms: performance.now() - started };
      } catch (e) {
        return { error: String(e?.message ?? e), ms: performance.now() - started };
      }
    }, args);
    return { ...out, errors };
  } finally {
    await tab.close();
  }
}

for (const recipe of ['vite', 'esbuild', 'webpack']) {
  test(`${recipe}: the store page ingests and recalls in Chromium`, { skip, timeout: 120_000 }, async () => {
    const r = await runPage(recipe, 'index.html', [DOCS, 'pg_hba.conf']);
    assert.equal(r.error, undefined, r.error);
    assert.deepEqual(r.errors, []);
    const top = r.value.results[0];
    assert.equal(top.source, 'pg.md');
    assert.equal(top.breadcrumb, 'Postgres > Auth');
    assert.equal(top.ranks.keyword, 1);
    console.log(`# ${recipe}: recall ok; build output ${(sizeOf(built[recipe]) / 1e6).toFixed(1)} MB`);
  });
}

test('esbuild: a core-only page (memloom/core) bundles with no externals and no PGlite', { skip }, async () => {
  const bundle = readFileSync(join(built.esbuild, 'core.js'), 'utf8');
  assert.doesNotMatch(bundle, /pglite|PGlite/);
  const r = await runPage('esbuild', 'core.html', ['# Guide\n\n## Setup\n\nInstall it.\n']);
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.value, { breadcrumbs: ['Guide > Setup'], dims: 256 });
  console.log(`# esbuild core page: ${(bundle.length / 1024).toFixed(1)} KB of JavaScript (+ the core's wasm)`);
});

test('a missing PGlite file fails openStore in under 5 s, naming the file', { skip, timeout: 60_000 }, async () => {
  const r = await runPage('missing', 'index.html', [DOCS, 'pg_hba.conf']);
  assert.match(r.error ?? '', /PGlite's pglite\.data is missing: http:\/\/127\.0\.0\.1:\d+\/missing\/pglite\.data answered HTTP 404; copy it there \(copyBrowserAssets/);
  assert.ok(r.ms < 5000, `failed after ${r.ms.toFixed(0)} ms`);
  console.log(`# missing pglite.data: failed in ${r.ms.toFixed(0)} ms`);
});

test('vite (no assets option): a missing PGlite wasm fails openStore in under 5 s, naming the file', { skip, timeout: 60_000 }, async () => {
  const r = await runPage('vite-missing', 'index.html', [DOCS, 'pg_hba.conf']);
  assert.match(r.error ?? '', /PGlite could not load http:\/\/127\.0\.0\.1:\d+\/assets\/pglite-[^ ]+\.wasm \(HTTP 404\); serve PGlite's files/);
  assert.ok(r.ms < 5000, `failed after ${r.ms.toFixed(0)} ms`);
  console.log(`# vite, missing pglite.wasm: failed in ${r.ms.toFixed(0)} ms`);
});

test('vite (no assets option): a missing vector.tar.gz fails openStore in under 5 s, naming the file', { skip, timeout: 60_000 }, async () => {
  const r = await runPage('vite-novector', 'index.html', [DOCS, 'pg_hba.conf']);
  assert.match(r.error ?? '', /pgvector's vector\.tar\.gz is missing: http:\/\/127\.0\.0\.1:\d+\/assets\/vector\.tar[^ ]*\.gz answered HTTP 404; serve PGlite's files/);
  assert.ok(r.ms < 5000, `failed after ${r.ms.toFixed(0)} ms`);
  console.log(`# vite, missing vector.tar.gz: failed in ${r.ms.toFixed(0)} ms`);
});

test('esbuild (assets option): a missing vector.tar.gz fails openStore in under 5 s, naming the file', { skip, timeout: 60_000 }, async () => {
  const r = await runPage('esbuild-novector', 'index.html', [DOCS, 'pg_hba.conf']);
  assert.match(r.error ?? '', /PGlite's vector\.tar\.gz is missing: http:\/\/127\.0\.0\.1:\d+\/esbuild-novector\/vector\.tar\.gz answered HTTP 404; copy it there/);
  assert.ok(r.ms < 5000, `failed after ${r.ms.toFixed(0)} ms`);
  console.log(`# esbuild, missing vector.tar.gz: failed in ${r.ms.toFixed(0)} ms`);
});
