// The embedded store's lock file (src/lock-node.js takePidLock, also the warm process's spawn
// lock) under processes racing for it: two processes must never hold one store at once (PGlite in each would write the same files as if
// alone: lost writes, a corrupted store, a backend spinning on a lock nobody holds).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const LOCK_MODULE = pathToFileURL(fileURLToPath(new URL('../src/lock-node.js', import.meta.url))).href;

// One racer: from a common start instant, ROUNDS times: take the lock (or be refused), and
// while holding it claim an "inside" marker with O_EXCL; a marker already there means another
// process holds the lock too. With CRASH > 0, that fraction of its holds ends as a crash would:
// the lock left in place naming a process that is gone, for the others to take over. Prints its
// counts as JSON.
const RACER = `
import { lockStore, LOCK_FILE } from ${JSON.stringify(LOCK_MODULE)};
import { openSync, closeSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [dir, start, rounds, crash] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3]), Number(process.argv[4])];
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
while (Date.now() < start) sleep(1);
const out = { held: 0, refused: 0, both: 0 };
for (let i = 0; i < rounds; i++) {
  let release;
  try {
    release = lockStore(dir);
  } catch (e) {
    if (!/in use by pid|keeps changing/.test(e.message)) throw e;
    out.refused++;
    continue;
  }
  out.held++;
  let fd;
  try {
    fd = openSync(join(dir, 'inside'), 'wx');
  } catch (e) {
    if (e.code !== 'EEXIST') throw e;
    out.both++;
  }
  sleep(1);
  if (fd !== undefined) {
    closeSync(fd);
    unlinkSync(join(dir, 'inside'));
  }
  if (Math.random() < crash) {
    const gone = join(dir, 'crashed.' + process.pid);
    writeFileSync(gone, '999999999\\n');
    renameSync(gone, join(dir, LOCK_FILE));
    continue;
  }
  release();
}
process.stdout.write(JSON.stringify(out));
`;

function race(dir, start, rounds, crash = 0) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', RACER, dir, String(start), String(rounds), String(crash)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`racer exited ${code}: ${err}`))));
  });
}

test('8 processes racing for one store: never two holders at once, and each gets it', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'memloom-lock-'));
  try {
    const procs = 8;
    const rounds = 300;
    const start = Date.now() + 1500; // after every racer has started
    const counts = await Promise.all(Array.from({ length: procs }, () => race(dir, start, rounds)));
    const sum = (k) => counts.reduce((s, c) => s + c[k], 0);
    process.stderr.write(`lock race: ${procs} processes x ${rounds}: held ${sum('held')}, refused ${sum('refused')}, both ${sum('both')}\n`);
    assert.equal(sum('both'), 0, `two processes held the lock at once ${sum('both')} times: ${JSON.stringify(counts)}`);
    assert.ok(sum('held') >= procs, JSON.stringify(counts));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a lock whose process is gone, or that is empty or unreadable, is taken over', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memloom-lock-'));
  return import(LOCK_MODULE).then(({ lockStore, takePidLock, LOCK_FILE }) => {
    try {
      // A live holder (the test runner's parent) keeps it: its pid comes back, the file stays.
      writeFileSync(join(dir, LOCK_FILE), `${process.ppid}\n`);
      assert.equal(takePidLock(join(dir, LOCK_FILE)), process.ppid);
      assert.throws(() => lockStore(dir), new RegExp(`in use by pid ${process.ppid}`));
      assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), `${process.ppid}\n`);
      for (const content of ['999999999\n', '', 'not a pid\n']) {
        writeFileSync(join(dir, LOCK_FILE), content);
        const release = lockStore(dir);
        assert.throws(() => lockStore(dir), /already open in this process/);
        release();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('racers taking over locks left by crashes: never two holders, and no lock put back after its release', { timeout: 120_000 }, async () => {
  // Moving a stale lock aside and putting back what turned out live (the code before) could
  // put back a lock its owner had released meanwhile: that racer then met its own pid and
  // failed with "already open in this process", which fails this test.
  const dir = mkdtempSync(join(tmpdir(), 'memloom-lock-'));
  try {
    const procs = 8;
    const rounds = 300;
    const start = Date.now() + 1500;
    const counts = await Promise.all(Array.from({ length: procs }, () => race(dir, start, rounds, 0.3)));
    const sum = (k) => counts.reduce((s, c) => s + c[k], 0);
    process.stderr.write(`lock race with crashes: held ${sum('held')}, refused ${sum('refused')}, both ${sum('both')}\n`);
    assert.equal(sum('both'), 0, JSON.stringify(counts));
    assert.ok(sum('held') >= procs, JSON.stringify(counts));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a stale lock is removed only by the process that claims it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memloom-lock-'));
  return import(LOCK_MODULE).then(({ lockStore, LOCK_FILE }) => {
    const lock = join(dir, LOCK_FILE);
    const claim = `${lock}.stale-999999999`;
    try {
      // Another (live) process is taking the stale lock over: this one leaves it alone and,
      // after its time bound, says the lock keeps changing.
      writeFileSync(lock, '999999999\n');
      writeFileSync(claim, `${process.ppid}\n`);
      assert.throws(() => lockStore(dir), /keeps changing/);
      assert.equal(readFileSync(lock, 'utf8'), '999999999\n');
      // A claim whose process is gone (it died mid-takeover) is cleared, and the lock taken.
      writeFileSync(claim, '999999998\n');
      const release = lockStore(dir);
      assert.equal(readFileSync(lock, 'utf8'), `${process.pid}\n`);
      assert.equal(existsSync(claim), false);
      release();
      assert.equal(existsSync(lock), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
