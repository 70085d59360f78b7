// Cold CLI wall time (issue 19, item 3): `memloom init` of a new store, `remember` and `recall`
// on an existing store, each a fresh `node bin/memloom.js` process, run interleaved with a
// baseline checkout of the CLI (another package directory, e.g. main's) in the same run, so the
// ratio holds on a loaded machine. Prints the median and min of each and the ratio.
//   node bench/cli.js --store DIR [--baseline OTHER/npm] [--runs 5]
// DIR: an embedded store to remember into and recall from (e.g. 10k items).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({ options: { store: { type: 'string' }, baseline: { type: 'string' }, runs: { type: 'string', default: '5' } } });
if (!opt.store) throw new Error('usage: node bench/cli.js --store DIR [--baseline OTHER/npm] [--runs N]');
const runs = Number(opt.runs);
const here = fileURLToPath(new URL('..', import.meta.url));
const variants = [['this', here], ...(opt.baseline ? [['baseline', opt.baseline]] : [])];
const tmp = mkdtempSync(join(tmpdir(), 'memloom-bench-cli-'));

function wall(pkg, args) {
  const t = performance.now();
  const r = spawnSync(process.execPath, [join(pkg, 'bin/memloom.js'), ...args], { encoding: 'utf8', env: { ...process.env, DATABASE_URL: '' } });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  return ms;
}

const commands = {
  init: (pkg, i, name) => wall(pkg, ['init', '--store', join(tmp, `${name}-${i}`)]),
  remember: (pkg, i, name) => wall(pkg, ['remember', `bench note ${name} ${i}: deploys freeze on Fridays`, '--key', `bench-${name}`, '--store', opt.store]),
  recall: (pkg) => wall(pkg, ['recall', 'how do I read a file line by line', '--store', opt.store]),
};
const times = {};
const load0 = loadavg()[0];
for (let i = 0; i < runs; i++) {
  for (const cmd of Object.keys(commands)) {
    // Alternate which variant goes first.
    const order = i % 2 ? [...variants].reverse() : variants;
    for (const [name, pkg] of order) {
      const ms = commands[cmd](pkg, i, name);
      (times[`${cmd} ${name}`] ??= []).push(ms);
      process.stderr.write(`run ${i + 1}: ${cmd} ${name} ${ms.toFixed(0)} ms\n`);
    }
  }
}
rmSync(tmp, { recursive: true, force: true });
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`cold CLI wall time, ${runs} runs each, interleaved; load average ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)} on this machine`);
for (const cmd of Object.keys(commands)) {
  const a = times[`${cmd} this`];
  const line = [`${cmd.padEnd(9)} this: median ${med(a).toFixed(0)} ms, min ${Math.min(...a).toFixed(0)} ms`];
  const b = times[`${cmd} baseline`];
  if (b) line.push(`baseline: median ${med(b).toFixed(0)} ms, min ${Math.min(...b).toFixed(0)} ms; ratio ${(med(a) / med(b)).toFixed(2)}`);
  console.log(line.join(' | '));
}
