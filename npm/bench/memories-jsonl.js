// A JSONL file of keyed memories for `memloom remember --file` benchmarks (docs/BENCHMARKS.md,
// "Bulk remember"): LINES lines over LINES / VERSIONS keys, each key's versions spread through
// the file in increasing seq (line i: key k(i mod keys), seq floor(i / keys) + 1), 12 words of
// text each from a fixed vocabulary (a seeded generator: the same file every run).
// Usage: node npm/bench/memories-jsonl.js LINES [VERSIONS=4] > memories.jsonl


const lines = Number(process.argv[2]);
const versions = Number(process.argv[3] ?? 4);
if (!Number.isInteger(lines) || lines <= 0 || !Number.isInteger(versions) || versions <= 0) {
  console.error('usage: node npm/bench/memories-jsonl.js LINES [VERSIONS=4] > memories.jsonl');
  process.exit(2);
}
const keys = Math.max(1, Math.floor(lines / versions));
const words = 'deploy freeze friday orders api port heap limit queue worker node version cache retry timeout shard replica'.split(' ');
let s = 7;
const r = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
const out = process.stdout;
let buf = [];
const flush = () =>
  new Promise((resolve) => {
    if (out.write(buf.join(''))) resolve();
    else out.once('drain', resolve);
    buf = [];
  });
for (let i = 0; i < lines; i++) {
  const t = Array.from({ length: 12 }, () => words[Math.floor(r() * words.length)]).join(' ');
  buf.push(JSON.stringify({ key: `k${i % keys}`, seq: Math.floor(i / keys) + 1, text: `note ${i}: ${t}` }) + '\n');
  if (buf.length >= 10_000) await flush();
}
await flush();
