// The embedded store's lock file (src/lock-node.js takePidLock, also the warm process's spawn
// lock) under processes racing for it: two processes must never hold one store at once (PGlite in each would write the same files as if
// alone: lost writes, a corrupted store, a backend spinning on a lock nobody holds).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const LOCK_MODULE = pathToFileURL(fileURLToPath(new URL('../src/lock-node.js', import.meta.url))).href;

// One racer: from a common start instant, ROUNDS times: take the lock (or be refused), and
// while holding it claim an "inside" marker with O_EXCL; a marker already there means another
// process holds the lock too. Prints its counts as JSON.
const RACER = `
import { lockStore, LOCK_FILE } from ${JSON.stringify(LOCK_MODULE)};
import { openSync, closeSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [dir, start, rounds] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
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
  release();
}
process.stdout.write(JSON.stringify(out));
`;

function race(dir, script, start, rounds) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', RACER, dir, String(start), String(rounds)], {
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
    const counts = await Promise.all(Array.from({ length: procs }, () => race(dir, RACER, start, rounds)));
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
