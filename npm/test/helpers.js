import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const bin = fileURLToPath(new URL('../bin/memloom.js', import.meta.url));
export const fixtures = fileURLToPath(new URL('./fixtures', import.meta.url));

/** The recall JSON contract (DESIGN.md), in order. */
export const RESULT_KEYS = ['id', 'kind', 'source', 'breadcrumb', 'key', 'content', 'rrfScore', 'similarity', 'ranks'];

/** An empty user config directory, so the developer's ~/.config/memloom never leaks into tests. */
export const emptyXdg = mkdtempSync(join(tmpdir(), 'memloom-xdg-'));
// Each test file's process made one and left it behind in the temporary directory.
process.on('exit', () => rmSync(emptyXdg, { recursive: true, force: true }));

/**
 * Runs the CLI; `async: true` returns a promise (needed when the test serves HTTP itself).
 * The user config is an empty directory's (emptyXdg) unless `env` sets XDG_CONFIG_HOME. The warm
 * process is off (MEMLOOM_DAEMON_IDLE=0: no test leaves one behind, holding a store dir a later
 * step opens) unless `env` sets MEMLOOM_DAEMON_IDLE (warm.test.js).
 */
export function runCli(args, { env = {}, async = false, cwd } = {}) {
  const fullEnv = { ...process.env, DATABASE_URL: '', MEMLOOM_EMBED_URL: '', XDG_CONFIG_HOME: emptyXdg, MEMLOOM_DAEMON_IDLE: '0', ...env };
  for (const k of Object.keys(fullEnv)) if (fullEnv[k] === '') delete fullEnv[k];
  if (!async) {
    const r = spawnSync(process.execPath, [bin, ...args], { env: fullEnv, encoding: 'utf8', cwd });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: fullEnv, cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * Faults in a store's write transactions (store.db.transaction): the `failAt`-th fails with
 * "disk full", the `slowAt`-th waits `slowMs` before it runs. `ended` is the number of the last
 * write that completed, so a test can tell whether one was still in flight.
 * @param {{ db: { transaction: (fn: any) => Promise<any> } }} store
 * @param {{ failAt?: number, slowAt?: number, slowMs?: number }} faults
 */
export function faultyWrites(store, { failAt, slowAt, slowMs = 200 }) {
  const transaction = store.db.transaction;
  const state = { writes: 0, ended: 0 };
  store.db.transaction = async (fn) => {
    const n = ++state.writes;
    if (n === failAt) throw new Error('disk full');
    if (n === slowAt) await new Promise((r) => setTimeout(r, slowMs));
    const out = await transaction(fn);
    state.ended = n;
    return out;
  };
  return state;
}
