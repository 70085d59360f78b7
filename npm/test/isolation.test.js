// Tenant isolation in the database (sql/memloom/10_security.sql) on a PostgreSQL
// server (MEMLOOM_TEST_DATABASE_URL, a superuser that creates the tenant roles): two
// namespaces, each written through the CLI as its own non-superuser role granted only that
// namespace, then attempts by A's role to read or overwrite B's rows through the CLI, the npm
// API and raw SQL (no WHERE clause, naming B, setting the namespace to B). Every attempt must
// fail or see nothing: the figure "isolation attempts, 0 succeeded" in docs/SECURITY.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { openStore } from '../src/entry-node.js';
import { runCli, fixtures } from './helpers.js';
import { join } from 'node:path';

const url = process.env.MEMLOOM_TEST_DATABASE_URL;
const skip = url ? false : 'MEMLOOM_TEST_DATABASE_URL is not set';
const ROLE = 'memloom_rls_test_app';
const ROLE_B = 'memloom_rls_test_app_b';
const SECRET_B = 'team B secret: the vault code is 7741-quokka';
const A = `iso-a-${process.pid}`;
const B = `iso-b-${process.pid}`;
let admin, appUrl, appUrlB;
let attempts = 0;
let succeeded = 0;

/** One isolation attempt: `leaked` is true when it got or changed the other's rows. */
function attempt(what, leaked) {
  attempts++;
  if (leaked) succeeded++;
  assert.ok(!leaked, `isolation broken: ${what}`);
}

before(async () => {
  if (!url) return;
  assert.equal(runCli(['init', '--database-url', url]).status, 0);
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  // One role per tenant, as docs/SECURITY.md provisions them: A's role may work in A only.
  for (const [role, ns] of [[ROLE, A], [ROLE_B, B]]) {
    await admin.query(`DO $$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${role}') THEN
        CREATE ROLE ${role} LOGIN NOSUPERUSER NOBYPASSRLS;
      END IF; END $$`);
    await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
    await admin.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    await admin.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO ${role}`);
    await admin.query(`SELECT memloom_grant_namespace($1, $2)`, [role, ns]);
  }
  const urlOf = (role) => {
    const u = new URL(url);
    u.username = role;
    return u.toString();
  };
  appUrl = urlOf(ROLE);
  appUrlB = urlOf(ROLE_B);
  const as = (ns, args) => runCli([...args, '--database-url', ns === A ? appUrl : appUrlB, '--namespace', ns]);
  for (const [ns, secret] of [[A, 'team A note: deploys freeze on Fridays'], [B, SECRET_B]]) {
    let r = as(ns, ['ingest', join(fixtures, 'docs')]);
    assert.equal(r.status, 0, r.stderr);
    r = as(ns, ['remember', secret, '--key', 'secret']);
    assert.equal(r.status, 0, r.stderr);
    r = as(ns, ['index']);
    assert.equal(r.status, 0, r.stderr);
  }
});

after(async () => {
  if (!admin) return;
  process.stderr.write(`isolation: ${attempts} attempts to read or overwrite another namespace, ${succeeded} succeeded\n`);
  await admin.end();
});

const countOf = async (ns) =>
  (await admin.query(`SELECT count(*)::int AS n, string_agg(content, '|' ORDER BY id) AS c FROM memloom_items WHERE namespace = $1`, [ns])).rows[0];

test('CLI as the app role: namespace A never sees or changes B', { skip }, async () => {
  const before = await countOf(B);
  const as = (args) => runCli([...args, '--database-url', appUrl, '--namespace', A]);
  for (const q of ['vault code 7741-quokka', 'quokka', 'team B secret', '7741', "' OR namespace <> '' --"]) {
    const r = as(['recall', q, '--json', '--limit', '50']);
    assert.equal(r.status, 0, r.stderr);
    attempt(`recall ${q}`, JSON.parse(r.stdout).results.some((x) => x.content.includes('quokka')));
  }
  let r = as(['history', 'secret', '--json']);
  attempt('history of B\'s key from A', r.stdout.includes('quokka'));
  // A's own key (one version): the count is real, so the checks of B's below can fail.
  r = as(['forget', '--key', 'secret']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'forgot 1 item');
  r = as(['remember', 'overwritten by A', '--key', 'secret']);
  assert.equal(r.status, 0, r.stderr);
  // Forgetting by id: B's memory id, named from A.
  const bId = (await admin.query(`SELECT id FROM memloom_items WHERE namespace = $1 AND key = 'secret'`, [B])).rows[0].id;
  r = as(['forget', '--id', String(bId)]);
  assert.equal(r.status, 0, r.stderr);
  attempt('forget B\'s id from A', r.stdout.trim() !== 'forgot 0 items');
  r = as(['stats', '--json']);
  attempt('stats of A count B', JSON.parse(r.stdout).memories.active > 1);
  // A's role naming B on the command line (a shared server, `--namespace B`): refused at open.
  for (const args of [['recall', 'vault code quokka', '--json'], ['history', 'secret', '--json'], ['stats', '--json']]) {
    r = runCli([...args, '--database-url', appUrl, '--namespace', B]);
    attempt(`CLI ${args[0]} --namespace B as A's role`, r.status === 0 || r.stdout.includes('quokka'));
    assert.match(r.stderr, /is not granted namespace/, r.stderr);
  }
  attempt('B unchanged after A forgot and rewrote its key', JSON.stringify(await countOf(B)) !== JSON.stringify(before));
});

