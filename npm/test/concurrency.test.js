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
import { embed, openStore } from '../src/entry-node.js';
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

// The mix of tests/worker/one-key-load.test.mjs through the CLI: each process runs OPS
// commands on one key (remember, forget --key, forget --id of the active version, history,
// recall). MEMLOOM_LOAD_CLI_OPS per process on a server: 6 in `make test`, 125 (1,000
// commands) in `make faults` (FAULTS_CLI_OPS); MEMLOOM_LOAD_EMBEDDED_OPS on an embedded store:
// 3, and 25 in `make faults` (FAULTS_EMBEDDED_OPS).
const CLI_PROCS = 8;
const CLI_OPS = Number(process.env.MEMLOOM_LOAD_CLI_OPS ?? 6);
const EMBEDDED_OPS = Number(process.env.MEMLOOM_LOAD_EMBEDDED_OPS ?? 3);
const STACK = /unexpected error|\n\s+at |^\s+at /m;
const CLI_MIX = ['remember', 'forget-key', 'recall', 'history', 'remember', 'forget-id', 'remember', 'history'];

/** Runs the mix from CLI_PROCS processes on `store` (CLI args); returns the tallies. */
async function cliMix(store, { refusedOk, ops = CLI_OPS }) {
  const t = { remembered: 0, forgotten: 0, histories: 0, recalls: 0, nothing: 0, collided: 0, refused: 0, runs: 0 };
  const exits = {};
  const one = async (args) => {
    const r = await runCli([...args, ...store], { async: true });
    t.runs++;
    exits[r.status] = (exits[r.status] ?? 0) + 1;
    assert.doesNotMatch(r.stderr, STACK, `a stack trace: ${r.stderr}`);
    if (r.status === 2) {
      // The clean failures: one line, exit 2.
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      if (/collided with other writers/.test(r.stderr)) t.collided++;
      else if (refusedOk && /in use by pid \d+; an embedded store is one process at a time/.test(r.stderr)) t.refused++;
      else if (/no memory with key/.test(r.stderr)) t.nothing++;
      else assert.fail(`exit 2: ${r.stderr}`);
      return undefined;
    }
    assert.equal(r.status, 0, r.stderr);
    return r;
  };
  const lane = async (w) => {
    for (let i = 0; i < ops; i++) {
      const op = CLI_MIX[(i * 3 + w) % CLI_MIX.length];
      if (op === 'remember') {
        if (await one(['remember', `note ${i} from process ${w}`, '--key', 'shared'])) t.remembered++;
      } else if (op === 'forget-key') {
        const r = await one(['forget', '--key', 'shared']);
        if (r) t.forgotten += Number(/^forgot (\d+) items?$/.exec(r.stdout.trim())[1]);
      } else if (op === 'forget-id') {
        const h = await one(['history', 'shared', '--json']);
        const active = h && JSON.parse(h.stdout).find((v) => v.status === 'active');
        if (!active) continue;
        const r = await one(['forget', '--id', String(active.id)]);
        if (r) t.forgotten += Number(/^forgot (\d+) items?$/.exec(r.stdout.trim())[1]);
      } else if (op === 'history') {
        const r = await one(['history', 'shared', '--json']);
        if (r) {
          assert.ok(JSON.parse(r.stdout).filter((v) => v.status === 'active').length <= 1, r.stdout);
          t.histories++;
        }
      } else {
        const r = await one(['recall', 'note from process', '--json', '--limit', '5']);
        if (r) {
          assert.ok(JSON.parse(r.stdout).results.filter((x) => x.key === 'shared').length <= 1, r.stdout);
          t.recalls++;
        }
      }
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CLI_PROCS }, (_, w) => lane(w)));
  return { t, exits, seconds: (Date.now() - started) / 1000 };
}

/**
 * Versions strictly increasing (a forget by id of the version history showed active may land
 * after a remember superseded it, and removes it from the middle), every link to an existing
 * row, at most one active.
 */
function checkChain(rows, what) {
  const versions = rows.map((r) => Number(r.version));
  assert.ok(versions.every((v, i) => v >= 1 && (i === 0 || versions[i - 1] < v)), `${what}: versions not strictly increasing: ${versions}`);
  assert.ok(rows.filter((r) => r.status === 'active').length <= 1, `${what}: two active versions`);
  const ids = new Set(rows.map((r) => String(r.id)));
  for (const r of rows) {
    for (const link of [r.supersedes, r.superseded_by]) if (link !== null) assert.ok(ids.has(String(link)), `${what}: dangling link ${link}`);
  }
}

const CHAIN_SQL = `SELECT id, version, status, supersedes, superseded_by FROM memloom_items WHERE namespace = $1 AND key = 'shared' ORDER BY version`;

test(`server: ${CLI_PROCS} CLI processes x ${CLI_OPS} mixed commands on one key: exit 0 or 2 with one line, no stack trace, true counts, an intact chain`, { skip: noServer, timeout: 1_800_000 }, async () => {
  const ns = `conc-forget-${process.pid}-${Date.now()}`;
  assert.equal(runCli(['init', '--database-url', url]).status, 0);
  const store = ['--database-url', url, '--namespace', ns];
  const { t, exits, seconds } = await cliMix(store, { refusedOk: false });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query(CHAIN_SQL, [ns]);
    process.stderr.write(
      `cli one-key load (server): ${CLI_PROCS} processes x ${CLI_OPS}, ${t.runs} runs in ${seconds.toFixed(1)} s: ${JSON.stringify(t)} exits ${JSON.stringify(exits)}, ${rows.length} versions left\n`,
    );
    assert.equal(t.collided, 0, 'a write outlived its retries');
    checkChain(rows, 'after the load');
    assert.equal(rows.length, t.remembered - t.forgotten, 'the printed counts are the rows that went');
    assert.equal(runCli(['remember', 'the last word', '--key', 'shared', ...store]).status, 0);
    const { rows: final } = await admin.query(CHAIN_SQL, [ns]);
    checkChain(final, 'after one more remember');
    assert.equal(final.filter((r) => r.status === 'active').length, 1, 'exactly one active version');
    assert.equal(final.at(-1).status, 'active');
    assert.ok(t.remembered > 0 && t.histories > 0 && t.recalls > 0, JSON.stringify(t));
  } finally {
    await admin.end();
  }
});

test(`embedded store: ${CLI_PROCS} CLI processes x ${EMBEDDED_OPS} mixed commands: the lock refuses the others in one line, nothing breaks`, { timeout: 1_800_000 }, async () => {
  // PGlite is one process per store: the lock file (memloom.lock) refuses a second process
  // with one line and exit 2; it does not queue. What succeeds is consistent.
  const dir = join(tmp, 'embedded-mix');
  const store = ['--store', dir];
  assert.equal(runCli(['init', ...store]).status, 0);
  const { t, exits, seconds } = await cliMix(store, { refusedOk: true, ops: EMBEDDED_OPS });
  const s = await openStore({ dir, create: false });
  try {
    const { rows } = await s.db.query(CHAIN_SQL, ['default']);
    process.stderr.write(
      `cli one-key load (embedded): ${CLI_PROCS} processes x ${EMBEDDED_OPS}, ${t.runs} runs in ${seconds.toFixed(1)} s: ${JSON.stringify(t)} exits ${JSON.stringify(exits)}, ${rows.length} versions left\n`,
    );
    checkChain(rows, 'embedded');
    assert.equal(rows.length, t.remembered - t.forgotten);
    assert.ok(t.refused > 0, 'some processes met the lock');
  } finally {
    await s.close();
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
