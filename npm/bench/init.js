// Where a new embedded store's `memloom init` spends its time (issue 19, item 3). Each run is a
// fresh Node process that does what `memloom init --store NEW` does, step by step, through the
// package's own modules, and times each step (wall and CPU: user + system, all threads):
// Node's start, the imports (the core's wasm, the CLI, PGlite), the template data directory
// (template-node.js), PGlite's start, the migrations check, the embedder (memloom_init_store
// unless the store came initialised), the namespace binding, the stats init prints, close.
// Then the real command, `node bin/memloom.js init --store NEW`, wall time. With --baseline
// OTHER/npm the same of another checkout (e.g. main's), interleaved with this one's and with
// `node -e 0`, the order alternating per run. Prints the median of each step.
//   node bench/init.js [--runs 7] [--baseline OTHER/npm]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({ options: { runs: { type: 'string', default: '7' }, baseline: { type: 'string' }, child: { type: 'string' }, dir: { type: 'string' } } });

if (opt.child) {
  // One init, step by step (openStore's order: store/open.js, entry-node.js lockedPglite).
  const at = (p) => pathToFileURL(join(opt.child, p)).href;
  const cpu = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const steps = [['node start', performance.now(), cpu()]];
  const step = (name) => steps.push([name, performance.now(), cpu()]);
  const entry = await import(at('src/entry-node.js'));
  step('import: core (wasm) and store');
  await import(at('src/cli/main.js'));
  step('import: the CLI');
  const { checkVectorBundle, openPglite } = await import(at('src/db-pglite.js'));
  const release = (await import(at('src/lock-node.js'))).lockStore(opt.dir);
  step('import: PGlite; the lock');
  const e = entry.hashEmbedder();
  await checkVectorBundle();
  await (await import(at('src/template-node.js'))).fillFromTemplate(opt.dir, { embedder: { name: e.name, version: e.version, dims: e.dims } });
  step('template data directory');
  const db = await openPglite(opt.dir, {});
  step('PGlite start');
  const { Store } = await import(at('src/store/store.js'));
  const store = new Store(db, { namespace: 'default', embedder: e, location: opt.dir });
  await store._migrate({ create: true });
  step('migrations check');
  await (await import(at('src/store/embedder.js'))).initEmbedder(store);
  step('embedder (memloom_init_store)');
  await db.query(`SELECT set_config('memloom.namespace', 'default', false)`);
  await db.query('SELECT memloom_current_namespace() AS ns, session_user AS role');
  step('namespace');
  const s = await store.stats();
  if (s.embedder?.name !== e.name || s.schemaVersion < 1) throw new Error(`not an initialised store: ${JSON.stringify(s)}`);
  step('stats');
  await db.close();
  release();
  step('close');
  const out = {};
  for (let i = 0; i < steps.length; i++) {
    const [name, t, c] = steps[i];
    const [, t0, c0] = i === 0 ? [null, 0, 0] : steps[i - 1];
    out[name] = [t - t0, c - c0];
  }
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

const runs = Number(opt.runs);
const here = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'memloom-bench-init-'));
const variants = [['this', here], ...(opt.baseline ? [['baseline', opt.baseline]] : [])];
/** @type {Record<string, Record<string, number[][]>>} */
const times = {};
const floor = [];
const load0 = loadavg()[0];
const env = { ...process.env, MEMLOOM_DAEMON_IDLE: '0', DATABASE_URL: '' };
for (let i = 0; i < runs; i++) {
  for (const [name, pkg] of i % 2 ? [...variants].reverse() : variants) {
    const t = (times[name] ??= {});
    const dir = join(tmp, `${name}-${i}`);
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', pkg, '--dir', dir], { encoding: 'utf8', env });
    if (r.status !== 0) throw new Error(`${name}: ${r.stderr}`);
    for (const [k, v] of Object.entries(JSON.parse(r.stdout))) (t[k] ??= []).push(v);
    const w = performance.now();
    const cli = spawnSync(process.execPath, [join(pkg, 'bin/memloom.js'), 'init', '--store', join(tmp, `${name}-cli-${i}`), '-q'], { encoding: 'utf8', env });
    if (cli.status !== 0) throw new Error(`${name} init: ${cli.stderr}`);
    (t['`memloom init` (the command), wall'] ??= []).push([performance.now() - w, NaN]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(tmp, `${name}-cli-${i}`), { recursive: true, force: true });
  }
  const t = performance.now();
  spawnSync(process.execPath, ['-e', '0']);
  floor.push(performance.now() - t);
}
rmSync(tmp, { recursive: true, force: true });
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`memloom init, step by step: median of ${runs} runs, interleaved; load average ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)}; node -e 0 median ${med(floor).toFixed(0)} ms`);
const cols = variants.map(([n]) => n);
console.log(`${'step'.padEnd(40)} ${cols.map((c) => `${c} wall / cpu ms`.padStart(24)).join('')}`);
for (const k of Object.keys(times.this)) {
  const cell = (n) => {
    const xs = times[n][k] ?? [];
    const c = med(xs.map((x) => x[1]));
    return `${med(xs.map((x) => x[0])).toFixed(0)} / ${Number.isNaN(c) ? '-' : c.toFixed(0)}`.padStart(24);
  };
  console.log(`${k.padEnd(40)} ${cols.map(cell).join('')}`);
}
const total = (n) => med(times[n]['`memloom init` (the command), wall'].map((x) => x[0]));
console.log(`\`memloom init\` / node -e 0: ${cols.map((n) => `${n} ${(total(n) / med(floor)).toFixed(1)}`).join(', ')}`);
if (opt.baseline) console.log(`\`memloom init\` this / baseline: ${(total('this') / total('baseline')).toFixed(2)}`);