test('npm API as the app role: reads and writes stay in the store\'s namespace', { skip }, async () => {
  const before = await countOf(B);
  const s = await openStore({ url: appUrl, namespace: A });
  try {
    const res = await s.recall('vault code quokka', { limit: 50 });
    attempt('API recall', res.results.some((x) => x.content.includes('quokka')));
    attempt('API history', (await s.history('secret')).some((h) => h.content.includes('quokka')));
    attempt('API memories', (await s.memories({ limit: 1000 })).some((m) => m.content.includes('quokka')));
    const bId = Number((await admin.query(`SELECT id FROM memloom_items WHERE namespace = $1 AND key = 'secret'`, [B])).rows[0].id);
    attempt('API forget by id', (await s.forget({ id: bId })).deleted !== 0);
    // Control: the same call counts A's own rows (two versions of a key).
    await s.remember('A note to forget', { key: 'api-own' });
    await s.remember('A note to forget, revised', { key: 'api-own' });
    assert.equal((await s.forget({ key: 'api-own' })).deleted, 2);
    // The store's own connection, raw SQL: no WHERE clause at all.
    const db = s.db;
    let rows = (await db.query(`SELECT namespace, content FROM memloom_items`)).rows;
    attempt('raw SELECT without WHERE (items)', rows.some((x) => x.namespace !== A));
    rows = (await db.query(`SELECT namespace FROM memloom_entities`)).rows;
    attempt('raw SELECT without WHERE (entities)', rows.some((x) => x.namespace !== A));
    const aItems = (await db.query(`SELECT count(*)::int AS n FROM memloom_items`)).rows[0].n;
    rows = (await db.query(`SELECT count(*)::int AS n FROM memloom_mentions`)).rows;
    const mentionsA = (await admin.query(`SELECT count(*)::int AS n FROM memloom_mentions m JOIN memloom_items i ON i.id = m.item_id WHERE i.namespace = $1`, [A])).rows[0].n;
    attempt('raw SELECT without WHERE (mentions)', rows[0].n !== mentionsA);
    rows = (await db.query(`SELECT * FROM memloom_items WHERE namespace = $1`, [B])).rows;
    attempt('raw SELECT naming B', rows.length > 0);
    let r = await db.query(`UPDATE memloom_items SET content = content || ' (edited by A)'`);
    attempt('raw UPDATE without WHERE', Number(r.rowCount ?? r.affectedRows) !== aItems);
    r = await db.query(`UPDATE memloom_items SET content = 'pwned' WHERE namespace = $1`, [B]);
    attempt('raw UPDATE naming B', Number(r.rowCount) > 0);
    r = await db.query(`DELETE FROM memloom_mentions WHERE item_id IN (SELECT id FROM memloom_items WHERE namespace = $1)`, [B]);
    attempt('raw DELETE of B\'s mentions', Number(r.rowCount) > 0);
    r = await db.query(`DELETE FROM memloom_entities WHERE namespace = $1`, [B]);
    attempt('raw DELETE of B\'s entities', Number(r.rowCount) > 0);
    for (const [what, sql, params] of [
      ['raw INSERT into B', `INSERT INTO memloom_items (namespace, kind, content, embedding) SELECT $1, 'memory', 'planted', embedding FROM memloom_items LIMIT 1`, [B]],
      ['raw UPDATE moving a row to B', `UPDATE memloom_items SET namespace = $1`, [B]],
      ['memloom_remember into B', `SELECT * FROM memloom_remember($1, 'secret', 'planted by A', (SELECT embedding FROM memloom_items LIMIT 1))`, [B]],
      ['raw INSERT of an entity in B', `INSERT INTO memloom_entities (namespace, name, kind, embedding) SELECT $1, 'planted', 'topic', embedding FROM memloom_items LIMIT 1`, [B]],
      ['resetting the setting', `SELECT set_config('memloom.namespace', '', false); SELECT 1`, []],
      ['setting the namespace to B', null, []],
      ['RESET of the setting', null, []],
    ]) {
      let leaked = false;
      try {
        if (what === 'resetting the setting') {
          // Unset, the session sees nothing at all (then restore).
          await db.query(`SELECT set_config('memloom.namespace', '', false)`);
          leaked = (await db.query(`SELECT count(*)::int AS n FROM memloom_items`)).rows[0].n > 0;
          await db.query(`SELECT set_config('memloom.namespace', $1, false)`, [A]);
        } else if (what === 'setting the namespace to B') {
          // The setting names B, but A's role is not granted B: still nothing of B's.
          await db.query(`SELECT set_config('memloom.namespace', $1, false)`, [B]);
          const n = (await db.query(`SELECT count(*)::int AS n FROM memloom_items WHERE namespace = $1`, [B])).rows[0].n;
          const m = (await db.query(`SELECT count(*)::int AS n FROM memloom_entities`)).rows[0].n;
          leaked = n > 0 || m > 0;
          await db.query(`SELECT set_config('memloom.namespace', $1, false)`, [A]);
        } else if (what === 'RESET of the setting') {
          await db.query(`RESET memloom.namespace`);
          leaked = (await db.query(`SELECT count(*)::int AS n FROM memloom_items`)).rows[0].n > 0;
          await db.query(`SELECT set_config('memloom.namespace', $1, false)`, [A]);
        } else {
          const res = await db.query(sql, params);
          leaked = Number(res.rowCount ?? 0) > 0 || res.rows?.length > 0;
        }
      } catch (e) {
        assert.match(e.message, /row-level security|violates/, what);
      }
      attempt(what, leaked);
    }
    // memloom_fuse (SECURITY DEFINER since sql/0008) naming B from A's session, with the
    // setting at A and at B: refused before it reads anything.
    const vec = (await db.query(`SELECT embedding::text AS e FROM memloom_items LIMIT 1`)).rows[0].e;
    for (const setting of [A, B]) {
      await db.query(`SELECT set_config('memloom.namespace', $1, false)`, [setting]);
      let leaked = false;
      try {
        rows = (await db.query(`SELECT * FROM memloom_fuse('quokka vault', $1::vector, $2, 50)`, [vec, B])).rows;
        leaked = rows.length > 0;
      } catch (e) {
        assert.match(e.message, /not this session's|not granted namespace/, e.message);
      }
      attempt(`memloom_fuse naming B, setting ${setting === A ? 'A' : 'B'}`, leaked);
    }
    await db.query(`SELECT set_config('memloom.namespace', $1, false)`, [A]);
    // The keyword arm called directly (SECURITY INVOKER: bound by row-level security).
    rows = (await db.query(`SELECT * FROM memloom_keyword_arm('quokka vault', $1, 50, NULL, 1000)`, [B])).rows;
    attempt('keyword arm naming B', rows.length > 0);
  } finally {
    await s.close();
  }
  assert.deepEqual(await countOf(B), before, 'B unchanged');
  const b = await countOf(B);
  assert.ok(b.c.includes('quokka'), 'B still has its secret');
});

test('A\'s role cannot open a store in B (namespaces are bound to roles)', { skip }, async () => {
  await assert.rejects(
    openStore({ url: appUrl, namespace: B }),
    (e) => {
      attempt('npm API openStore in B as A\'s role', false);
      assert.match(e.message, /role memloom_rls_test_app is not granted namespace/);
      assert.match(e.message, /memloom_grant_namespace\('memloom_rls_test_app', /);
      return true;
    },
  );
});

test('the store still works for its own namespace under row-level security', { skip }, async () => {
  const s = await openStore({ url: appUrlB, namespace: B });
  try {
    const res = await s.recall('vault code quokka', { limit: 3 });
    assert.ok(res.results[0].content.includes('quokka'));
    const v2 = await s.remember('team B secret rotated', { key: 'secret' });
    assert.equal(v2.version, 2);
    assert.equal((await s.history('secret')).length, 2);
  } finally {
    await s.close();
  }
});
