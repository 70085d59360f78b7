// The sharded deployment's figures (scripts/bench-scale.sh starts the clusters; not a test):
//   1. recall p50 through the PL/Proxy front next to the same recall on the namespace's own
//      partition, interleaved call by call in this process (the overhead, ms and ratio, and the
//      median of the pairs' differences);
//   2. the hop alone: a trivial routed call (memloom_active_items) through the proxy next to
//      the same call on the partition, interleaved (what the proxy adds, without the recall's
//      own spread);
//   3. a bounded mixed load (RECALL_SHARE recalls, the rest remembers) from WORKERS concurrent
//      npm stores over NAMESPACES namespaces: through the proxy, and against one plain server
//      holding the same namespaces, in alternating rounds so that a change of the machine's load
//      meets both (ops/s, and per core of this machine).
// Before anything is timed every server is quiet: no autovacuum running, the pool tables
// vacuumed and analyzed (the load's index run leaves every chunk row dead once; autovacuum of
// the HNSW index then took a core for minutes, in the middle of whichever phase came next).
// The 1-minute load average is printed next to every figure (the machine is shared).
// Each recall's results are checked to equal the direct call's inside the timed loop.
// Env: MEMLOOM_BENCH_PROXY, MEMLOOM_BENCH_PARTITIONS (comma-separated), MEMLOOM_BENCH_SINGLE
// (optional: the throughput baseline), MEMLOOM_BENCH_LABEL, MEMLOOM_BENCH_MIXED=0 (latency
// only), MEMLOOM_BENCH_LOAD=0 (the data is there), MEMLOOM_BENCH_ROUNDS (latency rounds over the
// queries, 3), MEMLOOM_BENCH_SUMMARY (a file the summary lines are appended to),
// MEMLOOM_BENCH_QUIET=0 (time right after the load, as this bench did before: to see what the
// load's background work does to the figures).
import { availableParallelism, cpus, loadavg } from 'node:os';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
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
const QUIET = process.env.MEMLOOM_BENCH_QUIET !== '0';
const SUMMARY = process.env.MEMLOOM_BENCH_SUMMARY || null;
const NAMESPACES = 8;
const WORKERS = 8;
const OPS_PER_WORKER = 150;
const MIXED_ROUNDS = 2; // per target, alternating: proxy, one server, proxy, one server
const RECALL_SHARE = 0.8;
const LATENCY_ROUNDS = Number(process.env.MEMLOOM_BENCH_ROUNDS ?? 3);
const HOP_CALLS = 400;
const QUIET_DEADLINE_MS = 600_000;
const CORES = availableParallelism?.() ?? cpus().length;

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
/** A figure for the run's summary (printed by scripts/bench-scale.sh at the end), and now. */
const report = (m) => {
  say(m);
  if (SUMMARY) appendFileSync(SUMMARY, `[${LABEL}] ${m}\n`);
};
const load1 = () => loadavg()[0].toFixed(2);

function cli(url, ns, args) {
  const r = spawnSync(process.execPath, [join(ROOT, 'npm', 'bin', 'memloom.js'), ...args, '--database-url', url, '--namespace', ns], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`memloom ${args.join(' ')} failed: ${r.stderr}`);
}

async function withClient(url, f) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.end();
  }
}

const route = (ns) => withClient(PROXY, async (c) => (await c.query('SELECT memloom_route($1) AS p', [ns])).rows[0].p);

/**
 * Every memloom server quiet before a timed phase: the autovacuum workers done, then the pool
 * tables vacuumed and analyzed here, so none starts during the timing (the proxy holds no table).
 */
