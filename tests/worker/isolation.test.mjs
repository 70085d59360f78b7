// Tenant isolation through the worker, which connects as an application role bound by
// row-level security (scripts/test-worker.sh: APP_DATABASE_URL, sql/memloom/10_security.sql): team A's
// token tries to read, overwrite and delete team B's rows through REST and MCP, and raw SQL
// without a WHERE clause runs under the same role. Every attempt must see or change nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

const { WORKER_URL, TOKEN_A, TOKEN_B, DATABASE_URL, APP_DATABASE_URL } = process.env;
if (!WORKER_URL || !TOKEN_A || !TOKEN_B || !DATABASE_URL || !APP_DATABASE_URL) throw new Error('run through scripts/test-worker.sh');

const SECRET = 'isolation-secret-wombat-4417';
/** In a reply only if B's row itself came back (a reply may echo the query). */
const LEAK = "vault code is isolation-secret";
let attempts = 0;
let succeeded = 0;
function attempt(what, leaked) {
  attempts++;
  if (leaked) succeeded++;
  assert.ok(!leaked, `isolation broken: ${what}`);
}
const psql = (url, sql) => execFileSync('psql', ['-X', '-At', '-v', 'ON_ERROR_STOP=1', url, '-c', sql], { stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim();
const snapshotB = () => psql(DATABASE_URL, `SELECT count(*) || ':' || coalesce(md5(string_agg(id || status || content, ',' ORDER BY id)), '') FROM memloom_items WHERE namespace = 'team-b'`);

async function call(route, token, body) {
  const res = await fetch(`${WORKER_URL}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
}
const tool = (token, name, args) => call('/mcp', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

let bId;
before(async () => {
  const r = await call('/v1/memories', TOKEN_B, { key: 'vault', text: `Team B's vault code is ${SECRET}` });
  assert.equal(r.status, 201, r.text);
  bId = r.json.id;
});
after(() => process.stderr.write(`worker isolation: ${attempts} attempts, ${succeeded} succeeded\n`));

test('REST and MCP: A cannot read, overwrite or delete B', async () => {
  const before = snapshotB();
  for (const query of [SECRET, 'vault code', 'wombat', `' OR namespace = 'team-b' --`, 'team-b']) {
    const r = await call('/v1/recall', TOKEN_A, { query, limit: 50 });
    assert.equal(r.status, 200, r.text);
    attempt(`recall ${query}`, r.json.results.some((x) => x.content.includes(LEAK) || x.id === bId));
  }
  for (const body of [{ query: SECRET, namespace: 'team-b' }, { query: SECRET, ns: 'team-b' }]) {
    const r = await call('/v1/recall', TOKEN_A, body);
    attempt('recall naming the namespace in the body', r.status !== 400);
  }
  let r = await call('/v1/memories', TOKEN_A, { key: 'vault', text: 'A overwrites the vault key' });
  assert.equal(r.status, 201, r.text);
  attempt('remember of B\'s key from A became a new version of B\'s', r.json.version !== 1);
  r = await call('/v1/memories', TOKEN_A, { text: 'planted', namespace: 'team-b' });
  attempt('remember naming the namespace', r.status !== 400);
  r = await tool(TOKEN_A, 'recall', { query: SECRET, limit: 50 });
  attempt('MCP recall', r.text.includes(LEAK));
  r = await tool(TOKEN_A, 'history', { key: 'vault' });
  attempt('MCP history', r.text.includes(LEAK));
  r = await tool(TOKEN_A, 'forget', { id: bId });
  attempt('MCP forget of B\'s id', snapshotB() !== before);
  r = await tool(TOKEN_A, 'forget', { key: 'vault' });
  attempt('MCP forget of B\'s key', snapshotB() !== before);
  assert.equal(snapshotB(), before, 'B unchanged');
});

test('raw SQL under the worker\'s role: no WHERE clause still sees only its namespace', () => {
  // Two -c in one session: scope it as the worker does, then the statement (its output only).
  const scoped = (sql) =>
    execFileSync('psql', ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', APP_DATABASE_URL, '-c', `SELECT set_config('memloom.namespace', 'team-a', false)`, '-c', sql], { stdio: ['ignore', 'pipe', 'pipe'] })
      .toString().trim().split('\n').slice(1).join('\n');
  const before = snapshotB();
  const aCount = psql(DATABASE_URL, `SELECT count(*) FROM memloom_items WHERE namespace = 'team-a'`);
  attempt('SELECT count(*) without WHERE', scoped('SELECT count(*) FROM memloom_items') !== aCount);
  attempt('SELECT of B by name', scoped(`SELECT count(*) FROM memloom_items WHERE namespace = 'team-b'`) !== '0');
  attempt('SELECT of B\'s id', scoped(`SELECT count(*) FROM memloom_items WHERE id = ${bId}`) !== '0');
  attempt('entities without WHERE', scoped(`SELECT count(*) FROM memloom_entities WHERE namespace <> 'team-a'`) !== '0');
  attempt('UPDATE without WHERE touches B', (scoped(`UPDATE memloom_items SET content = content RETURNING namespace`).split('\n').includes('team-b')));
  attempt('DELETE of B', scoped(`DELETE FROM memloom_items WHERE namespace = 'team-b' RETURNING id`) !== '');
  for (const [what, sql] of [
    ['INSERT into B', `INSERT INTO memloom_items (namespace, kind, content, embedding) SELECT 'team-b', 'memory', 'planted', embedding FROM memloom_items LIMIT 1`],
    ['UPDATE moving rows to B', `UPDATE memloom_items SET namespace = 'team-b' WHERE id = (SELECT min(id) FROM memloom_items)`],
    ['memloom_remember into B', `SELECT memloom_remember('team-b', 'vault', 'planted', (SELECT embedding FROM memloom_items LIMIT 1))`],
  ]) {
    let leaked = false;
    try {
      scoped(sql);
      leaked = snapshotB() !== before;
    } catch (e) {
      assert.match(String(e.stderr), /row-level security/, what);
    }
    attempt(what, leaked);
  }
  // No setting at all: nothing.
  attempt('no setting', psql(APP_DATABASE_URL, 'SELECT count(*) FROM memloom_items') !== '0');
  assert.equal(snapshotB(), before);
});
