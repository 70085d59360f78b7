// CLI wall time (issue 19, item 3). Each command a fresh `node bin/memloom.js` process:
// - cold: `init` of a new store, `remember` and `recall` on an existing store with the warm
//   process off (MEMLOOM_DAEMON_IDLE=0), and with --baseline the same commands of another
//   checkout of the CLI (e.g. main's);
// - warm (--warm): `remember` and `recall` on a copy of the store served by its warm process
//   (src/cli/warm.js; the first call, which starts it, is reported on its own line); and on
//   copies with no warm process, a first `recall` and the next one, right after it or 1.5 s
//   later (`recall first`, `recall next`; with --baseline the other CLI's too);
// - `node -e 0`: the floor any CLI pays here.
// All interleaved in one run, the order alternating per run, so the ratios hold on a loaded
// machine. With --mcp N: `memloom mcp` on a copy of the store, N remember and N recall tool
// calls over stdio (the SDK's client), p50 / p95 per call, then `recall` from the CLI on that
// store while the server runs (served by it: one PGlite owner). Prints medians, mins and ratios.
//   node bench/cli.js --store DIR [--baseline OTHER/npm] [--runs 5] [--warm] [--mcp 50]
// DIR: an embedded store to remember into and recall from (e.g. the Node docs, 10k items). The
// copies live in a temp dir, removed at the end with the warm process stopped.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: { store: { type: 'string' }, baseline: { type: 'string' }, runs: { type: 'string', default: '5' }, warm: { type: 'boolean' }, mcp: { type: 'string' } },
});
if (!opt.store) throw new Error('usage: node bench/cli.js --store DIR [--baseline OTHER/npm] [--runs N] [--warm] [--mcp N]');
const runs = Number(opt.runs);
const here = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'memloom-bench-cli-'));
const COLD = { MEMLOOM_DAEMON_IDLE: '0' };
const WARM = { MEMLOOM_DAEMON_IDLE: '600' };
const env = (extra) => ({ ...process.env, DATABASE_URL: '', ...extra });

/** recall's own time (its "N results in X ms" line) per variant. */
const queryMs = {};
let current = '';
function wall(pkg, args, extra = COLD) {
  const t = performance.now();
  const r = spawnSync(process.execPath, [join(pkg, 'bin/memloom.js'), ...args], { encoding: 'utf8', env: env(extra) });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  const took = /results in ([\d.]+) ms/.exec(r.stderr);
  if (took && current) (queryMs[current] ??= []).push(Number(took[1]));
  return ms;
}
function nodeFloor() {
  const t = performance.now();
  spawnSync(process.execPath, ['-e', '0']);
  return performance.now() - t;
}

const warmStore = join(tmp, 'warm-store');
const q = 'how do I read a file line by line';
/** @type {[string, (i: number) => number][]} */
const variants = [
  ['node -e 0', () => nodeFloor()],
  ['init cold', (i) => wall(here, ['init', '--store', join(tmp, `init-this-${i}`)])],
  ['remember cold', (i) => wall(here, ['remember', `bench note cold ${i}: deploys freeze on Fridays`, '--key', 'bench-cold', '--store', opt.store])],
  ['recall cold', () => wall(here, ['recall', q, '--store', opt.store])],
];
if (opt.baseline) {
  variants.push(
    ['init baseline', (i) => wall(opt.baseline, ['init', '--store', join(tmp, `init-base-${i}`)])],
    ['remember baseline', (i) => wall(opt.baseline, ['remember', `bench note base ${i}: deploys freeze on Fridays`, '--key', 'bench-base', '--store', opt.store])],
    ['recall baseline', () => wall(opt.baseline, ['recall', q, '--store', opt.store])],
  );
}
/** Blocks for ms (between two commands of a variant; the bench runs everything in sequence). */
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
/**
 * A call that finds no warm process (the store's first, or one after the idle exit), then a
 * second call right after it, on a store of its own; with `gap`, the second comes that many ms
 * later instead (an agent's next call). Records both under `${label} ...` names.
 * @param {string} pkg @param {string} label @param {string} store @param {number} [gap]
 */
function firstThenNext(pkg, label, store, gap) {
  wall(pkg, ['daemon', 'stop', '--store', store]);
  const first = wall(pkg, ['recall', q, '--store', store], WARM);
  if (gap) pause(gap);
  const next = wall(pkg, ['recall', 'read a file line by line', '--store', store], WARM);
  return { [`${label} first`]: first, [`${label} next${gap ? ` (${gap / 1000} s later)` : ''}`]: next };
}
let firstWarm;
if (opt.warm) {
  cpSync(opt.store, warmStore, { recursive: true });
  firstWarm = wall(here, ['recall', q, '--store', warmStore], WARM); // starts the warm process
  variants.push(
    ['remember warm', (i) => wall(here, ['remember', `bench note warm ${i}: deploys freeze on Fridays`, '--key', 'bench-warm', '--store', warmStore], WARM)],
    ['recall warm', () => wall(here, ['recall', q, '--store', warmStore], WARM)],
  );
  // The first call and the one after it, back to back and 1.5 s apart (and the baseline's).
  for (const [pkg, label] of [[here, 'recall'], ...(opt.baseline ? [[opt.baseline, 'baseline']] : [])]) {
    const store = join(tmp, `first-${label}`);
    cpSync(opt.store, store, { recursive: true });
    variants.push([`${label} first, next`, () => firstThenNext(pkg, label, store)], [`${label} first, pause`, () => firstThenNext(pkg, `${label} paused`, store, 1500)]);
  }
}

