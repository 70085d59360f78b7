// Erasure that leaves nothing behind (issue 15, sql/0012_integrity.sql), through the CLI on
// both backends: unique tokens planted in memories (versions and keys), a file's chunks and the
// entities `index` extracts are forgotten by key, by id and with their whole namespace
// (`forget --namespace NS --yes`), and then occur 0 times in the store's data: on PostgreSQL a
// full `pg_dump --data-only` of the database, on PGlite every row of every table outside
// pg_catalog as text (the same tables), and after the namespace-wide forget (which ANALYZEs)
// pg_catalog too: the planner's samples (pg_statistic) keep a forgotten memory's lexemes until
// the next ANALYZE. The CLI reports the rows removed, and refuses a namespace-wide forget
// without --yes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/entry-node.js';
import { runCli } from './helpers.js';

const url = process.env.MEMLOOM_TEST_DATABASE_URL;
const noServer = url ? false : 'MEMLOOM_TEST_DATABASE_URL is not set';
const tmp = mkdtempSync(join(tmpdir(), 'memloom-erasure-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const count = (text, token) => text.split(token).length - 1;

/**
 * Every row of every table, as text: what `pg_dump --data-only` holds (the tables outside
 * pg_catalog), or with `catalogs` the system catalogs too (pg_statistic's sampled values).
 */
async function allRows(db, { catalogs = false } = {}) {
  const { rows: tables } = await db.query(
    `SELECT format('%I.%I', n.nspname, c.relname) AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind = 'r' AND n.nspname <> 'information_schema' AND (n.nspname <> 'pg_catalog' OR $1)`,
    [catalogs],
  );
  let text = '';
  for (const { t } of tables) {
    const { rows } = await db.query(`SELECT string_agg(x::text, E'\\n') AS s FROM ${t} x`);
    text += (rows[0].s ?? '') + '\n';
  }
  return text;
}

/** Bytes of every file under dir (heap, indexes, WAL), for the physical figures. */
function fileBytes(dir) {
  let n = 0;
  const token = Buffer.from('zqxv');
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const b = readFileSync(p);
        for (let i = b.indexOf(token); i !== -1; i = b.indexOf(token, i + 1)) n++;
      }
    }
  };
  walk(dir);
  return n;
}

