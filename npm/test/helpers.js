import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const bin = fileURLToPath(new URL('../bin/memloom.js', import.meta.url));
export const fixtures = fileURLToPath(new URL('./fixtures', import.meta.url));

/** The recall JSON contract (DESIGN.md), in order. */
export const RESULT_KEYS = ['id', 'kind', 'source', 'breadcrumb', 'key', 'content', 'rrfScore', 'similarity', 'ranks'];

/** Runs the CLI; `async: true` returns a promise (needed when the test serves HTTP itself). */
export function runCli(args, { env = {}, async = false } = {}) {
  const fullEnv = { ...process.env, DATABASE_URL: '', MEMLOOM_EMBED_URL: '', ...env };
  for (const k of Object.keys(fullEnv)) if (fullEnv[k] === '') delete fullEnv[k];
  if (!async) {
    const r = spawnSync(process.execPath, [bin, ...args], { env: fullEnv, encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: fullEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