const times = {};
const load0 = loadavg()[0];
for (let i = 0; i < runs; i++) {
  const order = i % 2 ? [...variants].reverse() : variants;
  for (const [name, fn] of order) {
    current = name;
    const got = fn(i);
    for (const [n, ms] of Object.entries(typeof got === 'number' ? { [name]: got } : got)) {
      (times[n] ??= []).push(ms);
      process.stderr.write(`run ${i + 1}: ${n} ${ms.toFixed(0)} ms\n`);
    }
  }
}
const load1 = loadavg()[0];
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const row = (name) => `${name.padEnd(18)} median ${med(times[name]).toFixed(0).padStart(6)} ms, min ${Math.min(...times[name]).toFixed(0).padStart(6)} ms`;
console.log(`CLI wall time, ${runs} runs each, interleaved; load average ${load0.toFixed(1)} -> ${load1.toFixed(1)} on this machine`);
for (const name of Object.keys(times)) console.log(row(name));
for (const [name, xs] of Object.entries(queryMs)) console.log(`${name.padEnd(18)} of which the recall itself (its tookMs): median ${med(xs).toFixed(0)} ms`);
if (firstWarm !== undefined) console.log(`${'first warm call'.padEnd(18)} ${firstWarm.toFixed(0)} ms (starts the warm process, then runs recall)`);
const ratio = (a, b) => (times[a] && times[b] ? (med(times[a]) / med(times[b])).toFixed(2) : null);
for (const cmd of ['init', 'remember', 'recall']) {
  const r = [
    ratio(`${cmd} cold`, `${cmd} baseline`) && `cold / baseline ${ratio(`${cmd} cold`, `${cmd} baseline`)}`,
    ratio(`${cmd} warm`, `${cmd} cold`) && `warm / cold ${ratio(`${cmd} warm`, `${cmd} cold`)}`,
    ratio(`${cmd} warm`, 'node -e 0') && `warm / node -e 0 ${ratio(`${cmd} warm`, 'node -e 0')}`,
  ].filter(Boolean);
  if (r.length) console.log(`${cmd.padEnd(18)} ${r.join('; ')}`);
}
if (opt.warm) {
  wall(here, ['daemon', 'stop', '--store', warmStore]);
  wall(here, ['daemon', 'stop', '--store', join(tmp, 'first-recall')]);
  if (opt.baseline) wall(opt.baseline, ['daemon', 'stop', '--store', join(tmp, 'first-baseline')]);
}

if (opt.mcp) {
  const n = Number(opt.mcp);
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const mcpStore = join(tmp, 'mcp-store');
  cpSync(opt.store, mcpStore, { recursive: true });
  // With the warm process on, the MCP server also serves the store's warm socket (the CLI beside it).
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(here, 'bin/memloom.js'), 'mcp', '--store', mcpStore], env: env(WARM), stderr: 'ignore' });
  const client = new Client({ name: 'memloom-bench', version: '1.0.0' });
  let t = performance.now();
  await client.connect(transport);
  const connectMs = performance.now() - t;
  const lat = { remember: [], recall: [] };
  for (let i = 0; i < n; i++) {
    for (const [name, args] of [
      ['remember', { text: `mcp bench note ${i}: the deploy freeze moved to Thursday`, key: `mcp-bench-${i % 10}` }],
      ['recall', { query: i % 2 ? q : 'deploy freeze thursday' }],
    ]) {
      t = performance.now();
      const r = await client.callTool({ name, arguments: args });
      lat[name].push(performance.now() - t);
      if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
    }
  }
  // The CLI beside it: `recall` on the store the MCP server holds, served by it (warm).
  const beside = [];
  current = 'recall beside mcp';
  for (let i = 0; i < runs; i++) beside.push(wall(here, ['recall', q, '--store', mcpStore], WARM));
  const served = JSON.parse(spawnSync(process.execPath, [join(here, 'bin/memloom.js'), 'daemon', 'status', '--store', mcpStore, '--json'], { encoding: 'utf8', env: env(COLD) }).stdout);
  if (served.owner !== 'mcp' || served.requests !== runs) throw new Error(`recall beside mcp was not served by memloom mcp: ${JSON.stringify(served)}`);
  await client.close();
  const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  console.log(`memloom mcp (stdio), ${n} calls each, interleaved: start to initialized ${connectMs.toFixed(0)} ms; load average ${loadavg()[0].toFixed(1)}`);
  console.log(`${'recall beside mcp'.padEnd(18)} median ${med(beside).toFixed(0).padStart(6)} ms, min ${Math.min(...beside).toFixed(0).padStart(6)} ms (the CLI on the store memloom mcp holds: run in it)`);
  if (queryMs['recall beside mcp']) console.log(`${'recall beside mcp'.padEnd(18)} of which the recall itself (its tookMs): median ${med(queryMs['recall beside mcp']).toFixed(0)} ms`);
  for (const name of ['remember', 'recall']) {
    console.log(`mcp ${name.padEnd(14)} p50 ${pct(lat[name], 0.5).toFixed(1)} ms, p95 ${pct(lat[name], 0.95).toFixed(1)} ms (first ${lat[name][0].toFixed(1)} ms)`);
  }
}
rmSync(tmp, { recursive: true, force: true });
