// In-process `remember` latency on the embedded store (PGlite in a directory, as the CLI uses)
// at 1, 1k and 10k items: what one write costs as the store grows. Part of the
// `bench-embedded` material (issue 19, docs/BENCHMARKS.md "Writes").
//
//   node npm/bench/remember.js [--sizes 1,1000,10000] [--ops 60] [--pkg DIR] [--profile]
//
// --pkg runs another checkout's package (e.g. /work/main/npm) with the same workload, so a
// before/after pair is measured by one script. Items are memories made of the Node docs'
// paragraphs (../shared/eval/nodejs-docs/corpus when present, else a synthetic vocabulary),
// loaded with rememberMany in batches. Each timed op remembers a new paragraph under a new key;
// every 4th op supersedes the previous key instead (a new version). After the timed ops the
// script checks that every remembered key is recallable by its exact text (correctness inside
// the loop's output, not a timing assertion).
// --profile splits one remember into its parts (embedding, the SQL call, the commit) at each size.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

const here = new URL('.', import.meta.url).pathname;
const { values: opt } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1,1000,10000' },
    ops: { type: 'string', default: '60' },
    pkg: { type: 'string', default: resolve(here, '..') },
    corpus: { type: 'string', default: resolve(here, '../../../shared/eval/nodejs-docs/corpus') },
    profile: { type: 'boolean', default: false },
  },
});
const sizes = opt.sizes.split(',').map(Number);
const ops = Number(opt.ops);
// The first store of the process also warms V8 and PGlite up: without enough warm-up ops the
// smallest store (measured first) looked slower than the larger ones.
const WARMUP = 20;
const { openStore } = await import(pathToFileURL(join(opt.pkg, 'src/entry-node.js')).href);

function paragraphs() {
  if (existsSync(opt.corpus)) {
    const out = [];
    for (const f of readdirSync(opt.corpus).sort()) {
      if (!f.endsWith('.md')) continue;
      for (const p of readFileSync(join(opt.corpus, f), 'utf8').split(/\n\s*\n/)) {
        const t = p.trim();
        if (t.length >= 60 && t.length <= 1500 && !t.startsWith('```')) out.push(t);
      }
    }
    return { source: opt.corpus, texts: out };
  }
  // No corpus: sentences over a Zipf-ish vocabulary, so lexeme frequencies look like text.
  const words = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}x`);
  let s = 42;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const texts = Array.from({ length: 20000 }, () =>
    Array.from({ length: 30 }, () => words[Math.floor(words.length * rnd() ** 3)]).join(' '),
  );
  return { source: 'synthetic', texts };
}

const { source, texts } = paragraphs();
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (x) => x.toFixed(1).padStart(7);

async function fill(store, n) {
  const BATCH = 500;
  for (let i = 0; i < n; i += BATCH) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) batch.push({ text: `${texts[j % texts.length]} (#${j})` });
    await store.rememberMany(batch);
  }
}

async function profileOne(store, text, key) {
  const t0 = performance.now();
  const [vec] = await store._embed([text]);
  const t1 = performance.now();
  let t2;
  await store.db.transaction(async (tx) => {
    await tx.query('SELECT id, version FROM memloom_remember($1, $2, $3, $4::vector, $5::jsonb)', [store.namespace, key, text, vec, '{}']);
    t2 = performance.now();
  });
  const t3 = performance.now();
  return { embed: t1 - t0, sql: t2 - t1, commit: t3 - t2 };
}

console.log(`remember on the embedded store (PGlite directory), package ${opt.pkg}`);
console.log(`texts: ${texts.length} paragraphs from ${source}; ${ops} timed ops per size (after ${WARMUP} warm-up ops)`);
// V8 compiles PGlite's WebAssembly in tiers in the background: the first store of a process
// ran at half speed for seconds, so the smallest size (measured first) looked the slowest. A
// throwaway in-memory store takes that first.
{
  const warm = await openStore({});
  for (let i = 0; i < 300; i++) await warm.remember(`${texts[i % texts.length]} [warm ${i}]`, { key: `w${i % 50}` });
  await warm.close();
}
const rows = [];
for (const n of sizes) {
  const dir = mkdtempSync(join(tmpdir(), 'memloom-bench-remember-'));
  const store = await openStore({ dir });
  try {
    const tf = performance.now();
    await fill(store, n);
    const fillS = (performance.now() - tf) / 1000;
    const times = [];
    const keys = [];
    for (let i = 0; i < ops + WARMUP; i++) {
      const supersede = i % 4 === 3;
      const key = supersede ? keys[keys.length - 1] : `bench-${i}`;
      const text = `${texts[(n + i) % texts.length]} [op ${i}]`;
      const t = performance.now();
      await store.remember(text, { key });
      const ms = performance.now() - t;
      if (!supersede) keys.push(key);
      if (i >= WARMUP) times.push(ms);
    }
    // Correctness: each key's active version is found by its own text through the keyword arm.
    let found = 0;
    for (const k of keys.slice(-10)) {
      const [m] = (await store.history(k)).filter((h) => h.status === 'active');
      const r = await store.recall(m.content, { arms: ['keyword'], limit: 3 });
      if (r.results.some((x) => x.id === m.id)) found++;
    }
    let prof = null;
    if (opt.profile) {
      const parts = [];
      for (let i = 0; i < 20; i++) parts.push(await profileOne(store, `${texts[(n + 7 * i) % texts.length]} [profile ${i}]`, `profile-${i}`));
      prof = Object.fromEntries(['embed', 'sql', 'commit'].map((k) => [k, pct(parts.map((p) => p[k]), 50)]));
    }
    const { rows: cnt } = await store.db.query(`SELECT count(*)::int AS n FROM memloom_items WHERE status = 'active'`);
    rows.push({ n, items: cnt[0].n, p50: pct(times, 50), p95: pct(times, 95), fillS, found, checked: Math.min(10, keys.length), prof });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const base = rows[0].p50;
console.log('\n| items | after ops | p50 ms | p95 ms | p50 / p50 at first size | fill s | recallable |' + (opt.profile ? ' embed / sql / commit p50 ms |' : ''));
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |' + (opt.profile ? ' ---: |' : ''));
for (const r of rows) {
  const prof = r.prof ? ` ${r.prof.embed.toFixed(2)} / ${r.prof.sql.toFixed(2)} / ${r.prof.commit.toFixed(2)} |` : '';
  console.log(`| ${r.n} | ${r.items} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${(r.p50 / base).toFixed(2)}x | ${r.fillS.toFixed(1)} | ${r.found}/${r.checked} |${prof}`);
}
if (rows.some((r) => r.found !== r.checked)) {
  console.error('remember bench: a remembered memory was not recallable by its own text');
  process.exit(1);
}
