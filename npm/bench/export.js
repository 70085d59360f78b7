// Export and import figures (issue 17, item 4), in one run, each beside a baseline measured
// in the same run:
//
//   node npm/bench/export.js [--url URL] [--corpus DIR] [--lines N] [--small N] [--skip-docs] [--skip-million]
//
// 1. The Node docs store (../shared/eval/nodejs-docs: corpus, memories.jsonl, queries.jsonl;
//    said plainly when absent, and the part is skipped): built on the embedded store (ingest,
//    memories, index: the baseline, what a restore replaces), exported (time, size, beside the
//    corpus' size), imported into a fresh embedded store (time, beside the build). Correctness
//    inside the run: the copy must answer every labelled query with the same ranked list.
// 2. Bounded memory: dumps of --small (100k) and --lines (1M) generated lines (keyed memories
//    with 1 to 3 versions, 8-dimension vectors of a bench embedder, so the figure is the
//    streaming, not embedding) imported into a server (--url) by a child process each, which
//    reports its peak RSS (getrusage maxrss); the ratio of the two peaks is the claim (about 1:
//    memory does not grow with the dump). Correctness: each import's item count and the end
//    line must match what was generated.
// scripts/bench-export.sh starts a throwaway server for --url. Nothing is asserted on timings.
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' },
    corpus: { type: 'string', default: resolve(here, '../../../shared/eval/nodejs-docs') },
    lines: { type: 'string', default: '1000000' },
    small: { type: 'string', default: '100000' },
    work: { type: 'string', default: resolve(here, '../../target/bench-export') },
    'skip-docs': { type: 'boolean', default: false },
    'skip-million': { type: 'boolean', default: false },
    child: { type: 'string' }, // internal: import this dump and report
  },
});

const api = await import('../src/entry-node.js');
const { readLines } = await import('../src/export-node.js');
const { encodeVector, EXPORT_FORMAT, EXPORT_FORMAT_VERSION } = await import('../src/export.js');

/** The bench embedder: 8 dimensions; never asked to embed (the dumps carry its vectors). */
const benchEmbedder = {
  name: 'bench',
  version: 1,
  dims: 8,
  id: 'bench-v1',
  embed: async () => {
    throw new Error('the bench embedder never embeds: the dump carries its vectors');
  },
};

if (opt.child) {
  // A child: import one dump into the server, print a JSON report with the peak RSS.
  const store = await api.openStore({ url: opt.url, namespace: `bench-${process.pid}`, embedder: benchEmbedder });
  const started = performance.now();
  let r;
  try {
    // A progress line every 50 batches (stderr): lines, seconds, peak RSS so far.
    r = await store.importDump(readLines(opt.child), {
      namespace: `bench-${process.pid}`,
      batchSize: 1000,
      onBatch: (b) => {
        if (b.batches % 50 === 0) {
          const s = (performance.now() - started) / 1000;
          process.stderr.write(`  ... ${b.line} lines in ${s.toFixed(0)} s (${Math.round(b.line / s)} lines/s), peak RSS so far ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`);
        }
      },
    });
    const seconds = (performance.now() - started) / 1000;
    const { rows } = await store.db.query('SELECT count(*)::int AS n FROM memloom_items WHERE namespace = $1', [store.namespace]);
    process.stdout.write(JSON.stringify({ ...r, stored: rows[0].n, seconds, maxRssMB: process.resourceUsage().maxRSS / 1024 }) + '\n');
    // Not memloom_forget_namespace: it takes one advisory lock per key, and 500k keys exceed
    // max_locks_per_transaction (out of shared memory). The rows only; the cluster is throwaway.
    await store.db.query('DELETE FROM memloom_mentions WHERE namespace = $1', [store.namespace]);
    await store.db.query('DELETE FROM memloom_items WHERE namespace = $1', [store.namespace]);
  } finally {
    await store.close();
  }
  process.exit(0);
}

mkdirSync(opt.work, { recursive: true });
const mb = (n) => (n / 1e6).toFixed(1);
const sec = (ms) => (ms / 1000).toFixed(1);
const say = (s) => process.stdout.write(s + '\n');
let failed = false;

