// A missing PGlite asset in Node: memloom laid out as `npm install` places it, in a temp
// project whose @electric-sql/pglite-pgvector has lost its vector.tar.gz (the pgvector extension
// bundle). PGlite itself only logs such a bundle and starts without the extension (the schema
// install then failed with `extension "vector" is not available`); openStore must fail at once,
// naming the file, for a store in memory and in a directory. The same in Chromium, for a bundled
// page: test/bundlers.test.js.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const pkg = fileURLToPath(new URL('..', import.meta.url));
let tmp, memloom;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-missing-asset-'));
  const nm = join(tmp, 'node_modules');
  // memloom's modules are copied (so that they resolve their dependencies from this project);
  // its wasm, SQL, schema modules and data are only read, so links do.
  const own = join(nm, 'memloom');
  mkdirSync(own, { recursive: true });
  cpSync(join(pkg, 'package.json'), join(own, 'package.json'));
  cpSync(join(pkg, 'src'), join(own, 'src'), { recursive: true });
  for (const dir of ['wasm', 'sql', 'data', 'schema']) symlinkSync(join(pkg, dir), join(own, dir), 'dir');
  // Every dependency as installed, but pglite-pgvector without its extension bundle.
  mkdirSync(join(nm, '@electric-sql'));
  for (const dep of ['@electric-sql/pglite', 'zod', 'commander', 'modern-tar']) symlinkSync(join(pkg, 'node_modules', dep), join(nm, dep), 'dir');
  const vec = join(nm, '@electric-sql/pglite-pgvector');
  cpSync(join(pkg, 'node_modules/@electric-sql/pglite-pgvector'), vec, { recursive: true, dereference: true });
  rmSync(join(vec, 'dist/vector.tar.gz'));
  assert.ok(!readdirSync(join(vec, 'dist')).includes('vector.tar.gz'));
  memloom = await import(pathToFileURL(join(own, 'src/entry-node.js')).href);
});

after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const MISSING = /^pgvector's vector\.tar\.gz is missing: .*memloom-missing-asset-[^/]+\/node_modules\/@electric-sql\/pglite-pgvector\/dist\/vector\.tar\.gz does not exist; reinstall @electric-sql\/pglite-pgvector \(npm install memloom/;

for (const where of ['memory', 'a directory']) {
  test(`a missing vector.tar.gz fails openStore (${where}) in under 5 s, naming the file`, async () => {
    const dir = where === 'memory' ? undefined : join(tmp, 'store');
    const started = performance.now();
    await assert.rejects(memloom.openStore(dir === undefined ? {} : { dir }), (e) => {
      assert.ok(e instanceof memloom.MemloomError, `a MemloomError, not ${e}`);
      assert.match(e.message, MISSING);
      return true;
    });
    const ms = performance.now() - started;
    assert.ok(ms < 5000, `failed after ${ms.toFixed(0)} ms`);
    // The directory store is not left locked (nor filled: the check comes before the template).
    if (dir) {
      assert.ok(!existsSync(join(dir, 'memloom.lock')), 'the lock is released');
      assert.ok(!existsSync(join(dir, 'PG_VERSION')), 'no data directory was made');
    }
    console.log(`# missing vector.tar.gz (${where}): failed in ${ms.toFixed(0)} ms`);
  });
}

test('the same layout with vector.tar.gz back opens a store (the test above is about the file)', async () => {
  cpSync(join(pkg, 'node_modules/@electric-sql/pglite-pgvector/dist/vector.tar.gz'), join(tmp, 'node_modules/@electric-sql/pglite-pgvector/dist/vector.tar.gz'));
  const store = await memloom.openStore({});
  try {
    await store.remember('Deploys freeze on Fridays', { key: 'deploy-freeze' });
    const { results } = await store.recall('deploy freeze', { limit: 1 });
    assert.equal(results[0].key, 'deploy-freeze');
  } finally {
    await store.close();
  }
});
