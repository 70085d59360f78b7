// Concurrency: the embedded store's lock file (a second process gets "store in use by pid N",
// a dead owner's lock is taken over), and on a PostgreSQL server (MEMLOOM_TEST_DATABASE_URL):
// 100 concurrent remember of one key leave one active version and a gapless, linked history;
// two CLI processes ingesting the same folder at once store each chunk once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { embed } from '../src/entry-node.js';
import { runCli } from './helpers.js';
import { openPg } from '../src/db-pg.js';

const url = process.env.MEMLOOM_TEST_DATABASE_URL;
const noServer = url ? false : 'MEMLOOM_TEST_DATABASE_URL is not set';
let tmp;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-conc-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A folder of `n` markdown files, a few chunks each. */
function folder(name, n) {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) {
    const body = Array.from({ length: 6 }, (_, j) => `## Part ${j}\n\nFile ${i} part ${j}: ` + `token${i}x${j} `.repeat(120)).join('\n\n');
    writeFileSync(join(dir, `doc-${String(i).padStart(3, '0')}.md`), `# Doc ${i}\n\n${body}\n`);
  }
  return dir;
}

test('embedded store: a second process is refused while one has it open; a dead owner is taken over', async () => {
  const store = join(tmp, 'embedded');
  assert.equal(runCli(['init', '--store', store]).status, 0);
  const dir = folder('lock-docs', 40);
  const first = runCli(['ingest', dir, '--store', store], { async: true });
  // Wait until the first process holds the lock.
  const lock = join(store, 'memloom.lock');
  for (let i = 0; i < 200 && !existsSync(lock); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(existsSync(lock), 'the lock file appears while the store is open');
  const second = runCli(['recall', 'token1x1', '--store', store], { async: true });
  const [a, b] = await Promise.all([first, second]);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(b.status, 2, b.stderr);
  assert.match(b.stderr, /store .* in use by pid \d+; an embedded store is one process at a time/);
  assert.ok(!existsSync(lock), 'released on close');
  // A lock left by a process that died (SIGKILL leaves it behind) is taken over.
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  writeFileSync(lock, `${dead.stdout}\n`);
  const r = runCli(['recall', 'token1x1', '--store', store, '--json']);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(JSON.parse(r.stdout).results.length > 0);
  assert.ok(!existsSync(lock));
});

test('server: 100 concurrent remember of one key: one active version, gapless linked history', { skip: noServer }, async () => {
  const ns = `conc-${process.pid}-${Date.now()}`;
  // Initialise through the CLI (migrations, embedder).
  assert.equal(runCli(['init', '--database-url', url]).status, 0);
  const pool = new pg.Pool({ connectionString: url, max: 90 });
  try {
    const N = 100;
    const calls = Array.from({ length: N }, async (_, i) => {
      const text = `The on-call owner is engineer number ${i}`;
      const vec = `[${Array.from(embed(text)).join(',')}]`;
      const { rows } = await pool.query('SELECT id, version FROM memloom_remember($1, $2, $3, $4::vector, $5::jsonb)', [ns, 'on-call', text, vec, '{}']);
      return { i, id: Number(rows[0].id), version: Number(rows[0].version) };
    });
    const acked = await Promise.all(calls);
    assert.deepEqual(acked.map((a) => a.version).sort((x, y) => x - y), Array.from({ length: N }, (_, i) => i + 1));
    const { rows } = await pool.query(
      `SELECT id, version, status, supersedes, superseded_by, content FROM memloom_items WHERE namespace = $1 AND key = 'on-call' ORDER BY version`,
      [ns],
    );
    assert.equal(rows.length, N);
    assert.deepEqual(rows.map((r) => Number(r.version)), Array.from({ length: N }, (_, i) => i + 1), 'gapless');
    const active = rows.filter((r) => r.status === 'active');
    assert.equal(active.length, 1);
    assert.equal(Number(active[0].version), N, 'the newest is the active one');
    for (let i = 1; i < N; i++) {
      assert.equal(Number(rows[i - 1].superseded_by), Number(rows[i].id));
      assert.equal(Number(rows[i].supersedes), Number(rows[i - 1].id));
    }
    // Every acknowledged write is the row it says.
    for (const a of acked) assert.equal(rows[a.version - 1].content, `The on-call owner is engineer number ${a.i}`);
  } finally {
    await pool.end();
  }
});

test('server: 8 CLI processes remembering and forgetting one key: no stack trace, true counts, an intact chain', { skip: noServer, timeout: 300_000 }, async () => {
  const ns = `conc-forget-${process.pid}-${Date.now()}`;
  assert.equal(runCli(['init', '--database-url', url]).status, 0);
  const PROCS = 8;
  const OPS = 6;
  let remembered = 0;
  let forgotten = 0;
  let collided = 0;
  const worker = async (w) => {
    for (let i = 0; i < OPS; i++) {
      const args = (i + w) % 3 === 2 ? ['forget', '--key', 'shared'] : ['remember', `note ${i} from process ${w}`, '--key', 'shared'];
      const r = await runCli([...args, '--database-url', url, '--namespace', ns], { async: true });
      assert.doesNotMatch(r.stderr, /unexpected error|\n\s+at /, `a stack trace: ${r.stderr}`);
      if (r.status === 2 && /collided with other writers/.test(r.stderr)) {
        // The one clean failure: the store retried and still lost; one line, exit 2.
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        collided++;
        continue;
      }
      assert.equal(r.status, 0, r.stderr);
      if (args[0] === 'remember') remembered++;
      else forgotten += Number(/^forgot (\d+) items?$/.exec(r.stdout.trim())[1]);
    }
  };
  await Promise.all(Array.from({ length: PROCS }, (_, w) => worker(w)));
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      `SELECT id, version, status, supersedes, superseded_by FROM memloom_items WHERE namespace = $1 AND key = 'shared' ORDER BY version`,
      [ns],
    );
    process.stderr.write(`cli forget/remember: ${PROCS} processes x ${OPS}: ${remembered} remembered, ${forgotten} forgotten, ${collided} collided, ${rows.length} left\n`);
    assert.equal(collided, 0, 'a write outlived its retries');
    assert.equal(rows.length, remembered - forgotten, 'the printed counts are the rows that went');
    assert.deepEqual(rows.map((r) => Number(r.version)), rows.map((_, i) => i + 1), 'gapless');
    assert.ok(rows.filter((r) => r.status === 'active').length <= 1);
    const ids = new Set(rows.map((r) => String(r.id)));
    for (const r of rows) {
      for (const link of [r.supersedes, r.superseded_by]) if (link !== null) assert.ok(ids.has(String(link)), `dangling link ${link}`);
    }
  } finally {
    await admin.end();
  }
});