async function quiesce() {
  if (!QUIET) {
    const n = [];
    for (const url of [...PARTS, SINGLE].filter(Boolean)) {
      n.push(await withClient(url, async (c) => (await c.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`)).rows[0].n));
    }
    say(`not made quiet (MEMLOOM_BENCH_QUIET=0): autovacuum workers running per server ${n.join(' / ')}; load ${load1()}`);
    return;
  }
  const t = Date.now();
  let waited = 0;
  for (const url of [...PARTS, SINGLE].filter(Boolean)) {
    await withClient(url, async (c) => {
      for (;;) {
        const { rows } = await c.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`);
        if (rows[0].n === 0) break;
        if (Date.now() - t > QUIET_DEADLINE_MS) throw new Error(`${url}: autovacuum still running after ${QUIET_DEADLINE_MS / 1000} s`);
        waited++;
        await new Promise((r) => setTimeout(r, 1000));
      }
      await c.query('VACUUM (ANALYZE) memloom_items, memloom_entities, memloom_mentions');
    });
  }
  say(`servers quiet in ${((Date.now() - t) / 1000).toFixed(0)} s (${waited} s waiting for autovacuum, then VACUUM ANALYZE of the pool on each); load ${load1()}`);
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const strip = (r) => JSON.stringify(r.results.map(({ id: _i, ...rest }) => rest));
const ms = (x) => `${x.toFixed(2)} ms`;

/** Times a, b alternately (the order alternating, so a drift of the load hits both alike). */
async function interleaved(n, a, b, { check } = {}) {
  const ta = [];
  const tb = [];
  const diffs = [];
  let mismatches = 0;
  const timed = async (f, i, into) => {
    const t = process.hrtime.bigint();
    const r = await f(i);
    into.push(Number(process.hrtime.bigint() - t) / 1e6);
    return r;
  };
  for (let i = 0; i < n; i++) {
    let ra, rb;
    if (i % 2 === 0) {
      ra = await timed(a, i, ta);
      rb = await timed(b, i, tb);
    } else {
      rb = await timed(b, i, tb);
      ra = await timed(a, i, ta);
    }
    diffs.push(ta[i] - tb[i]);
    if (check && !check(ra, rb)) mismatches++;
  }
  return { ta, tb, diffs, mismatches };
}

function latencyLine(what, { ta, tb, diffs, mismatches }, before, { target = 1 } = {}) {
  const p50a = pct(ta, 50);
  const p50b = pct(tb, 50);
  const over = p50a - p50b;
  return (
    `${what}: p50 via proxy ${ms(p50a)}, direct on the owning partition ${ms(p50b)}: overhead ${ms(over)}, ratio ${(p50a / p50b).toFixed(3)}, ` +
    `median of the pairs' differences ${ms(pct(diffs, 50))} (target <= ${target} ms: ${over <= target ? 'met' : 'MISSED'}; ` +
    `p95 ${ms(pct(ta, 95))} / ${ms(pct(tb, 95))}; ${ta.length} calls each` +
    `${mismatches == null ? '' : `, ${mismatches} result mismatches`}; load ${before} -> ${load1()})`
  );
}

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
await quiesce();

// 1. Recall latency and 2. the hop: the proxy vs the partition that owns the namespace.
{
  const owner = PARTS[await route('docs')];
  const viaProxy = await openStore({ url: PROXY, namespace: 'docs' });
  const direct = await openStore({ url: owner, namespace: 'docs' });
  for (const q of QUERIES.slice(0, 10)) {
    await viaProxy.recall(q);
    await direct.recall(q);
  }
  const calls = LATENCY_ROUNDS * QUERIES.length;
  const recall = (store) => (i) => store.recall(QUERIES[i % QUERIES.length], { limit: 10 });
  let before = load1();
  const r = await interleaved(calls, recall(viaProxy), recall(direct), { check: (a, b) => strip(a) === strip(b) });
  report(latencyLine('recall', r, before));
  if (r.mismatches > 0) process.exitCode = 1;

  // The same sessions' connections (the proxy's to the partition is cached by PL/Proxy).
  const hop = (store) => async () => {
    const { rows } = await store.db.query('SELECT memloom_active_items($1) AS n', ['docs']);
    return rows[0].n;
  };
  for (let i = 0; i < 20; i++) await Promise.all([hop(viaProxy)(), hop(direct)()]);
  before = load1();
  const h = await interleaved(HOP_CALLS, hop(viaProxy), hop(direct), { check: (a, b) => a === b });
  report(latencyLine('the hop alone (memloom_active_items)', h, before));
  if (h.mismatches > 0) process.exitCode = 1;
  await viaProxy.close();
  await direct.close();
}

// 3. Mixed load, bounded: WORKERS stores x OPS_PER_WORKER operations per target, in
// MIXED_ROUNDS alternating rounds.
async function openStores(url) {
  const stores = await Promise.all(Array.from({ length: WORKERS }, (_, w) => openStore({ url, namespace: nss[w % NAMESPACES] })));
  // Warm: every store's connection (and through the proxy, PL/Proxy's to its partition) open.
  await Promise.all(stores.map((s) => s.recall(QUERIES[0], { limit: 10 })));
  return stores;
}

async function mixedRound(stores, round) {
  let recalls = 0;
  let writes = 0;
  const per = OPS_PER_WORKER / MIXED_ROUNDS;
  const t = process.hrtime.bigint();
  await Promise.all(
    stores.map(async (s, w) => {
      for (let j = 0; j < per; j++) {
        const i = round * per + j;
        // A fixed pseudo-random sequence per worker, so both targets get the same operations.
        const x = ((w * 7919 + i * 104729) % 1000) / 1000;
        if (x < RECALL_SHARE) {
          const r = await s.recall(QUERIES[(w * 31 + i) % QUERIES.length], { limit: 10 });
          if (!Array.isArray(r.results) || r.results.length === 0) throw new Error('recall returned no results');
          recalls++;
        } else {
          const m = MEMS[(w + i) % MEMS.length];
          const out = await s.remember(`${m.text} (worker ${w}, op ${i})`, { key: `${m.key}-${w % 3}` });
          if (!(out.version >= 1)) throw new Error('remember returned no version');
          writes++;
        }
      }
    }),
  );
  return { secs: Number(process.hrtime.bigint() - t) / 1e9, recalls, writes };
}

// MEMLOOM_BENCH_MIXED=0: latency only.
if (process.env.MEMLOOM_BENCH_MIXED !== '0') {
  await quiesce();
  const targets = [{ name: `proxy, ${LABEL}`, url: PROXY }];
  if (SINGLE) targets.push({ name: 'one server', url: SINGLE });
  for (const t of targets) Object.assign(t, { stores: await openStores(t.url), secs: 0, recalls: 0, writes: 0, rounds: [] });
  const before = load1();
  for (let round = 0; round < MIXED_ROUNDS; round++) {
    for (const t of targets) {
      const r = await mixedRound(t.stores, round);
      t.secs += r.secs;
      t.recalls += r.recalls;
      t.writes += r.writes;
      t.rounds.push(((r.recalls + r.writes) / r.secs).toFixed(0));
    }
  }
  for (const t of targets) await Promise.all(t.stores.map((s) => s.close()));
  const rate = (t) => (t.recalls + t.writes) / t.secs;
  for (const t of targets) {
    report(
      `mixed load (${WORKERS} stores, ${Math.round(RECALL_SHARE * 100)}% recall), ${t.name}: ${t.recalls + t.writes} ops (${t.recalls} recalls, ${t.writes} remembers) in ${t.secs.toFixed(1)} s = ` +
        `${rate(t).toFixed(1)} ops/s, ${(rate(t) / CORES).toFixed(1)} ops/s per core (${CORES} cores); rounds ${t.rounds.join(' / ')} ops/s`,
    );
  }
  if (targets.length === 2) {
    report(`mixed load: ${targets[0].name} / one server = ${(rate(targets[0]) / rate(targets[1])).toFixed(2)}x (rounds alternating; load ${before} -> ${load1()})`);
  }
}
