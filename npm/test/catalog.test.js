// The schema on PGlite (PostgreSQL 18): a store upgraded from the first frozen migration
// (sql/migrations/) has exactly the catalog of a fresh install of the current definition
// (sql/memloom/), as tests/catalog/catalog.sql reads it (functions with their attributes,
// comments, columns, constraints, indexes, triggers, policies, grants, the ledger). The same
// check on PostgreSQL 15, from every released version: crates/memloom-sql/tests/catalog.rs.
// In-memory stores, no network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hashEmbedder, openStore } from '../src/entry-node.js';
import { openPglite } from '../src/db-pglite.js';
import { current, migrations } from '../sql/migrations.js';
import { ledger } from '../sql/ledger.js';

const CATALOG = readFileSync(new URL('../../tests/catalog/catalog.sql', import.meta.url), 'utf8');
const LEDGER = `CREATE TABLE memloom_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now())`;

const rows = async (db) => (await db.query(CATALOG)).rows.map((r) => `[${r.section}] ${r.object}\n${r.detail}`);

test('catalog: a store upgraded from 0001 on PGlite equals a fresh install', async () => {
  assert.ok(current.length > 0 && migrations.length > 1, 'the package carries both the current definition and the migrations');
  const fresh = await openStore({});
  const want = await rows(fresh.db);
  const ledger = (await fresh.db.query('SELECT version, name, checksum FROM memloom_migrations ORDER BY version')).rows;
  await fresh.close();
  assert.deepEqual(
    ledger.map((r) => [Number(r.version), r.name, r.checksum]),
    migrations.map((m) => [m.version, m.name, m.checksum]),
    'a fresh install records every frozen migration',
  );
  assert.deepEqual(
    ledger.map((m) => [m.version, m.name, m.checksum]),
    migrations.map((m) => [m.version, m.name, m.checksum]),
    'sql/ledger.js lists the migrations of sql/migrations.js (run scripts/build-wasm.sh)',
  );
  for (const section of ['function', 'column', 'index', 'trigger', 'policy', 'relation']) {
    assert.ok(want.some((r) => r.startsWith(`[${section}]`)), `the catalog has ${section} rows`);
  }

  // A store as the first release left it: 0001 applied and recorded, nothing else.
  const old = await openPglite(undefined);
  await old.transaction(async (tx) => {
    await tx.exec(LEDGER);
    await tx.exec(migrations[0].sql);
    await tx.query('INSERT INTO memloom_migrations (version, name, checksum) VALUES ($1, $2, $3)', [migrations[0].version, migrations[0].name, migrations[0].checksum]);
  });
  const upgraded = await openStore({}, async () => ({ openPglite: async () => old }));
  const got = await rows(upgraded.db);
  await upgraded.close();

  const onlyUpgraded = got.filter((r) => !want.includes(r));
  const onlyFresh = want.filter((r) => !got.includes(r));
  assert.deepEqual(
    { onlyUpgraded: onlyUpgraded.slice(0, 6), onlyFresh: onlyFresh.slice(0, 6) },
    { onlyUpgraded: [], onlyFresh: [] },
    'a schema change goes into sql/memloom/ AND a new frozen migration (sql/README.md)',
  );
  assert.equal(got.length, want.length);
});

// A new directory store starts from the template data directory (template-node.js); with the
// default embedder, from its overlay too (memloom_init_store done at build time): either way the
// store is the one a fresh install makes.
for (const [what, embedder] of [
  ['the default embedder: the template and its hash-v1 overlay', undefined],
  ['another embedder: the template, initialised at open', { id: 'test-v1', name: 'test', version: 1, dims: 12, embed: async (texts) => texts.map(() => new Float32Array(12).fill(0.5)) }],
]) {
  test(`catalog: a new directory store for ${what}, equals a fresh install`, async () => {
    const { fillFromTemplate } = await import('../src/template-node.js');
    const { mkdtempSync, readdirSync, rmSync, statSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const fresh = await openStore({ embedder });
    const want = await rows(fresh.db);
    const wantMeta = (await fresh.db.query('SELECT * FROM memloom_meta')).rows;
    await fresh.close();
    const root = mkdtempSync(join(tmpdir(), 'memloom-template-'));
    try {
      // The template is current (build-wasm.sh makes it): openStore's own fill uses it too.
      const probe = join(root, 'probe');
      assert.equal(await fillFromTemplate(probe, { embedder: embedder ?? hashEmbedder() }), true, 'the package has a current template (run scripts/build-wasm.sh)');
      for (const f of ['base', 'global/pg_control']) assert.equal(statSync(join(probe, f)).mode & 0o027, 0, `${f}: no group write, nothing for others (the archive's modes)`);
      const raw = await openPglite(probe);
      const [recorded] = (await raw.query('SELECT embedder_name FROM memloom_meta')).rows;
      await raw.close();
      assert.equal(recorded.embedder_name, embedder ? null : 'hash', embedder ? 'the template has no embedder yet' : 'the overlay recorded hash-v1 (no memloom_init_store at open)');
      const dir = join(root, '.memloom');
      const store = await openStore({ dir, embedder });
      const got = await rows(store.db);
      const meta = (await store.db.query('SELECT * FROM memloom_meta')).rows;
      const r = await store.remember('the template store takes writes', { key: 'template' });
      assert.equal((await store.recall('template store writes')).results[0].id, r.id);
      await store.close();
      assert.deepEqual(
        { onlyTemplate: got.filter((r) => !want.includes(r)).slice(0, 6), onlyFresh: want.filter((r) => !got.includes(r)).slice(0, 6) },
        { onlyTemplate: [], onlyFresh: [] },
      );
      assert.equal(got.length, want.length);
      assert.deepEqual(meta, wantMeta, 'the same store record (embedder, schema version)');
      assert.ok(!readdirSync(root).some((f) => f.startsWith('.memloom-template-')), 'no temporary folder left');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
}

// An open of a current store checks the store's ledger against sql/ledger.js and needs no SQL
// text: sql/migrations.js (about 770 kB of module) is imported only to install or migrate
// (store/migrate.js). A child process lists the package's modules it loads.
test('catalog: opening a current store does not load the SQL texts; a new store does', async () => {
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const root = mkdtempSync(join(tmpdir(), 'memloom-ledger-'));
  const hook = `data:text/javascript,${encodeURIComponent(`
    import { register } from 'node:module';
    register('data:text/javascript,' + encodeURIComponent(
      'export async function load(url, ctx, next) { if (url.includes("/sql/")) process.stderr.write("LOADED " + url + String.fromCharCode(10)); return next(url, ctx); }'));`)}`;
  const loaded = (dir) => {
    const r = spawnSync(
      process.execPath,
      ['--import', hook, '--input-type=module', '-e', `const { openStore } = await import(${JSON.stringify(new URL('../src/entry-node.js', import.meta.url).href)}); await (await openStore(${dir ? `{ dir: ${JSON.stringify(dir)} }` : '{}'})).close();`],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    return (r.stderr.match(/^LOADED \S+/gm) ?? []).map((l) => l.replace(/^LOADED .*\/sql\//, 'sql/'));
  };
  try {
    assert.deepEqual(loaded(undefined).sort(), ['sql/ledger.js', 'sql/migrations.js'], 'a new in-memory store installs the schema from the SQL texts');
    const dir = join(root, '.memloom');
    const store = await openStore({ dir });
    await store.close();
    assert.deepEqual(loaded(dir), ['sql/ledger.js'], 'an existing current store: the ledger alone');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
