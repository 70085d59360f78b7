// The CLI's fast path (bin/memloom.js runs it before loading the CLI): a command that only
// reads or writes a few rows of an existing embedded store (recall, remember, forget, stats,
// history) is sent to the store's warm socket, served by its warm process (warm-server.js) or
// by the `memloom mcp` that holds the store (warm-socket.js), and prints what the process sends
// back: the same output, without PGlite's start and the first query's planning (issue 19, item
// 3). When nothing listens, the CLI runs the command itself and the warm process takes the store
// after it (Handoff, below). Anything else, and every case where the warm process is disabled
// (daemon.idleSeconds 0), cannot start, or went away, returns undefined and the CLI runs the
// command itself (the cold path; lock-node.js guarantees it never opens a store a warm process
// holds: entry-node.js asks that process to close the store first).
// Node builtins only, so that this path stays cheap.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configPaths } from '../config-paths-node.js';
import { takePidLock } from '../lock-node.js';
import { SPAWN_FILE, START_MS, releaseSpawnLock, request, stopWarm, waitExit, waitSpawnLock } from '../warm-node.js';

/** The commands the warm process serves. */
export const WARM_COMMANDS = ['recall', 'remember', 'forget', 'stats', 'history'];
/** Global options that take a value (spec.js GLOBAL_OPTIONS). */
const VALUE_OPTIONS = ['--store', '--database-url', '--namespace', '--embedder'];
/** Tokens that keep a command on the cold path: help and version (commander prints them), and
 * the file-streaming forms (recall --batch, remember --file: progress on a TTY, long runs). */
const COLD_TOKENS = ['-h', '--help', '-V', '--version', '--batch', '--file', '--'];

export const PKG_DIR = fileURLToPath(new URL('../..', import.meta.url));
const SERVER = fileURLToPath(new URL('./warm-server.js', import.meta.url));

/**
 * What the fast path needs from the command line, or null when it is not a warm command.
 * @param {string[]} argv
 * @returns {{ command: string, store?: string, url?: string, namespace?: string, embedder?: string } | null}
 */
export function warmCommand(argv) {
  const c = shortCommand(argv);
  if (c === null || !WARM_COMMANDS.includes(c.command)) return null;
  return { command: c.command, store: c.g.store, url: c.g['database-url'], namespace: c.g.namespace, embedder: c.g.embedder };
}

/**
 * The command and the global options' values of a command line that reads or writes a few rows
 * (no help, version, --batch or --file), or null.
 * @param {string[]} argv
 * @returns {{ command: string, g: Record<string, string> } | null}
 */
function shortCommand(argv) {
  /** @type {Record<string, string>} */
  const g = {};
  let command;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (COLD_TOKENS.includes(a)) return null;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    if (VALUE_OPTIONS.includes(name)) {
      const value = name === a ? argv[++i] : a.slice(eq + 1);
      if (value === undefined) return null;
      g[name.slice(2)] = value;
    } else if (command === undefined && !a.startsWith('-')) command = a;
  }
  return command === undefined ? null : { command, g };
}

/**
 * Whether this process runs one short command and exits: a warm command, or `init`. Such a
 * process runs most of PGlite's WebAssembly (PostgreSQL, about 9 MB) a handful of times, and
 * V8's optimizing tier (TurboFan), compiling hot functions in the background on a machine's few
 * cores, never pays for itself within it: bin/memloom.js then keeps V8 to its baseline compiler
 * (`--liftoff-only`). A cold `recall` or `remember` on the Node docs store took 0.66 and 0.71 s
 * with both tiers, 0.42 and 0.40 s with the baseline alone, `init` 0.61-0.66 against 0.51 s.
 * Long work keeps both tiers (ingest of the Node docs 3.06 s with them, 3.46 s without; `index`
 * 4.54 against 5.43 s), and so does the warm process, a process of its own. The tiers compute
 * the same results.
 * @param {string[]} argv
 */
export function oneShot(argv) {
  const c = shortCommand(argv);
  return c !== null && (WARM_COMMANDS.includes(c.command) || c.command === 'init');
}

