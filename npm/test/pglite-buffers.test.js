// The embedded store's buffer pool (src/db-pglite.js, EMBEDDED_SHARED_BUFFERS): PGlite starts
// with its own parameters plus memloom's shared_buffers, and a caller's startParams replace both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_SHARED_BUFFERS, openPglite } from '../src/db-pglite.js';

const setting = async (db, name) => (await db.query(`SELECT current_setting('${name}') AS v`)).rows[0].v;

test(`an embedded store runs with shared_buffers ${EMBEDDED_SHARED_BUFFERS} and PGlite's own start parameters`, async () => {
  const db = await openPglite(undefined);
  try {
    assert.equal(await setting(db, 'shared_buffers'), EMBEDDED_SHARED_BUFFERS);
    assert.equal(await setting(db, 'max_parallel_workers_per_gather'), '0', "PGlite's defaults are kept");
    assert.equal(await setting(db, 'search_path'), 'public');
  } finally {
    await db.close();
  }
});

test("a caller's startParams replace memloom's, as they replace PGlite's", async () => {
  const db = await openPglite(undefined, { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] });
  try {
    assert.equal(await setting(db, 'shared_buffers'), '16MB');
  } finally {
    await db.close();
  }
});
