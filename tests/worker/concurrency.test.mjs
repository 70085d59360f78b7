// 100 concurrent POST /v1/memories of one key through the worker (loopback, bounded): every 201
// is a row, versions 1..N without a gap, exactly one active version (the newest), each version
// linked to the one it superseded. A 503 (the cluster's connection limit) is retried after its
// Retry-After, as a client would. Run by scripts/test-worker.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

const { WORKER_URL, TOKEN_A, DATABASE_URL } = process.env;
if (!WORKER_URL || !TOKEN_A || !DATABASE_URL) throw new Error('run through scripts/test-worker.sh');

const psqlRows = (sql) =>
  execFileSync('psql', ['-X', '-At', '-F', '|', DATABASE_URL, '-c', sql]).toString().trim().split('\n').filter(Boolean).map((l) => l.split('|'));

test('100 concurrent remember of one key: one active version, a gapless linked history', { timeout: 120_000 }, async () => {
  const key = `concurrent-${Date.now()}`;
  const N = 100;
  let retries = 0;
  const one = async (i) => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const res = await fetch(`${WORKER_URL}/v1/memories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json' },
        body: JSON.stringify({ key, text: `Release captain is person ${i}` }),
        signal: AbortSignal.timeout(30_000),
      });
      const json = await res.json();
      if (res.status === 201) return { i, ...json };
      assert.equal(res.status, 503, JSON.stringify(json));
      // Only a 503 that says nothing was done is safe to retry: a refused or timed-out connection,
      // or a full cluster. A query deadline may have passed during COMMIT (docs/WORKER.md), and
      // retrying that would write a second version; scripts/test-worker.sh gives 30 s for it.
      assert.doesNotMatch(json.error.message, /did not answer within/, `request ${i}: ${json.error.message}`);
      retries++;
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
    }
    throw new Error(`request ${i} still 503 after 10 attempts`);
  };
  const acked = await Promise.all(Array.from({ length: N }, (_, i) => one(i)));
  process.stderr.write(`concurrency: ${N} concurrent remember through the worker, ${retries} retried 503s\n`);
  assert.deepEqual(acked.map((a) => a.version).sort((a, b) => a - b), Array.from({ length: N }, (_, i) => i + 1));
  const rows = psqlRows(
    `SELECT id, version, status, coalesce(supersedes, 0), coalesce(superseded_by, 0), content FROM memloom_items
     WHERE namespace = 'team-a' AND key = '${key}' ORDER BY version`,
  );
  assert.equal(rows.length, N);
  assert.deepEqual(rows.map((r) => Number(r[1])), Array.from({ length: N }, (_, i) => i + 1));
  const active = rows.filter((r) => r[2] === 'active');
  assert.equal(active.length, 1);
  assert.equal(Number(active[0][1]), N);
  for (let v = 1; v < N; v++) {
    assert.equal(rows[v - 1][4], rows[v][0], `version ${v} superseded_by`);
    assert.equal(rows[v][3], rows[v - 1][0], `version ${v + 1} supersedes`);
  }
  for (const a of acked) {
    assert.equal(rows[a.version - 1][0], String(a.id));
    assert.equal(rows[a.version - 1][5], `Release captain is person ${a.i}`);
  }
});
