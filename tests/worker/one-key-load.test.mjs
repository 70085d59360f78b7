// Mixed concurrent requests on ONE key through the worker (issue 15): REST remember and
// recall, MCP remember, forget by key and by id (of the active version history shows), history
// and recall, MEMLOOM_LOAD_IN_FLIGHT (16) in flight. `make test` runs MEMLOOM_LOAD_REQUESTS
// (default 400); `make faults` runs 1,000 (FAULTS_LOAD_REQUESTS). Before sql/0011 this gave 500s
// (deadlocks, memloom_items_supersedes_fkey). Checks: no 500, no other status than 200/201,
// 409 write_conflict (with Retry-After) or 503 database_unavailable; no stack trace or panic in
// any answer or in the worker's log; afterwards versions 1..n without a gap, every link naming
// an existing version, the rows left = versions acknowledged minus versions forget reported,
// and after one more remember exactly one active version, the newest. Figures on stderr.
// Run by scripts/test-worker.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';

const { WORKER_URL, TOKEN_A, DATABASE_URL, WRANGLER_LOG } = process.env;
if (!WORKER_URL || !TOKEN_A || !DATABASE_URL) throw new Error('run through scripts/test-worker.sh');
const N = Number(process.env.MEMLOOM_LOAD_REQUESTS ?? 400);
const IN_FLIGHT = Number(process.env.MEMLOOM_LOAD_IN_FLIGHT ?? 16);

const psqlRows = (sql) =>
  execFileSync('psql', ['-X', '-At', '-F', '|', DATABASE_URL, '-c', sql]).toString().trim().split('\n').filter(Boolean).map((l) => l.split('|'));

const auth = { authorization: `Bearer ${TOKEN_A}` };
/** What a stack trace or a Rust panic looks like in a body or a log line. */
const TRACE = /\n\s+at |panicked at|RuntimeError|unreachable executed|Uncaught/;

