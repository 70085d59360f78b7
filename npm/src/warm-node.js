// The client side of the CLI's warm process (cli/warm-server.js): a per-store process that keeps
// an embedded store open and serves CLI commands over a Unix domain socket inside the store
// directory (never TCP), so that a command skips PGlite's start and the first query's planning
// (issue 19, item 3; docs/NPM.md "The warm process"). Node builtins only: the CLI's fast path
// (cli/warm.js) loads this before anything heavy.
//
// Protocol: one request per connection, one JSON line each way.
//   {op: 'hello'}  -> {pid, owner, namespace, version, dir, startedAt, idleSeconds, requests, lastUsedAt}
//                     (owner: 'warm', the warm process; 'mcp', `memloom mcp`, cli/warm-socket.js)
//   {op: 'stop'}   -> {stopping: true, pid}; the process then closes the store and exits
//                     ({stopping: false, pid, owner: 'mcp'}: `memloom mcp` does not stop)
//   {op: 'run', argv, cwd, env, version, pkg} -> {accepted: true} then {code, out, err};
//                                               or {retry: why, pid} (not run)
// The store's lock file (lock-node.js) names the process that holds the store; the warm process
// holds it like any other, so the cold path can never open a store it serves.
import { createHash } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive, lockHolder } from './lock-node.js';

/** The socket's file name inside the store directory. */
export const SOCKET_FILE = 'daemon.sock';
/** The spawn lock, inside the store directory: the pid of the one process starting the store's
 * warm process (a CLI running the first command, then the warm process itself; cli/warm.js). */
export const SPAWN_FILE = 'daemon.spawn';
/** How long a CLI waits for a warm process to start (PGlite's start, on a loaded machine). */
export const START_MS = 60000;

/**
 * Where the warm process of the store in `dir` (absolute) listens: DIR/daemon.sock, or, when that
 * path is too long for a Unix socket (about 104 bytes), a name derived from DIR in the temp dir.
 * @param {string} dir
 */
export function socketPath(dir) {
  const p = join(dir, SOCKET_FILE);
  if (Buffer.byteLength(p) <= 100) return p;
  return join(tmpdir(), `memloom-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}.sock`);
}

/**
 * Sends one request; resolves to the reply, or null when nothing listens (no socket, a stale
 * socket file, a process that closed the connection before taking the request). A run is taken
 * with an {accepted: true} line before it runs: a connection lost after that resolves to
 * {lost: true} (the command may have been applied), before it to null (it was not).
 * @param {string} dir
 * @param {object} msg
 * @param {{ timeoutMs?: number }} [o]  only for hello/stop: a run waits as long as its command takes
 * @returns {Promise<any>}
 */
export function request(dir, msg, { timeoutMs } = {}) {
  return new Promise((resolve) => {
    const sock = connect(socketPath(dir));
    let buf = '';
    let accepted = false;
    let done = false;
    /** @param {any} v */
    const finish = (v) => {
      if (done) return;
      done = true;
      sock.destroy();
      resolve(v);
    };
    if (timeoutMs) sock.setTimeout(timeoutMs, () => finish(null));
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(JSON.stringify(msg) + '\n'));
    sock.on('data', (d) => {
      buf += d;
      for (let nl = buf.indexOf('\n'); nl >= 0 && !done; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let v;
        try {
          v = JSON.parse(line);
        } catch {
          v = null;
        }
        if (v?.accepted === true) accepted = true;
        else finish(v ?? (accepted ? { lost: true } : null));
      }
    });
    const lost = () => finish(accepted ? { lost: true } : null);
    sock.on('error', lost);
    sock.on('close', lost);
  });
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Removes the spawn lock at `path` when it names this process (else leaves it). @param {string} path */
export function releaseSpawnLock(path) {
  try {
    if (Number.parseInt(readFileSync(path, 'utf8'), 10) === process.pid) unlinkSync(path);
  } catch {}
}

/**
 * Waits while the spawn lock at `path` names another live process (a warm process on its way
 * up): true once it is released or its process is gone, false after START_MS.
 * @param {string} path
 */
export async function waitSpawnLock(path) {
  const until = Date.now() + START_MS;
  while (Date.now() < until) {
    let pid;
    try {
      pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    } catch {
      return true; // released
    }
    if (!Number.isInteger(pid) || pid === process.pid || !alive(pid)) return true; // never on itself
    await sleep(20);
  }
  return false;
}

/**
 * Waits until process `pid` has exited (true) or `ms` passed (false), looking every `everyMs`.
 * @param {number} pid
 * @param {number} ms
 * @param {number} [everyMs]
 */
export async function waitExit(pid, ms, everyMs = 15) {
  const until = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > until) return false;
    await sleep(everyMs);
  }
  return true;
}

/**
 * The warm process of the store in `dir`, if one answers: its hello reply, else null. One on its
 * way up is waited for (a first command starts it as that command ends: cli/warm.js, Handoff).
 * @param {string} dir
 */
export async function warmStatus(dir) {
  await waitSpawnLock(join(dir, SPAWN_FILE));
  return request(dir, { op: 'hello' }, { timeoutMs: 5000 });
}

/**
 * Stops the warm process of the store in `dir` and waits until it has closed the store.
 * Resolves to {stopped: false} when none answers, {stopped: false, pid, owner: 'mcp'} when the
 * socket is `memloom mcp`'s (which refuses), else {stopped: true, pid}.
 * @param {string} dir
 * @param {{ waitMs?: number }} [o]
 */
export async function stopWarm(dir, { waitMs = 30000 } = {}) {
  await waitSpawnLock(join(dir, SPAWN_FILE)); // one on its way up holds the store already
  const r = await request(dir, { op: 'stop' }, { timeoutMs: 5000 });
  if (!r?.pid) return { stopped: false };
  // `memloom mcp` serves the socket too, and stops only when its MCP client goes.
  if (r.stopping !== true) return { stopped: false, pid: r.pid, owner: r.owner };
  if (!(await waitExit(r.pid, waitMs))) {
    throw new Error(`the warm process (pid ${r.pid}) of ${dir} did not exit within ${waitMs / 1000} s; stop it with: kill ${r.pid}`);
  }
  return { stopped: true, pid: r.pid };
}

/**
 * When the lock of the store in `dir` is held by its warm process, stops it and resolves true
 * once it is gone (the caller takes the lock then); false when the holder is anything else.
 * @param {string} dir
 */
export async function releaseFromWarm(dir) {
  // First: warmStatus waits for a warm process on its way up, which holds the store before it
  // listens.
  const hello = await warmStatus(dir);
  const holder = lockHolder(dir);
  if (holder === null) return true; // let go meanwhile (a warm process that gave up): take it
  if (hello?.pid !== holder) return false;
  if (hello.owner === 'mcp') return false; // it serves its MCP client until that goes: the opener's lock error stands
  return (await stopWarm(dir)).stopped;
}
