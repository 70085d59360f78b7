// Bulk remember, the set-based batch against the per-record path it replaced (docs/BENCHMARKS.md,
// "Bulk remember (schema 20)"), in one process: two in-memory embedded stores get the same
// records batch by batch, interleaved (per-record batch, then set-based batch, ...), each
// batch's CPU time (process.cpuUsage: PGlite runs in this thread) and wall time measured, and
// the two stores' memories compared at the end (same rows, ids and links, or it exits 1).
// Records as npm/bench/memories-jsonl.js writes them: LINES lines over LINES / 4 keys.
// Usage: node npm/bench/remember-batch.js [LINES=20000] [BATCH=500]
import { openStore } from '../src/entry-node.js';

const lines = Number(process.argv[2] ?? 20000);
const batchSize = Number(process.argv[3] ?? 500);
const keys = Math.max(1, Math.floor(lines / 4));
const words = 'deploy freeze friday orders api port heap limit queue worker node version cache retry timeout shard replica'.split(' ');
let s = 7;
const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
const records = Array.from({ length: lines }, (_, i) => ({
  key: `k${i % keys}`,
  seq: Math.floor(i / keys) + 1,
  text: `note ${i}: ${Array.from({ length: 12 }, () => words[Math.floor(rnd() * words.length)]).join(' ')}`,
}));

/** The per-record path before schema 20 (Store#_importBatch then): one memloom_remember per record. */
async function perRecord(store, batch) {
  const vectors = await store._embed(batch.map((r) => r.text));
  const ks = [...new Set(batch.map((r) => r.key))].sort();
  await store.db.transaction(async (tx) => {
    const state = new Map();
    const { rows } = await tx.query('SELECT key, seq, active FROM memloom_memory_states($1, $2::text[])', [store.namespace, ks]);
    for (const r of rows) state.set(r.key, { seq: r.seq == null ? null : Number(r.seq), active: r.active });
    for (const [i, r] of batch.entries()) {
      const st = state.get(r.key) ?? { seq: null, active: null };
      if ((st.seq !== null && r.seq <= st.seq) || st.active === r.text) continue;
      state.set(r.key, { seq: r.seq, active: r.text });
      await tx.query('SELECT id, version FROM memloom_remember($1, $2, $3, $4::vector, $5::jsonb, $6::timestamptz)', [
        store.namespace, r.key, r.text, vectors[i], JSON.stringify({ seq: r.seq }), null,
      ]);
    }
  });
}

const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const ref = await openStore({});
const got = await openStore({});
const t = { ref: { cpu: [], wall: [] }, got: { cpu: [], wall: [] } };
for (let at = 0, b = 0; at < lines; at += batchSize, b++) {
  const batch = records.slice(at, at + batchSize);
  for (const [name, run] of b % 2 === 0 ? [['ref', () => perRecord(ref, batch)], ['got', () => got.importMemories(batch, { batchSize })]]
                                        : [['got', () => got.importMemories(batch, { batchSize })], ['ref', () => perRecord(ref, batch)]]) {
    const c0 = cpu(); const w0 = performance.now();
    await run();
    t[name].cpu.push(cpu() - c0); t[name].wall.push(performance.now() - w0);
  }
}
const q = `SELECT id, key, version, status, content, metadata, supersedes, superseded_by FROM memloom_items ORDER BY id`;
const same = JSON.stringify((await ref.db.query(q)).rows) === JSON.stringify((await got.db.query(q)).rows);
const sum = (a) => a.reduce((x, y) => x + y, 0);
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const third = (a, i) => a.slice(Math.floor((i * a.length) / 3), Math.floor(((i + 1) * a.length) / 3));
console.log(`${lines} lines, ${keys} keys, batches of ${batchSize}, interleaved in one process; stores identical: ${same}`);
console.log('| path | CPU s total | CPU ms/record | median batch CPU ms: first, middle, last third | wall s total |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const [name, label] of [['ref', 'per record (memloom_remember each, before)'], ['got', 'set-based (memloom_remember_batch, schema 20)']]) {
  const c = t[name].cpu;
  console.log(`| ${label} | ${(sum(c) / 1000).toFixed(1)} | ${(sum(c) / lines).toFixed(2)} | ${[0, 1, 2].map((i) => med(third(c, i)).toFixed(0)).join(', ')} | ${(sum(t[name].wall) / 1000).toFixed(1)} |`);
}
console.log(`CPU ratio set-based / per record: ${(sum(t.got.cpu) / sum(t.ref.cpu)).toFixed(3)}; wall ratio ${(sum(t.got.wall) / sum(t.ref.wall)).toFixed(3)}`);
await ref.close();
await got.close();
process.exit(same ? 0 : 1);