async function rest(route, body) {
  const res = await fetch(`${WORKER_URL}${route}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const raw = await res.text();
  assert.doesNotMatch(raw, TRACE, raw);
  return [res.status, JSON.parse(raw), res.headers];
}

/** One MCP tools/call, stateless JSON-RPC over POST /mcp: [httpStatus, result, text]. */
async function tool(name, args, id) {
  const res = await fetch(new URL('/mcp', WORKER_URL), {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
    signal: AbortSignal.timeout(30_000),
  });
  const raw = await res.text();
  assert.doesNotMatch(raw, TRACE, raw);
  const json = raw.startsWith('{') ? JSON.parse(raw) : JSON.parse(raw.split('\n').find((l) => l.startsWith('data:')).slice(5));
  const result = json.result;
  const text = result ? result.content.map((c) => c.text).join('\n') : JSON.stringify(json);
  assert.doesNotMatch(text, /failed to answer|internal/, text);
  return [res.status, result, text];
}

test(`${N} mixed requests on one key, ${IN_FLIGHT} in flight: no 500, no trace, an intact chain, true counts`, { timeout: 900_000 }, async () => {
  const key = `one-key-${Date.now()}`;
  const logFrom = WRANGLER_LOG ? statSync(WRANGLER_LOG).size : 0;
  const tally = { remembered: 0, forgotten: 0, histories: 0, recalls: 0, conflicts: 0, nothing: 0, unavailable: 0, unavailableWrites: 0 };
  const ops = {};
  const statuses = {};
  const count = (o, k) => (o[k] = (o[k] ?? 0) + 1);
  const started = Date.now();
  let next = 0;

  /** A tool error that is a clean answer, counted; anything else fails the test. */
  const toolError = (what, text, write) => {
    if (/no memory with/.test(text)) tally.nothing++;
    else if (/collided with concurrent writes/.test(text)) tally.conflicts++;
    else if (/retry shortly/.test(text)) {
      tally.unavailable++;
      if (write) tally.unavailableWrites++;
    }
    else assert.fail(`${what}: ${text}`);
  };
  const restAnswer = (what, status, json, headers) => {
    count(statuses, status);
    if (status === 409 && json.error.code === 'write_conflict') {
      assert.ok(headers.get('retry-after'), 'a 409 write_conflict carries Retry-After');
      tally.conflicts++;
      return false;
    }
    if (status === 503 && json.error.code === 'database_unavailable') {
      tally.unavailable++; // the cluster's connection limit, or the 5 s query timeout
      if (what === 'rest-remember') tally.unavailableWrites++;
      return false;
    }
    assert.ok(status === 200 || status === 201, `${what}: ${status} ${JSON.stringify(json)}`);
    return true;
  };

  const one = async (i) => {
    const op = ['rest-remember', 'mcp-forget-key', 'rest-recall', 'mcp-remember', 'mcp-history', 'rest-remember', 'mcp-forget-id', 'mcp-recall', 'mcp-remember', 'mcp-history'][(i * 7) % 10];
    count(ops, op);
    if (op === 'rest-remember') {
      const [status, json, headers] = await rest('/v1/memories', { key, text: `Release captain is person ${i}` });
      if (restAnswer(op, status, json, headers)) {
        assert.equal(status, 201);
        tally.remembered++;
      }
    } else if (op === 'rest-recall') {
      const [status, json, headers] = await rest('/v1/recall', { query: 'release captain person', limit: 5 });
      if (restAnswer(op, status, json, headers)) {
        tally.recalls++;
        assert.ok(json.results.filter((r) => r.key === key).length <= 1, 'recall lists one version of the key at most');
      }
    } else {
      let name = op.slice(4);
      let args = { key };
      if (op === 'mcp-remember') args = { key, text: `Release captain is person ${i}` };
      if (op === 'mcp-recall') args = { query: 'release captain person' };
      if (op === 'mcp-forget-id') {
        const [status, result] = await tool('history', { key }, i);
        assert.equal(status, 200);
        const active = result.isError ? undefined : result.structuredContent.versions.find((v) => v.status === 'active');
        if (!active) return void tally.nothing++;
        name = 'forget';
        args = { id: active.id };
      }
      if (op === 'mcp-forget-key') name = 'forget';
      const [status, result, text] = await tool(name, args, i);
      count(statuses, `mcp ${status}`);
      assert.equal(status, 200, text);
      if (result.isError) return toolError(op, text, name === 'remember' || name === 'forget');
      const out = result.structuredContent;
      if (name === 'forget') tally.forgotten += out.deleted;
      else if (name === 'remember') tally.remembered++;
      else if (name === 'history') {
        assert.ok(out.versions.filter((v) => v.status === 'active').length <= 1, text);
        tally.histories++;
      } else tally.recalls++;
    }
  };
  const lane = async () => {
    while (next < N) await one(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  const seconds = (Date.now() - started) / 1000;

  const chain = () =>
    psqlRows(
      `SELECT id, version, status, coalesce(supersedes, 0), coalesce(superseded_by, 0) FROM memloom_items
       WHERE namespace = 'team-a' AND key = '${key}' ORDER BY version`,
    );
  const checkChain = (rows, what) => {
    // Strictly increasing, not gapless: a forget by id of the version history showed active
    // may land after a remember superseded it, and removes it from the middle of the chain.
    const versions = rows.map((r) => Number(r[1]));
    assert.ok(versions.every((v, i) => v >= 1 && (i === 0 || versions[i - 1] < v)), `${what}: versions not strictly increasing: ${versions}`);
    const ids = new Set(rows.map((r) => r[0]));
    for (const r of rows) for (const link of [r[3], r[4]]) if (link !== '0') assert.ok(ids.has(link), `${what}: dangling link ${link}`);
    assert.ok(rows.filter((r) => r[2] === 'active').length <= 1, `${what}: two active versions`);
  };
  const rows = chain();
  process.stderr.write(`one-key-load: tally ${JSON.stringify(tally)}, ${rows.length} rows left\n`);
  checkChain(rows, 'after the load');
  // A write answered 503 by the query timeout may still have committed (the deadline can
  // pass while COMMIT is in flight): its outcome is unknown, so it widens the bound.
  const known = tally.remembered - tally.forgotten;
  assert.ok(
    rows.length >= known - tally.unavailableWrites && rows.length <= known + tally.unavailableWrites,
    `rows left ${rows.length}, acknowledged - forgotten ${known}, writes of unknown outcome ${tally.unavailableWrites}`,
  );
  if (tally.unavailableWrites === 0) assert.equal(rows.length, known, 'rows left = acknowledged - forgotten');
  // The key is still writable and consistent: one more version, exactly one active.
  const [status, json] = await rest('/v1/memories', { key, text: 'Release captain is the last writer' });
  assert.equal(status, 201, JSON.stringify(json));
  const final = chain();
  checkChain(final, 'after one more remember');
  assert.equal(final.filter((r) => r[2] === 'active').length, 1, 'exactly one active version');
  assert.equal(final.at(-1)[2], 'active', 'the newest version is the active one');
  assert.equal(Number(final.at(-1)[0]), json.id);

  let traces = 0;
  if (WRANGLER_LOG) {
    const log = readFileSync(WRANGLER_LOG, 'utf8').slice(logFrom);
    traces = log.split('\n').filter((l) => TRACE.test(`\n${l}`) || /panicked|RuntimeError|Uncaught/.test(l)).length;
  }
  process.stderr.write(
    `one-key-load: ${N} requests, ${IN_FLIGHT} in flight, ${seconds.toFixed(1)} s (${(N / seconds).toFixed(0)}/s): ` +
      `${JSON.stringify(tally)} ops ${JSON.stringify(ops)} statuses ${JSON.stringify(statuses)}; ` +
      `${rows.length} versions left, chain intact; worker log traces ${WRANGLER_LOG ? traces : 'not checked (no WRANGLER_LOG)'}\n`,
  );
  assert.equal(statuses[500] ?? 0, 0);
  assert.equal(traces, 0, 'stack traces or panics in the worker log');
  assert.ok(tally.remembered > N / 10 && tally.forgotten > 0 && tally.recalls > 0 && tally.histories > 0, JSON.stringify(tally));
});