test('server: two CLI processes ingesting one folder at once store each chunk once', { skip: noServer, timeout: 300_000 }, async () => {
  const dir = folder('race-docs', 30);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let round = 0; round < 3; round++) {
      const ns = `race-${process.pid}-${Date.now()}-${round}`;
      const args = ['ingest', dir, '--database-url', url, '--namespace', ns, '--json'];
      const [a, b] = await Promise.all([runCli(args, { async: true }), runCli(args, { async: true })]);
      assert.equal(a.status, 0, a.stderr);
      assert.equal(b.status, 0, b.stderr);
      const { rows } = await client.query(
        `SELECT count(*)::int AS n, count(DISTINCT (source, content))::int AS distinct_n, count(DISTINCT source)::int AS files
         FROM memloom_items WHERE namespace = $1 AND kind = 'chunk'`,
        [ns],
      );
      assert.equal(rows[0].files, 30);
      assert.equal(rows[0].n, rows[0].distinct_n, `round ${round}: duplicated chunks`);
      // The same count as one ingest alone.
      const alone = `${ns}-alone`;
      assert.equal(runCli(['ingest', dir, '--database-url', url, '--namespace', alone]).status, 0);
      const { rows: one } = await client.query(`SELECT count(*)::int AS n FROM memloom_items WHERE namespace = $1 AND kind = 'chunk'`, [alone]);
      assert.equal(rows[0].n, one[0].n);
    }
  } finally {
    await client.end();
  }
});

test('server: a transaction that lost a race (40P01, 40001) runs again, at most 3 times; other errors at once', { skip: noServer }, async () => {
  const db = await openPg(url);
  try {
    const lost = (code) => Object.assign(new Error(code === '40P01' ? 'deadlock detected' : 'could not serialize access'), { code });
    let calls = 0;
    const out = await db.transaction(async (tx) => {
      calls++;
      await tx.query('SELECT 1');
      if (calls < 3) throw lost(calls === 1 ? '40P01' : '40001');
      return 'done';
    });
    assert.deepEqual([out, calls], ['done', 3]);
    calls = 0;
    await assert.rejects(
      db.transaction(async () => {
        calls++;
        throw lost('40P01');
      }),
      (e) => e.code === '40P01',
    );
    assert.equal(calls, 3, 'bounded: 3 attempts in all');
    calls = 0;
    await assert.rejects(
      db.transaction(async () => {
        calls++;
        throw Object.assign(new Error('fk'), { code: '23503' });
      }),
    );
    assert.equal(calls, 1, 'not a lost race: not retried');
  } finally {
    await db.close();
  }
  // The CLI's line for a write that still lost: one line, no stack (npm/bin/memloom.js).
  const r = runCli(['remember', 'x', '--key', 'k', '--database-url', url, '--namespace', `conc-line-${process.pid}`], {
    env: { NODE_OPTIONS: `--import ${new URL('./fixtures/deadlock-preload.mjs', import.meta.url).pathname}` },
  });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trim(), 'memloom: error: the write collided with other writers 3 times (deadlock); nothing was changed, run the command again');
});
