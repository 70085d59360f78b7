// static-v2 on a PostgreSQL server (MEMLOOM_TEST_DATABASE_URL, a superuser: each test makes a
// database of its own, since a store holds one embedder): initialising the store also loads
// the token table into it (sql/memloom/13_static_table.sql), which the edge worker embeds with;
// reopening does not load it again; the rows are the shipped file's. The worker's own use of it
// is tests/worker/static/ (golden vectors in workerd).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openStore, staticEmbedder, tokenizeStatic } from '../src/entry-node.js';

const url = process.env.MEMLOOM_TEST_DATABASE_URL;
const skip = url ? false : 'MEMLOOM_TEST_DATABASE_URL is not set';
const table = readFileSync(fileURLToPath(new URL('../data/static-v1.bin', import.meta.url)));

async function withDatabase(fn) {
  const name = `memloom_static_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${name}`;
  try {
    await fn(dbUrl.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

test('a static-v2 server store holds the token table the worker needs, loaded once', { skip }, async () => {
  await withDatabase(async (dbUrl) => {
    let store = await openStore({ url: dbUrl, embedder: staticEmbedder() });
    const q = (sql, params) => store.db.query(sql, params).then((r) => r.rows);
    const [meta] = await q('SELECT checksum::text AS checksum, unk_id, first_id, octet_length(vocabulary) AS n, loaded_at FROM memloom_static_table');
    // The header's checksum (bytes 32..40, little-endian u64) and sizes of the shipped file.
    assert.equal(meta.checksum, table.readBigUInt64LE(32).toString());
    assert.equal(meta.unk_id, table.readUInt32LE(24));
    assert.equal(meta.first_id, table.readUInt32LE(20));
    assert.equal(meta.n, table.readUInt32LE(28) - 1); // without the final newline
    // The rows of a text's tokens are the file's rows.
    const ids = Array.from(tokenizeStatic('the temporary directory of a child process'));
    const rows = await q('SELECT token_id, weight, vals FROM memloom_static_rows_for($1) ORDER BY token_id', [ids]);
    assert.equal(rows.length, new Set(ids.filter((id) => id >= meta.first_id)).size);
    const vocabLen = table.readUInt32LE(28);
    const nrows = table.readUInt32LE(16) - meta.first_id;
    for (const r of rows) {
      const k = r.token_id - meta.first_id;
      assert.equal(r.weight, table.readUInt16LE(48 + vocabLen + 2 * k), `weight of ${r.token_id}`);
      const at = 48 + vocabLen + 2 * nrows + 256 * k;
      assert.deepEqual(Buffer.from(r.vals), table.subarray(at, at + 256), `row of ${r.token_id}`);
    }
    await store.close();
    // Reopening finds it there: not loaded again.
    store = await openStore({ url: dbUrl, embedder: staticEmbedder() });
    const [again] = await store.db.query('SELECT loaded_at FROM memloom_static_table').then((r) => r.rows);
    assert.deepEqual(again.loaded_at, meta.loaded_at);
    await store.close();
  });
});

test('a hash-v1 server store holds no table', { skip }, async () => {
  await withDatabase(async (dbUrl) => {
    const store = await openStore({ url: dbUrl });
    const { rows } = await store.db.query('SELECT count(*)::int AS n FROM memloom_static_rows');
    assert.equal(rows[0].n, 0);
    await store.close();
  });
});