/**
 * The V8 flags bin/memloom.js sets before any WebAssembly is compiled: `--liftoff-only` for a
 * one-shot command (oneShot), and for long work a tiering budget ten times V8's default, so
 * that the store's open and first queries stay on the baseline compiler and only the functions
 * a long run keeps hot move to TurboFan. At the default budget the open already sends hundreds
 * of PGlite's functions there, compiled on background threads a 2-core machine cannot spare;
 * ten times it, five alternated runs on the Node docs (2026-12-07): `index` with nothing to do
 * 1.34 -> 1.11 s, the ingest into a new store 5.91 -> 5.33 s, the full `index` that follows
 * 5.94 -> 5.49 s, each faster in four or five runs of five. (The warm process sets its own,
 * larger budget: cli/warm-server.js.)
 * @param {string[]} argv
 * @returns {string[]}
 */
export function v8Flags(argv) {
  return oneShot(argv) ? ['--liftoff-only'] : ['--wasm-tiering-budget=18000000'];
}

/**
 * daemon.idleSeconds as the environment or a config file sets it (undefined: not set). Only read
 * here to skip the warm process when it is 0; the warm process reads and checks the settings
 * fully (config-node.js), and a bad file makes it refuse to start (the cold path then says why).
 * @param {string} dir
 */
export function idleSetting(dir) {
  const env = process.env;
  if (env.MEMLOOM_DAEMON_IDLE !== undefined && env.MEMLOOM_DAEMON_IDLE !== '') return Number(env.MEMLOOM_DAEMON_IDLE);
  const paths = configPaths({ dir, env });
  for (const p of [paths.store, paths.user]) {
    try {
      const v = JSON.parse(readFileSync(p, 'utf8'))?.daemon?.idleSeconds;
      if (v !== undefined) return Number(v);
    } catch {}
  }
  return undefined;
}

/**
 * Runs `argv` in the store's warm process when it is a warm command on an embedded store;
 * resolves to its exit code, or else the CLI runs it itself: undefined, or a Handoff when no
 * process serves the store yet (the CLI calls its `after` once the command is done). Never throws.
 * @param {string[]} argv
 * @returns {Promise<number | Handoff | undefined>}
 */
export async function tryWarm(argv) {
  let sent = false;
  try {
    if (process.platform === 'win32') return undefined; // Unix domain sockets only
    const w = warmCommand(argv);
    if (!w || w.url || process.env.DATABASE_URL) return undefined;
    const dir = resolve(w.store ?? '.memloom');
    if (!existsSync(join(dir, 'PG_VERSION'))) return undefined; // the cold path says "run init"
    if (idleSetting(dir) === 0) return undefined;
    const version = JSON.parse(readFileSync(join(PKG_DIR, 'package.json'), 'utf8')).version;
    const req = { op: 'run', argv, cwd: process.cwd(), env: process.env, version, pkg: PKG_DIR };
    for (let attempt = 0; attempt < 3; attempt++) {
      let r = await request(dir, req);
      if (r === null) {
        // Nothing listens: this CLI runs the command itself and the warm process it spawns takes
        // the store after it (a Handoff), unless another CLI is starting one, which this one
        // then waits for.
        const spawnLock = join(dir, SPAWN_FILE);
        const lock = takeSpawnLock(spawnLock);
        if (lock === 'taken') return handoff(dir, w, spawnLock);
        if (lock === 'error' || !(await waitSpawnLock(spawnLock))) return undefined;
        r = await request(dir, req);
        if (r === null) return undefined;
      }
      sent = true;
      if (r.lost) {
        process.stderr.write(
          `memloom: error: the store's warm process went away while running the command, which may or may not have been applied: check (recall, history) before running it again; \`memloom daemon status\` shows whether it runs\n`,
        );
        return 2;
      }
      sent = false;
      if (typeof r.code === 'number') {
        process.stdout.write(r.out);
        process.stderr.write(r.err);
        return r.code;
      }
      // Not served: exiting (idle), or another version, store, namespace or embedder. The warm
      // process is stopped for one that matches; `memloom mcp` is not (its client needs it),
      // and the cold path meets the store's lock as before.
      if (r.retry === 'exiting') await waitExit(r.pid, 30000);
      else if (r.owner === 'mcp') return undefined;
      else await stopWarm(dir);
    }
    return undefined;
  } catch (e) {
    if (!sent) return undefined;
    throw e;
  }
}

