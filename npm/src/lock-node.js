// An exclusive lock on an embedded store's directory (Node). PGlite is one Postgres backend
// per process with no shared memory between processes: two processes on one directory each
// write its files as if alone and corrupt the store. The lock file `DIR/memloom.lock` holds the
// owner's pid; it appears with that pid in it at once (createLock), is removed on close and at
// exit, and a lock whose process is gone (after a crash or SIGKILL) is taken over.
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { MemloomError } from './errors.js';

export const LOCK_FILE = 'memloom.lock';

/** Whether process `pid` runs (a zombie does not). @param {number} pid */
export function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return e.code === 'EPERM'; // exists, owned by someone else
  }
  // A killed process nobody has reaped yet (a zombie) answers kill(0) but holds nothing.
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc (macOS): trust kill(0)
  }
}

/** The pid in a store's lock file when that process is alive, else null. @param {string} dir */
export function lockHolder(dir) {
  let pid;
  try {
    pid = Number.parseInt(readFileSync(join(dir, LOCK_FILE), 'utf8').trim(), 10);
  } catch {
    return null;
  }
  return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : null;
}

/**
 * Creates the lock file holding this process's pid, all at once: written under a private name,
 * then hard-linked to `path`, which fails if it exists. Created empty and then written, a racing
 * process could read it empty in between, take it for a dead one's and take it over while its
 * owner went on: two processes on one store (or two warm processes racing for it). Where the
 * file system has no hard links, the O_EXCL create and write. Returns false when it exists.
 * @param {string} path
 */
function createLock(path) {
  const own = `${path}.${process.pid}`;
  writeFileSync(own, `${process.pid}\n`, { mode: 0o644 });
  try {
    linkSync(own, path);
    return true;
  } catch (e) {
    if (e.code === 'EEXIST') return false;
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(e.code)) throw e;
  } finally {
    try {
      unlinkSync(own);
    } catch {}
  }
  let fd;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (e) {
    if (e.code === 'EEXIST') return false;
    throw e;
  }
  writeSync(fd, `${process.pid}\n`);
  closeSync(fd);
  return true;
}

/** The pid a lock file names: NaN when it names none, undefined when it is gone. @param {string} path */
function readLock(path) {
  try {
    return Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
  } catch (e) {
    if (e.code === 'ENOENT') return undefined;
    return Number.NaN;
  }
}

const KEEPS_CHANGING = 'the lock file keeps changing; is another process starting?';
const TAKEOVER_MS = 2000;

/** Whether `pid` (from readLock) names a process that runs. @param {number | undefined} pid */
const live = (pid) => Number.isInteger(pid) && pid > 0 && (pid === process.pid || alive(pid));

/** @param {number} ms */
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Takes the pid lock file at `path` (the store's lock, the warm process's spawn lock): true once
 * this process holds it, or the pid of the live process that does (this process's own when it
 * already holds it). A lock whose process is gone, or that names none, is taken over. Throws the
 * file system's error when the file cannot be written, and KEEPS_CHANGING when it kept changing
 * (or another process's takeover held it) for TAKEOVER_MS.
 *
 * A live process's lock is never moved or removed by another: a stale one is removed only by
 * the process that claims it (`path.stale-PID`, itself a pid lock), after reading it again
 * under the claim. Moving a stale lock aside and putting back what turned out live (as before)
 * could put back a lock its owner had released meanwhile (the store then locked by a process
 * that no longer held it), or lose a live lock to a third process taking the empty place.
 * @param {string} path
 * @returns {true | number}
 */
export function takePidLock(path) {
  // Bounded in time: a takeover holds its claim for microseconds, unless its process is
  // descheduled on a loaded machine.
  const until = Date.now() + TAKEOVER_MS;
  for (let attempt = 0; attempt < 1000 && Date.now() < until; attempt++) {
    if (createLock(path)) return true;
    const pid = readLock(path);
    if (pid === undefined) continue; // released meanwhile: try again
    if (live(pid)) return /** @type {number} */ (pid);
    const claim = `${path}.stale-${Number.isInteger(pid) && pid > 0 ? pid : 'unreadable'}`;
    if (!createLock(claim)) {
      const claimer = readLock(claim);
      if (claimer !== undefined && !live(claimer)) {
        try {
          unlinkSync(claim); // its claimer died in the middle of a takeover
        } catch {}
      } else {
        pause(2); // another process is taking it over
      }
      continue;
    }
    try {
      const again = readLock(path);
      if (again === pid || (Number.isNaN(again) && Number.isNaN(pid))) unlinkSync(path);
    } catch {
    } finally {
      try {
        unlinkSync(claim);
      } catch {}
    }
  }
  throw new Error(KEEPS_CHANGING);
}

/** Takes the lock or throws "store in use by pid N"; returns the release function. */
export function lockStore(dir) {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  let held;
  try {
    held = takePidLock(path);
  } catch (e) {
    throw new MemloomError(`cannot lock the store at ${dir}: ${e.message}`);
  }
  if (held === process.pid) {
    throw new MemloomError(`store ${dir} is already open in this process; close it first`);
  }
  if (held !== true) {
    throw new MemloomError(
      `store ${dir} in use by pid ${held}; an embedded store is one process at a time: wait for it, ` +
        `or use a PostgreSQL server (--database-url) for concurrent clients`,
    );
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    if (readLock(path) === process.pid) {
      try {
        unlinkSync(path);
      } catch {}
    }
  };
  process.on('exit', release);
  return release;
}
