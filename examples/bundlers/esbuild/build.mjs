// esbuild recipe: `node build.mjs [OUTDIR]` (default dist/). ESM with code splitting; PGlite's
// Node-only code paths import node:* lazily and a browser never takes them, so they stay
// external; copyBrowserAssets copies the files the page loads at run time.
import * as esbuild from 'esbuild';
import { copyBrowserAssets } from 'memloom/assets';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const outdir = resolve(process.argv[2] ?? join(here, 'dist'));

// The store page: memloom with PGlite.
await esbuild.build({
  entryPoints: [join(here, 'app.js')],
  bundle: true,
  format: 'esm',
  splitting: true,
  platform: 'browser',
  outdir,
  external: ['node:*'],
  logLevel: 'warning',
});
copyBrowserAssets(outdir); // memloom_wasm_bg.wasm, pglite.wasm, initdb.wasm, pglite.data, vector.tar.gz

// The core-only page: no externals, no PGlite files.
await esbuild.build({ entryPoints: [join(here, 'core.js')], bundle: true, format: 'esm', platform: 'browser', outdir, logLevel: 'warning' });

writeFileSync(join(outdir, 'index.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="app.js"></script>\n');
writeFileSync(join(outdir, 'core.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="core.js"></script>\n');