// 1. The Node docs ---------------------------------------------------------------------------------
if (!opt['skip-docs']) {
  const corpus = join(opt.corpus, 'corpus');
  if (!existsSync(corpus)) {
    say(`node docs: ${opt.corpus} is absent: this part is skipped (it reads ../shared/eval/nodejs-docs)`);
  } else {
    const dirA = join(opt.work, 'docs-source');
    const dirB = join(opt.work, 'docs-copy');
    rmSync(dirA, { recursive: true, force: true });
    rmSync(dirB, { recursive: true, force: true });
    const corpusBytes = readdirSync(corpus).reduce((n, f) => n + statSync(join(corpus, f)).size, 0);
    const memories = readFileSync(join(opt.corpus, 'memories.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const queries = readFileSync(join(opt.corpus, 'queries.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).query);

    let t = performance.now();
    const a = await api.openStore({ dir: dirA });
    await a.ingest([corpus]);
    await a.importMemories(memories);
    await a.index();
    const buildMs = performance.now() - t;
    const stats = await a.stats();

    const dumpPath = join(opt.work, 'docs.jsonl');
    t = performance.now();
    const out = createWriteStream(dumpPath);
    const ex = await a.exportDump(async (o) => {
      if (!out.write(JSON.stringify(o) + '\n')) await once(out, 'drain');
    }, { memloomVersion: 'bench' });
    out.end();
    await once(out, 'finish');
    const exportMs = performance.now() - t;
    const dumpBytes = statSync(dumpPath).size;

    t = performance.now();
    const b = await api.openStore({ dir: dirB });
    const im = await b.importDump(readLines(dumpPath));
    const importMs = performance.now() - t;

    let same = 0;
    for (const q of queries) {
      const ra = (await a.recall(q)).results.map((h) => [h.kind, h.source, h.breadcrumb, h.key, h.rrfScore]);
      const rb = (await b.recall(q)).results.map((h) => [h.kind, h.source, h.breadcrumb, h.key, h.rrfScore]);
      if (JSON.stringify(ra) === JSON.stringify(rb)) same++;
    }
    await a.close();
    await b.close();
    say(`node docs (${opt.corpus}): ${stats.chunks} chunks, ${stats.memories.active + stats.memories.superseded} memories, ${stats.entities} entities; corpus ${mb(corpusBytes)} MB`);
    say(`  build (ingest + memories + index, the baseline): ${sec(buildMs)} s`);
    say(`  export: ${sec(exportMs)} s, ${ex.lines} lines, ${mb(dumpBytes)} MB (${(dumpBytes / corpusBytes).toFixed(2)}x the corpus)`);
    say(`  import into a new embedded store (vectors carried): ${sec(importMs)} s = ${(importMs / buildMs).toFixed(2)}x the build; ${im.items} items, ${im.entities} entities, ${im.mentions} mentions`);
    say(`  correctness: ${same}/${queries.length} labelled queries give the same ranked list on the copy`);
    if (same !== queries.length) failed = true;
  }
}

// 2. Bounded memory ------------------------------------------------------------------------------
/** Writes a dump of n lines (header and end included): keyed memories, 1 to 3 versions each. */
async function generate(path, n) {
  const out = createWriteStream(path);
  const write = async (o) => {
    if (!out.write(JSON.stringify(o) + '\n')) await once(out, 'drain');
  };
  await write({ type: 'header', format: EXPORT_FORMAT, formatVersion: EXPORT_FORMAT_VERSION, memloomVersion: 'bench', schemaVersion: 16, embedder: { name: 'bench', version: 1, dims: 8 }, namespaces: ['bench'], exportId: `bench-${n}-${Date.now()}`, exportedAt: new Date().toISOString() });
  const words = ['deploy', 'freeze', 'orders', 'replica', 'postgres', 'timeout', 'pg_hba.conf', 'ERR_REQUIRE_ESM', 'queue', 'socket', 'billing', 'cache'];
  let items = 0;
  let k = 0;
  while (items < n - 2) {
    const versions = Math.min(1 + (k % 3), n - 2 - items);
    for (let v = 1; v <= versions; v++) {
      const vec = Array.from({ length: 8 }, (_, i) => Math.sin(k * 7 + v * 3 + i) || 0.5);
      await write({
        type: 'item',
        namespace: 'bench',
        kind: 'memory',
        key: `key-${k}`,
        version: v,
        status: v === versions ? 'active' : 'superseded',
        source: null,
        breadcrumb: null,
        content: `fact ${k} version ${v}: ${words[k % words.length]} ${words[(k * 5 + v) % words.length]} ${words[(k * 11) % words.length]} number ${k * 31 + v}`,
        metadata: { seq: v },
        createdAt: new Date(Date.UTC(2026, 0, 1) + k * 1000 + v).toISOString(),
        updatedAt: null,
        indexedAt: null,
        supersedes: v > 1 ? { key: `key-${k}`, version: v - 1 } : null,
        supersededBy: v < versions ? { key: `key-${k}`, version: v + 1 } : null,
        mentions: [],
        embedding: encodeVector(vec),
      });
      items++;
    }
    k++;
  }
  await write({ type: 'end', entities: 0, items, lines: items + 2 });
  out.end();
  await once(out, 'finish');
  return items;
}

if (!opt['skip-million']) {
  if (!opt.url) {
    say('bounded memory: needs --url (a PostgreSQL server; scripts/bench-export.sh starts one): skipped');
  } else {
    const peaks = [];
    for (const n of [Number(opt.small), Number(opt.lines)]) {
      const path = join(opt.work, `generated-${n}.jsonl`);
      let t = performance.now();
      const items = await generate(path, n);
      const genMs = performance.now() - t;
      const size = statSync(path).size;
      t = performance.now();
      const c = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', path, '--url', opt.url], { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] });
      if (c.status !== 0) {
        say(`  ${n} lines: the import failed (its error is above)`);
        failed = true;
        continue;
      }
      const r = JSON.parse(c.stdout.trim().split('\n').at(-1));
      const ok = r.items === items && r.stored === items && r.complete;
      if (!ok) failed = true;
      peaks.push(r.maxRssMB);
      say(
        `generated dump of ${n} lines (${mb(size)} MB, written in ${sec(genMs)} s): imported into the server in ${r.seconds.toFixed(1)} s ` +
          `(${Math.round(n / r.seconds)} lines/s, ${r.batches} batches of 1000), peak RSS of the importing process ${r.maxRssMB.toFixed(0)} MB; ` +
          `correctness: ${r.stored}/${items} items stored${ok ? '' : ' MISMATCH'}`,
      );
      rmSync(path, { force: true });
    }
    if (peaks.length === 2) say(`bounded memory: peak RSS ${opt.lines} lines / ${opt.small} lines = ${(peaks[1] / peaks[0]).toFixed(2)}x for ${(Number(opt.lines) / Number(opt.small)).toFixed(0)}x the lines`);
  }
}
process.exit(failed ? 1 : 0);
