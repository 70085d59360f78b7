// `memloom/assets` (Node, for build scripts): the files a browser page of memloom loads at run
// time, which a bundler such as esbuild does not copy by itself. copyBrowserAssets(outDir) puts
// them next to the bundle; the page then opens its store with openStore({ assets: folder }),
// so that a missing file fails fast and by name. Recipes: docs/BUNDLERS.md in the repository.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

/**
 * @typedef {object} BrowserAsset
 * @property {string} name The file's name next to the bundle.
 * @property {string} path Where it is on disk.
 * @property {'core' | 'store' | 'static-v1'} use What needs it: `init()` (core), `openStore` (store), staticEmbedder (static-v1).
 */

/**
 * @typedef {object} BrowserAssetsOptions
 * @property {boolean} [store] PGlite's files and pgvector's, for openStore; default true.
 * @property {boolean} [staticModel] static-v1's 7.8 MB table, for staticEmbedder(); default false.
 */

/**
 * The files a browser page loads at run time, by use.
 * @param {BrowserAssetsOptions} [options]
 * @returns {BrowserAsset[]}
 */
export function browserAssets({ store = true, staticModel = false } = {}) {
  /** @type {BrowserAsset[]} */
  const out = [{ name: 'memloom_wasm_bg.wasm', path: join(here, '../wasm/memloom_wasm_bg.wasm'), use: 'core' }];
  if (store) {
    const pglite = dirname(require.resolve('@electric-sql/pglite'));
    for (const name of ['pglite.wasm', 'initdb.wasm', 'pglite.data']) out.push({ name, path: join(pglite, name), use: 'store' });
    out.push({ name: 'vector.tar.gz', path: join(dirname(require.resolve('@electric-sql/pglite-pgvector')), 'vector.tar.gz'), use: 'store' });
  }
  if (staticModel) out.push({ name: 'static-v1.bin', path: join(here, '../data/static-v1.bin'), use: 'static-v1' });
  for (const a of out) {
    if (!existsSync(a.path)) throw new Error(`memloom/assets: ${a.path} is missing; reinstall memloom (npm install memloom)`);
  }
  return out;
}

/**
 * Copies the browser assets into `outDir` (created when missing); returns their names.
 * @param {string} outDir
 * @param {BrowserAssetsOptions} [options]
 * @returns {string[]}
 */
export function copyBrowserAssets(outDir, options) {
  mkdirSync(outDir, { recursive: true });
  return browserAssets(options).map((a) => {
    copyFileSync(a.path, join(outDir, a.name));
    return a.name;
  });
}
