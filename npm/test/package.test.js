// The package as npm publishes it: the generated types pin the public API (test/types/api.ts,
// wrong usages included), `npm pack` ships exactly the files listed here (no build scripts, the
// SQL once, the licence texts), publint and @arethetypeswrong/cli pass on the packed tarball
// (offline: both read the local .tgz), openStore refuses unknown options, optional dependencies
// fail with the package to install, and the core entry never reaches the store or PGlite.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, MemloomError } from '../src/entry-node.js';
import { importOptional } from '../src/optional.js';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => join(pkgDir, 'node_modules/.bin', name);
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
let tmp, tarball;
const packed = { files: [], size: 0 };

/** Every file of the published package. A change here is a change to what users install. */
const PACKED = [
  'LICENSE-APACHE',
  'LICENSE-MIT',
  'README.md',
  'bin/memloom.js',
  'data/NOTICE',
  'data/pgdata-template-hash-v1.json',
  'data/pgdata-template-hash-v1.tar.gz',
  'data/pgdata-template.json',
  'data/pgdata-template.tar.gz',
  'data/static-v1.bin',
  'package.json',
  'schema/recall-response.js',
  'schema/limits.js',
  'schema/embedders.js',
  'sql/ledger.js',
  'sql/migrations.js',
  'src/ai.js',
  'src/assets.js',
  'src/cli/args.js',
  'src/cli/commands/completion.js',
  'src/cli/commands/config.js',
  'src/cli/commands/daemon.js',
  'src/cli/commands/eval.js',
  'src/cli/commands/export.js',
  'src/cli/commands/forget.js',
  'src/cli/commands/history.js',
  'src/cli/commands/import.js',
  'src/cli/commands/index-cmd.js',
  'src/cli/commands/index.js',
  'src/cli/commands/ingest.js',
  'src/cli/commands/init.js',
  'src/cli/commands/mcp.js',
  'src/cli/commands/recall.js',
  'src/cli/commands/remember.js',
  'src/cli/commands/stats.js',
  'src/cli/completion.js',
  'src/cli/context.js',
  'src/cli/jsonl.js',
  'src/cli/main.js',
  'src/cli/output.js',
  'src/cli/progress.js',
  'src/cli/spec.js',
  'src/cli/warm-server.js',
  'src/cli/warm-socket.js',
  'src/cli/warm.js',
  'src/config-node.js',
  'src/config-paths-node.js',
  'src/core.js',
  'src/db-pg.js',
  'src/db-pglite.js',
  'src/decode.js',
  'src/embedders.js',
  'src/entry-browser.js',
  'src/entry-core-browser.js',
  'src/entry-core-node.js',
  'src/entry-core-workerd.js',
  'src/entry-node.js',
  'src/entry-workerd.js',
  'src/errors.js',
  'src/eval.js',
  'src/export-node.js',
  'src/export.js',
  'src/extractors.js',
  'src/files-node.js',
  'src/in-flight.js',
  'src/langchain.js',
  'src/lock-node.js',
  'src/mcp.js',
  'src/optional.js',
  'src/recall-response.js',
  'src/settings.js',
  'src/store.js',
  'src/store/embedder.js',
  'src/store/entities.js',
  'src/store/ingest.js',
  'src/store/input.js',
  'src/store/maintenance.js',
  'src/store/memories.js',
  'src/store/migrate.js',
  'src/store/open.js',
  'src/store/recall.js',
  'src/store/stats.js',
  'src/store/store.js',
  'src/store/vectors.js',
  'src/template-node.js',
  'src/tools.js',
  'src/types.js',
  'src/warm-node.js',
  'types/schema/recall-response.d.ts',
  'types/schema/limits.d.ts',
  'types/schema/embedders.d.ts',
  'types/sql/ledger.d.ts',
  'types/sql/migrations.d.ts',
  'types/src/ai.d.ts',
  'types/src/assets.d.ts',
  'types/src/core.d.ts',
  'types/src/db-pg.d.ts',
  'types/src/db-pglite.d.ts',
  'types/src/decode.d.ts',
  'types/src/embedders.d.ts',
  'types/src/entry-browser.d.ts',
  'types/src/entry-core-browser.d.ts',
  'types/src/entry-core-node.d.ts',
  'types/src/entry-core-workerd.d.ts',
  'types/src/entry-node.d.ts',
  'types/src/entry-workerd.d.ts',
  'types/src/errors.d.ts',
  'types/src/export-node.d.ts',
  'types/src/export.d.ts',
  'types/src/extractors.d.ts',
  'types/src/files-node.d.ts',
  'types/src/in-flight.d.ts',
  'types/src/langchain.d.ts',
  'types/src/lock-node.d.ts',
  'types/src/optional.d.ts',
  'types/src/recall-response.d.ts',
  'types/src/settings.d.ts',
  'types/src/store.d.ts',
  'types/src/store/embedder.d.ts',
  'types/src/store/entities.d.ts',
  'types/src/store/ingest.d.ts',
  'types/src/store/input.d.ts',
  'types/src/store/maintenance.d.ts',
  'types/src/store/memories.d.ts',
  'types/src/store/migrate.d.ts',
  'types/src/store/open.d.ts',
  'types/src/store/recall.d.ts',
  'types/src/store/stats.d.ts',
  'types/src/store/store.d.ts',
  'types/src/store/vectors.d.ts',
  'types/src/template-node.d.ts',
  'types/src/tools.d.ts',
  'types/src/types.d.ts',
  'types/src/warm-node.d.ts',
  'types/wasm/memloom_wasm.d.ts',
  'wasm/memloom_wasm.js',
  'wasm/memloom_wasm_bg.wasm',
];

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: pkgDir, encoding: 'utf8', ...opts });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-pack-'));
  const r = run('npm', ['pack', '--json', '--pack-destination', tmp]);
  assert.equal(r.status, 0, r.out);
  const [info] = JSON.parse(r.out.slice(r.out.indexOf('[')));
  tarball = join(tmp, info.filename);
  packed.files = info.files.map((f) => f.path).sort();
  packed.size = info.size;
});