/**
 * @typedef {{ after: (code: number) => void }} Handoff
 * The first warm command on a store nothing serves runs cold, in the CLI, and the warm process
 * takes the store only after it, for the commands that follow. Waiting for the warm process first
 * made that command cost a cold one and more (1.0 s against 0.58 s on the Node docs store): the
 * warm process's start, then the command in a backend that had planned nothing yet. An agent
 * whose calls come further apart than daemon.idleSeconds paid that on every call.
 *
 * The warm process is spawned as the command starts (detached; `after`: this CLI's pid), so that
 * its Node start and module loading (about 0.2 s) run beside the command on another core (on a
 * machine with one, as the command ends); it opens the store once this CLI has exited, and only
 * if the spawn lock then names it. This CLI holds the spawn lock while its command runs, so a
 * CLI that comes meanwhile waits (waitSpawnLock) instead of racing it for the store. `after(code)`: on success the lock passes
 * to the warm process (its pid written in place; it removes the lock once it listens or gives
 * up); on failure the warm process is killed and the lock released, so nothing starts. A CLI
 * killed before `after` leaves the lock naming itself (or no lock): the warm process exits.
 * @param {string} dir
 * @param {{ namespace?: string, embedder?: string }} g
 * @param {string} spawnLock
 * @returns {Handoff}
 */
function handoff(dir, g, spawnLock) {
  const release = () => releaseSpawnLock(spawnLock);
  process.on('exit', release);
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child;
  const start = () => {
    try {
      const init = JSON.stringify({ dir, namespace: g.namespace, embedder: g.embedder, spawnLock, after: process.pid });
      child = spawn(process.execPath, [SERVER, init], { detached: true, stdio: 'ignore', env: process.env });
      child.on('error', () => {});
      child.unref();
    } catch {}
  };
  const stop = () => {
    try {
      child?.kill('SIGKILL'); // it has opened nothing: it waits for this process to exit
    } catch {}
  };
  // On one CPU the warm process's start would take its time from the command's.
  const early = availableParallelism() > 1;
  if (early) start();
  return {
    after(code) {
      process.off('exit', release);
      if (code === 0 && !early) start();
      if (code !== 0 || !child?.pid) {
        stop();
        return release();
      }
      try {
        const mine = `${spawnLock}.${process.pid}`;
        writeFileSync(mine, `${child.pid}\n`, { mode: 0o644 });
        renameSync(mine, spawnLock);
      } catch {
        stop();
        release();
      }
    },
  };
}

/**
 * Starts the warm process of the store in `dir` (or waits for the CLI that is starting it);
 * resolves to whether one may be listening now.
 * @param {string} dir
 * @param {{ namespace?: string, embedder?: string }} g
 */
export async function startWarm(dir, g) {
  const path = join(dir, SPAWN_FILE);
  const lock = takeSpawnLock(path);
  if (lock === 'busy') return waitSpawnLock(path);
  if (lock !== 'taken') return false;
  const release = () => releaseSpawnLock(path);
  process.on('exit', release);
  try {
    return await spawnServer(dir, g);
  } finally {
    release();
    process.off('exit', release);
  }
}

/**
 * The spawn lock, a pid lock file like the store's (lock-node.js takePidLock: it appears with its
 * pid already in it, so another CLI never reads it empty and takes it for gone).
 * @param {string} path @returns {'taken' | 'busy' | 'error'}
 */
function takeSpawnLock(path) {
  try {
    return takePidLock(path) === true ? 'taken' : 'busy';
  } catch {
    return 'error';
  }
}

/**
 * Spawns warm-server.js detached (its own session, no terminal, stdin/stderr ignored) and waits
 * for its "ready" or "fail" line on stdout.
 * @param {string} dir
 * @param {{ namespace?: string, embedder?: string }} g
 */
function spawnServer(dir, g) {
  return new Promise((done) => {
    const init = JSON.stringify({ dir, namespace: g.namespace, embedder: g.embedder });
    const child = spawn(process.execPath, [SERVER, init], { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env: process.env });
    let line = '';
    let settled = false;
    /** @param {boolean} ok */
    const settle = (ok) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout?.destroy();
      child.unref();
      if (!ok && child.exitCode === null) child.kill(); // started here, failed to come up
      done(ok);
    };
    const timer = setTimeout(() => settle(false), START_MS);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (d) => {
      line += d;
      if (line.includes('\n')) settle(line.startsWith('ready'));
    });
    child.on('error', () => settle(false));
    child.on('exit', () => settle(false));
  });
}
