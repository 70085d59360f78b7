// Builds the preview page into a static folder (default npm/preview/dist): esbuild bundles the
// page script and the store worker as ES modules with shared chunks, PGlite's runtime files,
// the pgvector extension and the memloom core's wasm are copied next to them, and the service
// worker gets the list of files to cache. Needs `bash scripts/build-wasm.sh` first (npm/wasm).
//   node npm/preview/build.mjs [OUTDIR]
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '..');

export async function build(outdir = join(here, 'dist')) {
  const wasm = join(pkg, 'wasm/memloom_wasm_bg.wasm');
  if (!existsSync(wasm)) throw new Error(`${wasm} is missing: run \`bash scripts/build-wasm.sh\` first`);
  const esbuild = await import('esbuild');
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  await esbuild.build({
    entryPoints: { app: join(here, 'app.js'), worker: join(here, 'worker.js') },
    bundle: true,
    format: 'esm',
    splitting: true,
    platform: 'browser',
    target: 'es2022',
    minify: true,
    outdir,
    chunkNames: 'chunk-[hash]',
    logLevel: 'error',
    // PGlite's Node code paths import node:* lazily; a browser never takes them.
    external: ['node:*'],
    nodePaths: [join(pkg, 'node_modules')],
  });
  const pglite = join(pkg, 'node_modules/@electric-sql/pglite/dist');
  for (const f of ['pglite.wasm', 'initdb.wasm', 'pglite.data']) copyFileSync(join(pglite, f), join(outdir, f));
  copyFileSync(join(pkg, 'node_modules/@electric-sql/pglite-pgvector/dist/vector.tar.gz'), join(outdir, 'vector.tar.gz'));
  copyFileSync(wasm, join(outdir, 'memloom_wasm_bg.wasm'));
  for (const f of ['index.html', 'style.css']) copyFileSync(join(here, f), join(outdir, f));

  // The service worker caches every file built above, under a version that changes with them.
  const files = readdirSync(outdir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(outdir, join(d.parentPath ?? d.path, d.name)).split('\\').join('/'))
    .sort();
  const hash = createHash('sha256');
  for (const f of files) hash.update(f).update(readFileSync(join(outdir, f)));
  const assets = ['./', ...files.map((f) => `./${f}`)];
  const sw = readFileSync(join(here, 'sw.js'), 'utf8')
    .replace("'__VERSION__'", JSON.stringify(hash.digest('hex').slice(0, 12)))
    .replace('__ASSETS__', JSON.stringify(assets));
  writeFileSync(join(outdir, 'sw.js'), sw);
  return { outdir, files: [...files, 'sw.js'] };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outdir, files } = await build(process.argv[2] ? resolve(process.argv[2]) : undefined);
  console.error(`preview: built ${files.length} files into ${outdir}`);
}
