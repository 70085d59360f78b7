// The sharded deployment's figures (scripts/bench-scale.sh starts the clusters; not a test):
//   1. recall p50 through the PL/Proxy front next to the same recall on the namespace's own
//      partition, interleaved call by call in this process (the overhead, ms and ratio);
//   2. a bounded mixed load (RECALL_SHARE recalls, the rest remembers) from WORKERS concurrent
//      npm stores over NAMESPACES namespaces: through the proxy, and against one plain server
//      holding the same namespaces (ops/s, and per core of this machine).
// Each recall's results are checked to equal the direct call's inside the timed loop.
// Env: MEMLOOM_BENCH_PROXY, MEMLOOM_BENCH_PARTITIONS (comma-separated), MEMLOOM_BENCH_SINGLE
// (optional: the throughput baseline), MEMLOOM_BENCH_LABEL, MEMLOOM_BENCH_MIXED=0 (latency only).
import { cpus } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(ROOT, 'npm', 'package.json'));
const pg = require('pg');
const { openStore } = await import(join(ROOT, 'npm', 'src', 'entry-node.js'));

const PROXY = process.env.MEMLOOM_BENCH_PROXY;
const PARTS = (process.env.MEMLOOM_BENCH_PARTITIONS ?? '').split(',').filter(Boolean);
const SINGLE = process.env.MEMLOOM_BENCH_SINGLE || null;
const LABEL = process.env.MEMLOOM_BENCH_LABEL ?? `${PARTS.length} partitions`;
const LOAD = process.env.MEMLOOM_BENCH_LOAD !== '0';
const NAMESPACES = 8;
const WORKERS = 8;
const OPS_PER_WORKER = 150;
const RECALL_SHARE = 0.8;
const LATENCY_ROUNDS = Number(process.env.MEMLOOM_BENCH_ROUNDS ?? 3);