function pgDump() {
  const r = spawnSync('/usr/lib/postgresql/15/bin/pg_dump', ['--data-only', '--no-password', '--dbname', url], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

const NOTES = '# Vault\n\nThe ZqxvId_Token opens the vault.\n\n## Other\n\nThe zqxvns_word rota is weekly.\n';
const ITEMS_MSG = /^forgot namespace (\S+): (\d+) items?, (\d+) mentions?, (\d+) entit(?:y|ies), (\d+) statistics rows?$/;

test('embedded (npm API): a token forgotten by key, by id and with its namespace is in no row', { timeout: 600_000 }, async () => {
  const dir = join(tmp, 'store');
  const ns = `zqxvns-embedded-${process.pid}`;
  const keep = await openStore({ dir, namespace: 'keep' });
  await keep.remember('A kept memory about deploys.');
  await keep.close();
  let store = await openStore({ dir, namespace: ns });
  const docs = join(tmp, 'docs-embedded');
  mkdirSync(docs, { recursive: true });
  writeFileSync(join(docs, 'notes.md'), NOTES);
  await store.remember('The plan uses zqxvkey_token first.', { key: 'plan-zqxvkey' });
  await store.remember('The plan uses zqxvkey_token second.', { key: 'plan-zqxvkey' });
  await store.remember('The zqxvns_word rota changed.', { key: 'rota' });
  await store.ingest(docs);
  await store.index();
  let text = await allRows(store.db);
  for (const t of ['zqxvkey_token', 'ZqxvId_Token', 'zqxvns_word', ns]) assert.ok(count(text, t) > 0, `${t} should be in the store before forget`);

  const q1 = async (sql) => Number((await store.db.query(sql, [ns])).rows[0].n);
  const mentions = await q1(`SELECT count(*) AS n FROM memloom_mentions m JOIN memloom_items i ON i.id = m.item_id WHERE i.namespace = $1 AND i.key = 'plan-zqxvkey'`);
  const only = await q1(`SELECT count(*) AS n FROM memloom_entities e WHERE e.namespace = $1 AND NOT EXISTS (
    SELECT 1 FROM memloom_mentions m JOIN memloom_items i ON i.id = m.item_id WHERE m.entity_id = e.id AND i.key IS DISTINCT FROM 'plan-zqxvkey')`);
  assert.ok(mentions > 0 && only > 0);
  assert.deepEqual(await store.forget({ key: 'plan-zqxvkey' }), { deleted: 2, mentions, entities: only });
  assert.equal(count(await allRows(store.db), 'zqxvkey'), 0, 'forgotten by key, still in the data');
  const hit = (await store.recall('ZqxvId_Token')).results.find((h) => h.content.includes('ZqxvId_Token'));
  assert.equal((await store.forget({ id: hit.id })).deleted, 1);
  assert.equal(count((await allRows(store.db)).toLowerCase(), 'zqxvid'), 0, 'forgotten by id, still in the data');

  await assert.rejects(store.forget({ all: true }), /needs namespace: "zqxvns-embedded-\d+" \(this store's namespace\) to confirm/);
  await assert.rejects(store.forget({ all: true, namespace: 'keep' }), /to confirm, not "keep"/);
  const before = await store.stats();
  const r = await store.forget({ all: true, namespace: ns });
  assert.equal(r.deleted, before.chunks + before.memories.active + before.memories.superseded);
  assert.equal(r.entities, before.entities);
  assert.ok(r.mentions > 0 && r.statistics > 0, JSON.stringify(r));
  text = await allRows(store.db);
  assert.equal(count(text.toLowerCase(), 'zqxv'), 0, 'a token or the namespace is still in the data');
  assert.ok(text.includes('A kept memory about deploys.'), 'the other namespace is untouched');
  // The namespace-wide forget sampled the planner statistics again: not even they hold a token.
  assert.equal(count((await allRows(store.db, { catalogs: true })).toLowerCase(), 'zqxv'), 0, 'pg_statistic still holds a token');
  assert.deepEqual(await store.forget({ all: true, namespace: ns }), { deleted: 0, mentions: 0, entities: 0, statistics: 0 });
  await store.close();
  // Physical removal (docs/SECURITY.md): the rows are gone, their bytes not yet.
  const dead = fileBytes(dir);
  store = await openStore({ dir, namespace: 'keep' });
  await store.db.exec('VACUUM FULL');
  await store.db.exec('CHECKPOINT');
  await store.close();
  process.stderr.write(
    `erasure (PGlite): ${JSON.stringify(r)} forgotten with the namespace, 0 occurrences left in the rows; token bytes in the data directory: ${dead} after forget, ${fileBytes(dir)} after VACUUM FULL + CHECKPOINT\n`,
  );
});

test('server (CLI): a token forgotten by key, by id and with its namespace is in no row of pg_dump', { skip: noServer, timeout: 300_000 }, async () => {
  const ns = `zqxvns-server-${process.pid}`;
  const cli = (args, space = ns) => runCli([...args, '--database-url', url, '--namespace', space]);
  const ok = (r) => {
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
  };
  ok(cli(['init']));
  const docs = join(tmp, 'docs-server');
  mkdirSync(docs, { recursive: true });
  writeFileSync(join(docs, 'notes.md'), NOTES);
  ok(cli(['remember', 'The plan uses zqxvkey_token first.', '--key', 'plan-zqxvkey']));
  ok(cli(['remember', 'The plan uses zqxvkey_token second.', '--key', 'plan-zqxvkey']));
  ok(cli(['remember', 'The zqxvns_word rota changed.', '--key', 'rota']));
  ok(cli(['ingest', docs]));
  ok(cli(['index', '--offline']));
  ok(cli(['remember', 'A kept memory about deploys.'], `keep-${process.pid}`));
  let text = pgDump();
  for (const t of ['zqxvkey_token', 'ZqxvId_Token', 'zqxvns_word', ns]) assert.ok(count(text, t) > 0, `${t} should be in the dump before forget`);

  assert.equal(ok(cli(['forget', '--key', 'plan-zqxvkey'])), 'forgot 2 items');
  assert.equal(count(pgDump(), 'zqxvkey'), 0, 'forgotten by key, still in the dump');
  const hit = JSON.parse(ok(cli(['recall', 'ZqxvId_Token', '--json']))).results.find((h) => h.content.includes('ZqxvId_Token'));
  assert.equal(ok(cli(['forget', '--id', String(hit.id)])), 'forgot 1 item');
  assert.equal(count(pgDump().toLowerCase(), 'zqxvid'), 0, 'forgotten by id, still in the dump');

  const refused = cli(['forget']);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /forget --namespace zqxvns-\S+ deletes every item, memory, entity and statistic .* add --yes/);
  assert.ok(count(pgDump(), 'zqxvns') > 0, 'nothing forgotten without --yes');
  const before = JSON.parse(ok(cli(['stats', '--json'])));
  const out = ok(cli(['forget', '--yes']));
  const m = out.match(ITEMS_MSG);
  assert.ok(m, out);
  assert.equal(m[1], ns);
  assert.equal(Number(m[2]), before.chunks + before.memories.active + before.memories.superseded, out);
  assert.equal(Number(m[4]), before.entities, out);
  assert.ok(Number(m[3]) > 0 && Number(m[5]) > 0, out);
  text = pgDump();
  assert.equal(count(text.toLowerCase(), 'zqxv'), 0, 'a token or the namespace is still in the dump');
  assert.ok(text.includes('A kept memory about deploys.'), 'the other namespace is untouched');
  assert.equal(ok(cli(['forget', '--yes'])), `forgot namespace ${ns}: 0 items, 0 mentions, 0 entities, 0 statistics rows`);
  process.stderr.write(`erasure (server): ${out}; 0 occurrences left in pg_dump --data-only\n`);
});

test('forget --yes alone or with a key is a usage error', () => {
  const r = runCli(['forget', '--yes', '--key', 'k', '--store', join(tmp, 'nowhere')]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--yes confirms forgetting a whole namespace/);
});
