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
import { openStore } from '../src/entry-node.js';
import { openPglite } from '../src/db-pglite.js';
import { current, migrations } from '../sql/migrations.js';

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

test('catalog: a new directory store, filled from the template data directory, equals a fresh install', async () => {
  const { fillFromTemplate } = await import('../src/template-node.js');
  const { mkdtempSync, rmSync, statSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const fresh = await openStore({});
  const want = await rows(fresh.db);
  const wantMeta = (await fresh.db.query('SELECT * FROM memloom_meta')).rows;
  await fresh.close();
  const dir = join(mkdtempSync(join(tmpdir(), 'memloom-template-')), '.memloom');
  try {
    // The template is current (build-wasm.sh makes it): openStore's own fill would use it too.
    assert.equal(await fillFromTemplate(dir), true, 'the package has a current template (run scripts/build-wasm.sh)');
    for (const f of ['base', 'global/pg_control']) assert.equal(statSync(join(dir, f)).mode & 0o027, 0, `${f}: no group write, nothing for others (the archive's modes)`);
    const store = await openStore({ dir });
    const got = await rows(store.db);
    const meta = (await store.db.query('SELECT * FROM memloom_meta')).rows;
    await store.close();
    assert.deepEqual(
      { onlyTemplate: got.filter((r) => !want.includes(r)).slice(0, 6), onlyFresh: want.filter((r) => !got.includes(r)).slice(0, 6) },
      { onlyTemplate: [], onlyFresh: [] },
    );
    assert.equal(got.length, want.length);
    assert.deepEqual(meta, wantMeta, 'the same store record (embedder, schema version)');
  } finally {
    rmSync(dirname(dir), { recursive: true, force: true });
  }
});