after(() => rmSync(tmp, { recursive: true, force: true }));

test('the generated types pin the public API (test/types/api.ts compiles; its @ts-expect-error lines do not)', () => {
  const r = run(bin('tsc'), ['-p', 'test/types']);
  assert.equal(r.status, 0, `tsc -p test/types failed:\n${r.out}`);
});

test('npm pack ships exactly the pinned files: no build scripts, the SQL once, the licences', () => {
  assert.deepEqual(packed.files, [...PACKED].sort());
  assert.ok(!packed.files.some((f) => f.endsWith('.sql')), 'the .sql files ship only inside sql/migrations.js');
  assert.ok(!packed.files.some((f) => /gen-/.test(f)), 'no build scripts');
  console.log(`# packed: ${packed.files.length} files, ${(packed.size / 1e6).toFixed(2)} MB compressed`);
});

test('publint --strict on the packed tarball', () => {
  const r = run(bin('publint'), ['run', tarball, '--strict']);
  console.log(r.out.trim().replace(/^/gm, '# '));
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /All good/);
});

test('@arethetypeswrong/cli on the packed tarball (ESM-only profile: require() of ESM needs Node >= 20.19)', () => {
  const r = run(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'table-flipped']);
  console.log(r.out.trim().replace(/^/gm, '# '));
  assert.equal(r.status, 0, r.out);
});

test('package.json: engines say where require() of ESM works, heavy dependencies are optional peers', () => {
  assert.equal(pkg.engines.node, '^20.19.0 || >=22.12.0');
  for (const name of ['@modelcontextprotocol/sdk', 'pg', '@langchain/core', 'ai']) {
    assert.ok(pkg.peerDependencies[name], `${name} is a peer dependency`);
    assert.equal(pkg.peerDependenciesMeta[name]?.optional, true, `${name} is optional`);
    assert.equal(pkg.dependencies[name], undefined, `${name} is not a dependency`);
  }
  assert.equal(pkg.license, 'MIT OR Apache-2.0');
  assert.ok(pkg.keywords.length > 0);
});

test('the npm README works on the registry page: no relative links, no contributor commands', () => {
  const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
  const links = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]);
  for (const l of links) assert.match(l, /^https?:\/\//, `relative link ${l} breaks on the registry page`);
  assert.doesNotMatch(readme, /bash scripts\/|DESIGN\.md|\.\.\/docs/);
  for (const section of ['Install', 'Runtimes', 'Bundlers', 'Store API', 'Adapters', 'CLI', 'MCP']) {
    assert.match(readme, new RegExp(`^#+ ${section}`, 'm'), `README has a ${section} section`);
  }
  for (const runtime of ['Node', 'Browsers', 'Cloudflare Workers']) assert.match(readme, new RegExp(`^\\| ${runtime}`, 'm'), `README's runtime table has ${runtime}`);
  // Files it names that users would look for in the package are in it.
  for (const f of ['LICENSE-MIT', 'LICENSE-APACHE', 'data/NOTICE']) {
    assert.ok(readme.includes(f) && PACKED.includes(f), `${f} is named and shipped`);
  }
});

test('openStore refuses unknown options, naming the key and the valid ones', async () => {
  await assert.rejects(openStore({ directory: 'x' }), (e) => {
    assert.ok(e instanceof MemloomError);
    assert.equal(e.message, 'openStore: unknown option "directory" (valid: dir, url, namespace, embedder, create, pglite, assets)');
    return true;
  });
  await assert.rejects(openStore({ dir: 'x', nameSpace: 'a', pgLite: {} }), /unknown options "nameSpace", "pgLite" \(valid: dir, /);
  await assert.rejects(openStore({ create: 'no' }), /openStore: option create: Expected boolean, received string/);
  await assert.rejects(openStore({ embedder: { id: 'x' } }), /embedder must be an Embedder .*wrong or missing: name, version, dims, embed/);
  await assert.rejects(openStore(null), /openStore takes an options object/);
});

test('a missing optional dependency says which package to install', async () => {
  await assert.rejects(importOptional('memloom-test-absent-package/sub.js', 'the widget'), (e) => {
    assert.ok(e instanceof MemloomError);
    assert.equal(e.message, 'the widget needs the package memloom-test-absent-package/sub.js, which is not installed; run: npm install memloom-test-absent-package/sub.js');
    return true;
  });
});

/** Every module a module reaches through static and dynamic imports (relative and bare). */
function importGraph(entry) {
  const seen = new Set();
  const bare = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
      const spec = m[1];
      if (spec.startsWith('.')) {
        const next = resolve(dirname(file), spec);
        if (next.endsWith('.js')) visit(next);
      } else bare.add(spec);
    }
  };
  visit(entry);
  return { files: [...seen].map((f) => f.slice(pkgDir.length)), bare: [...bare] };
}

test('memloom/core reaches neither the store nor PGlite nor any dependency', () => {
  for (const runtime of ['node', 'browser', 'workerd']) {
    const exp = pkg.exports['./core'][runtime].default;
    const g = importGraph(join(pkgDir, exp));
    assert.ok(!g.files.some((f) => /store|db-|mcp|template/.test(f)), `${exp} reaches ${g.files.join(', ')}`);
    assert.deepEqual(g.bare.filter((b) => !b.startsWith('node:')), [], `${exp} imports no package`);
  }
});
