// Fault injection under load (scripts/faults.sh): a bounded load against the local worker
// (loopback, FAULTS_REQUESTS requests, FAULTS_CONCURRENCY in flight) while PostgreSQL is
// stopped and started again (tests/worker/pg-ctl.sh pause/resume: the same data directory and
// port). Checks: while the database is down the worker answers 503 with Retry-After (never a
// 500 or a hang); it recovers by itself; every write acknowledged with 201 is in the database
// afterwards (lost writes: 0). Prints the figures: requests by status, lost writes, recovery
// time (database back -> first 2xx).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const { WORKER_URL, TOKEN_A, DATABASE_URL, MEMLOOM_PG_STATE } = process.env;
if (!WORKER_URL || !TOKEN_A || !DATABASE_URL || !MEMLOOM_PG_STATE) throw new Error('run through scripts/faults.sh');
const REQUESTS = Number(process.env.FAULTS_REQUESTS ?? 3000);
const CONCURRENCY = Number(process.env.FAULTS_CONCURRENCY ?? 8);
const DOWN_MS = Number(process.env.FAULTS_DOWN_MS ?? 3000);
const pgctl = path.join(path.dirname(fileURLToPath(import.meta.url)), '../worker/pg-ctl.sh');
const run$ = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('load with a PostgreSQL restart: 503 while down, recovery, no acknowledged write lost', { timeout: 600_000 }, async () => {
  const run = `faults-${Date.now()}`;
  const acked = new Map(); // id -> text
  const status = {};
  let next = 0;
  let pausing = false;
  let downAt = 0;
  let upAt = 0;
  let firstOkAfterUp = 0;
  let errorsWhileUp = 0;
  const started = Date.now();

  async function request(n) {
    const write = n % 2 === 0;
    const text = `${run} write ${n}`;
    const t = Date.now();
    let res;
    try {
      res = await fetch(`${WORKER_URL}${write ? '/v1/memories' : '/v1/recall'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json' },
        body: JSON.stringify(write ? { key: `${run}-${n % 20}`, text } : { query: 'max_connections', limit: 3 }),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (e) {
      status[`network ${e.name}`] = (status[`network ${e.name}`] ?? 0) + 1;
      return;
    }
    const body = await res.json().catch(() => null);
    status[res.status] = (status[res.status] ?? 0) + 1;
    assert.ok([200, 201, 503].includes(res.status), `status ${res.status}: ${JSON.stringify(body)}`);
    if (res.status === 503) {
      assert.equal(body?.error?.code, 'database_unavailable');
      assert.ok(Number(res.headers.get('retry-after')) > 0);
      if (!pausing && upAt === 0) errorsWhileUp++;
    }
    if (res.status === 201) acked.set(body.id, text);
    if (res.status < 300 && upAt && !firstOkAfterUp && t >= upAt) firstOkAfterUp = Date.now();
  }

  async function worker() {
    while (next < REQUESTS) await request(next++);
  }

  // The fault: after a third of the requests, stop PostgreSQL for DOWN_MS, then start it.
  const fault = (async () => {
    while (next < REQUESTS / 3) await sleep(20);
    pausing = true;
    await run$('bash', [pgctl, 'pause']);
    downAt = Date.now();
    await sleep(DOWN_MS);
    await run$('bash', [pgctl, 'resume']);
    upAt = Date.now();
  })();
  await Promise.all([...Array.from({ length: CONCURRENCY }, worker), fault]);
  const elapsed = (Date.now() - started) / 1000;

  // Every acknowledged write is there, with its text.
  const ids = [...acked.keys()];
  const rows = execFileSync('psql', ['-X', '-At', '-F', '|', DATABASE_URL, '-c',
    `SELECT id, content FROM memloom_items WHERE id = ANY ('{${ids.join(',')}}'::bigint[])`]).toString().trim().split('\n').filter(Boolean);
  const present = new Map(rows.map((l) => { const i = l.indexOf('|'); return [Number(l.slice(0, i)), l.slice(i + 1)]; }));
  const lost = ids.filter((id) => present.get(id) !== acked.get(id));
  // One active version per key.
  const dup = execFileSync('psql', ['-X', '-At', DATABASE_URL, '-c',
    `SELECT count(*) FROM (SELECT key FROM memloom_items WHERE namespace = 'team-a' AND key LIKE '${run}-%' AND status = 'active' GROUP BY key HAVING count(*) > 1) d`]).toString().trim();
  const recovery = firstOkAfterUp ? firstOkAfterUp - upAt : null;
  const figures = {
    requests: REQUESTS, concurrency: CONCURRENCY, seconds: elapsed, databaseDownMs: upAt - downAt, statuses: status,
    acknowledgedWrites: ids.length, lostWrites: lost.length, recoveryMs: recovery, keysWithTwoActive: Number(dup),
  };
  process.stderr.write(`faults: ${JSON.stringify(figures)}\n`);
  assert.equal(lost.length, 0, `lost writes: ${lost.slice(0, 10)}`);
  assert.equal(Number(dup), 0);
  assert.ok((status[503] ?? 0) > 0, 'the outage was seen as 503');
  assert.equal(errorsWhileUp, 0, '503 before the outage');
  assert.ok(recovery !== null && recovery < 10_000, `recovered in ${recovery} ms`);
  assert.equal(status[500] ?? 0, 0);
});
