// An exclusive lock on an embedded store's directory (Node). PGlite is one Postgres backend
// per process with no shared memory between processes: two processes on one directory each
// write its files as if alone and corrupt the store. The lock file `DIR/memloom.lock` holds the
// owner's pid; it is created with O_EXCL, removed on close and at exit, and a lock whose process
// is gone (after a crash or SIGKILL) is taken over.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
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

/** Takes the lock or throws "store in use by pid N"; returns the release function. */
export function lockStore(dir) {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (e) {
      if (e.code !== 'EEXIST') throw new MemloomError(`cannot lock the store at ${dir}: ${e.message}`);
      const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new MemloomError(
          `store ${dir} in use by pid ${pid}; an embedded store is one process at a time: wait for it, ` +
            `or use a PostgreSQL server (--database-url) for concurrent clients`,
        );
      }
      if (pid === process.pid) {
        throw new MemloomError(`store ${dir} is already open in this process; close it first`);
      }
      // Stale (its process is gone) or unreadable: take it over.
      try {
        unlinkSync(path);
      } catch {}
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.off('exit', release);
      try {
        if (Number.parseInt(readFileSync(path, 'utf8'), 10) === process.pid) unlinkSync(path);
      } catch {}
    };
    process.on('exit', release);
    return release;
  }
  throw new MemloomError(`cannot lock the store at ${dir}: the lock file keeps changing; is another process starting?`);
}
