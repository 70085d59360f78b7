// Concurrent remember and forget of ONE key through the worker (issue 15, item 1): REST
// remember, MCP forget by key and by id, MCP history, 16 in flight. Before sql/0011 this gave
// 500s (deadlocks, memloom_items_supersedes_fkey). Now: no 500 and no "failed to answer"; a
// write that still lost its race after the worker's retries is a clean 409 write_conflict
// with Retry-After (counted); afterwards at most one active version, versions 1..n without a
// gap, every link naming an existing version, and the rows left = versions acknowledged minus
// versions forget reported. Run by scripts/test-worker.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

const { WORKER_URL, TOKEN_A, DATABASE_URL } = process.env;
if (!WORKER_URL || !TOKEN_A || !DATABASE_URL) throw new Error('run through scripts/test-worker.sh');

const psqlRows = (sql) =>
  execFileSync('psql', ['-X', '-At', '-F', '|', DATABASE_URL, '-c', sql]).toString().trim().split('\n').filter(Boolean).map((l) => l.split('|'));

const auth = { authorization: `Bearer ${TOKEN_A}` };

/** One MCP tools/call, stateless JSON-RPC over POST /mcp: [httpStatus, result]. */
async function tool(name, args, id) {
  const res = await fetch(new URL('/mcp', WORKER_URL), {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
    signal: AbortSignal.timeout(30_000),
  });
  const raw = await res.text();
  const json = raw.startsWith('{') ? JSON.parse(raw) : JSON.parse(raw.split('\n').find((l) => l.startsWith('data:')).slice(5));
  return [res.status, json.result];
}

test('400 concurrent remember / forget / history of one key: no 500, an intact chain, true counts', { timeout: 300_000 }, async () => {
  const key = `race-${Date.now()}`;
  const N = 400;
  const IN_FLIGHT = 16;
  const tally = { remembered: 0, forgotten: 0, histories: 0, conflicts: 0, nothing: 0, unavailable: 0 };
  const statuses = {};
  let next = 0;
  const one = async (i) => {
    const op = (i * 7) % 10;
    if (op < 4) {
      const res = await fetch(`${WORKER_URL}/v1/memories`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ key, text: `Release captain is person ${i}` }),
        signal: AbortSignal.timeout(30_000),
      });
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const json = await res.json();
      if (res.status === 201) tally.remembered++;
      else if (res.status === 409 && json.error.code === 'write_conflict') {
        assert.ok(res.headers.get('retry-after'), 'a 409 write_conflict carries Retry-After');
        tally.conflicts++;
      } else if (res.status === 503) tally.unavailable++; // the cluster's connection limit
      else assert.fail(`remember: ${res.status} ${JSON.stringify(json)}`);
      return;
    }
    let [status, result] = [];
    if (op < 7) {
      let args = { key };
      if (op === 6) {
        [status, result] = await tool('history', { key }, i);
        const active = result.isError ? undefined : result.structuredContent.versions.find((v) => v.status === 'active');
        if (!active) return;
        args = { id: active.id };
      }
      [status, result] = await tool('forget', args, i);
      statuses[`mcp ${status}`] = (statuses[`mcp ${status}`] ?? 0) + 1;
      assert.equal(status, 200);
      const msg = result.content.map((c) => c.text).join('\n');
      assert.doesNotMatch(msg, /failed to answer|internal/, msg);
      if (!result.isError) tally.forgotten += result.structuredContent.deleted;
      else if (/no memory with/.test(msg)) tally.nothing++;
      else if (/collided with concurrent writes/.test(msg)) tally.conflicts++;
      else if (/retry shortly/.test(msg)) tally.unavailable++;
      else assert.fail(`forget: ${msg}`);
    } else {
      [status, result] = await tool('history', { key }, i);
      assert.equal(status, 200);
      const msg = result.content.map((c) => c.text).join('\n');
      assert.doesNotMatch(msg, /failed to answer|internal/, msg);
      if (!result.isError) assert.ok(result.structuredContent.versions.filter((v) => v.status === 'active').length <= 1, msg);
      tally.histories++;
    }
  };
  const lane = async () => {
    while (next < N) await one(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  process.stderr.write(`forget-race: ${N} requests, ${IN_FLIGHT} in flight: ${JSON.stringify(tally)} statuses ${JSON.stringify(statuses)}\n`);
  assert.equal(statuses[500] ?? 0, 0);
  const rows = psqlRows(
    `SELECT id, version, status, coalesce(supersedes, 0), coalesce(superseded_by, 0) FROM memloom_items
     WHERE namespace = 'team-a' AND key = '${key}' ORDER BY version`,
  );
  assert.equal(rows.length, tally.remembered - tally.forgotten, 'rows left = acknowledged - forgotten');
  assert.deepEqual(rows.map((r) => Number(r[1])), rows.map((_, i) => i + 1), 'versions without a gap');
  assert.ok(rows.filter((r) => r[2] === 'active').length <= 1);
  const ids = new Set(rows.map((r) => r[0]));
  for (const r of rows) for (const link of [r[3], r[4]]) if (link !== '0') assert.ok(ids.has(link), `dangling link ${link}`);
  assert.ok(tally.remembered > 50 && tally.forgotten > 0, JSON.stringify(tally));
});