const EVAL = join(ROOT, '..', 'shared', 'eval', 'nodejs-docs');
const HAVE_EVAL = existsSync(join(EVAL, 'queries.jsonl'));
const CORPUS = HAVE_EVAL ? join(EVAL, 'corpus') : join(ROOT, 'examples', 'notes');
const QUERIES = HAVE_EVAL
  ? readFileSync(join(EVAL, 'queries.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).query)
  : ['nginx reload without downtime', 'max_connections', 'upgrade node', 'postgres vacuum', 'deploy port'];
const MEMS = HAVE_EVAL
  ? readFileSync(join(EVAL, 'memories.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
  : [{ key: 'deploy', text: 'deploys run on Tuesdays' }];
const say = (m) => console.log(`bench-scale [${LABEL}]: ${m}`);

function cli(url, ns, args) {
  const r = spawnSync(process.execPath, [join(ROOT, 'npm', 'bin', 'memloom.js'), ...args, '--database-url', url, '--namespace', ns], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`memloom ${args.join(' ')} failed: ${r.stderr}`);
}

async function route(ns) {
  const c = new pg.Client({ connectionString: PROXY });
  await c.connect();
  try {
    return (await c.query('SELECT memloom_route($1) AS p', [ns])).rows[0].p;
  } finally {
    await c.end();
  }
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const strip = (r) => JSON.stringify(r.results.map(({ id: _i, ...rest }) => rest));

const nss = Array.from({ length: NAMESPACES }, (_, i) => `bench${i}`);
if (LOAD) {
  const t = Date.now();
  for (const url of [PROXY, SINGLE].filter(Boolean)) {
    cli(url, 'docs', ['init']);
    cli(url, 'docs', ['ingest', CORPUS]);
    cli(url, 'docs', ['index', '--offline']);
    for (const ns of nss) cli(url, ns, ['ingest', join(ROOT, 'examples', 'notes')]);
  }
  say(`loaded docs (${HAVE_EVAL ? 'Node docs corpus' : 'examples/notes: ../shared/eval absent'}) and ${NAMESPACES} small namespaces in ${((Date.now() - t) / 1000).toFixed(0)} s`);
}

// 1. Recall latency: the proxy vs the partition that owns the namespace, call by call.
{
  const owner = PARTS[await route('docs')];
  const viaProxy = await openStore({ url: PROXY, namespace: 'docs' });
  const direct = await openStore({ url: owner, namespace: 'docs' });
  const tp = [];
  const td = [];
  let mismatches = 0;
  for (const q of QUERIES.slice(0, 5)) {
    await viaProxy.recall(q);
    await direct.recall(q);
  }
  const timed = async (store, q, into) => {
    const t = process.hrtime.bigint();
    const r = await store.recall(q, { limit: 10 });
    into.push(Number(process.hrtime.bigint() - t) / 1e6);
    return r;
  };
  let n = 0;
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    for (const q of QUERIES) {
      // Interleaved, the order alternating, so load drift hits both alike.
      let a, b;
      if (n++ % 2 === 0) {
        a = await timed(viaProxy, q, tp);
        b = await timed(direct, q, td);
      } else {
        b = await timed(direct, q, td);
        a = await timed(viaProxy, q, tp);
      }
      if (strip(a) !== strip(b)) mismatches++;
    }
  }
  await viaProxy.close();
  await direct.close();
  const p50p = pct(tp, 50);
  const p50d = pct(td, 50);
  say(
    `recall p50 via proxy ${p50p.toFixed(2)} ms, direct on the owning partition ${p50d.toFixed(2)} ms: overhead ${(p50p - p50d).toFixed(2)} ms, ratio ${(p50p / p50d).toFixed(3)} ` +
      `(p95 ${pct(tp, 95).toFixed(2)} / ${pct(td, 95).toFixed(2)} ms; ${tp.length} calls each, ${mismatches} result mismatches)`,
  );
  if (mismatches > 0) process.exitCode = 1;
}

// 2. Mixed load, bounded: WORKERS stores x OPS_PER_WORKER operations.
async function mixed(url) {
  const stores = await Promise.all(Array.from({ length: WORKERS }, (_, w) => openStore({ url, namespace: nss[w % NAMESPACES] })));
  let recalls = 0;
  let writes = 0;
  const t = process.hrtime.bigint();
  await Promise.all(
    stores.map(async (s, w) => {
      for (let i = 0; i < OPS_PER_WORKER; i++) {
        // A fixed pseudo-random sequence per worker, so both targets get the same operations.
        const x = ((w * 7919 + i * 104729) % 1000) / 1000;
        if (x < RECALL_SHARE) {
          const r = await s.recall(QUERIES[(w * 31 + i) % QUERIES.length], { limit: 10 });
          if (!Array.isArray(r.results)) throw new Error('recall returned no list');
          recalls++;
        } else {
          const m = MEMS[(w + i) % MEMS.length];
          await s.remember(`${m.text} (worker ${w}, op ${i})`, { key: `${m.key}-${w % 3}` });
          writes++;
        }
      }
    }),
  );
  const secs = Number(process.hrtime.bigint() - t) / 1e9;
  await Promise.all(stores.map((s) => s.close()));
  return { secs, recalls, writes, ops: recalls + writes };
}

// MEMLOOM_BENCH_MIXED=0: latency only.
if (process.env.MEMLOOM_BENCH_MIXED !== '0') {
  const cores = cpus().length;
  const proxied = await mixed(PROXY);
  const rate = proxied.ops / proxied.secs;
  say(`mixed load through the proxy: ${proxied.ops} ops (${proxied.recalls} recalls, ${proxied.writes} remembers) in ${proxied.secs.toFixed(1)} s = ${rate.toFixed(0)} ops/s, ${(rate / cores).toFixed(0)} ops/s per core (${cores} cores)`);
  if (SINGLE) {
    const one = await mixed(SINGLE);
    const r1 = one.ops / one.secs;
    say(`mixed load on one server: ${one.ops} ops in ${one.secs.toFixed(1)} s = ${r1.toFixed(0)} ops/s, ${(r1 / cores).toFixed(0)} ops/s per core; ${LABEL} / one server = ${(rate / r1).toFixed(2)}x`);
  }
}
