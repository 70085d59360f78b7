// Ingest through an embeddings API that answers in network time, with its requests one at a
// time (`--concurrency 1`, how the API embedder sent them before) and several in flight (the
// default, 4), alternated in one process: what a user with an API key waits for.
//
//   node npm/bench/embed-api.js [--corpus DIR] [--latency-ms 150] [--rounds 3] [--concurrency 1,4] [--pkg DIR]
//
// --pkg runs another checkout's package (one from before `concurrency` sends its requests one
// at a time whatever the level says).
// The API is a stand-in on 127.0.0.1 (an ephemeral port, for this run only): an OpenAI-compatible
// /v1/embeddings answering each request after --latency-ms (a hosted API's round trip for a
// batch of 64 short texts is of that order) with the texts' hash-v1 vectors, so every
// concurrency stores the same rows; the script checks that (exit 1 if not). The corpus is the
// Node docs (../shared/eval/nodejs-docs/corpus), said plainly when absent (then examples/notes).
// Stores are embedded (PGlite in a temporary directory). No figure is asserted.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const here = new URL('.', import.meta.url).pathname;
const { values: opt } = parseArgs({
  options: {
    corpus: { type: 'string', default: resolve(here, '../../../shared/eval/nodejs-docs/corpus') },
    'latency-ms': { type: 'string', default: '150' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1,4' },
    pkg: { type: 'string', default: resolve(here, '..') },
  },
});
const latency = Number(opt['latency-ms']);
const levels = opt.concurrency.split(',').map(Number);
let corpus = opt.corpus;
if (!existsSync(corpus)) {
  console.log(`Node docs: not there (${corpus}); ingesting examples/notes instead`);
  corpus = resolve(here, '../../examples/notes');
}
const api = await import(join(resolve(opt.pkg), 'src/entry-node.js'));
const hash = api.hashEmbedder();

let requests = 0;
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', async () => {
    requests++;
    const { input } = JSON.parse(body);
    const vectors = await hash.embed(input);
    setTimeout(() => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: vectors.map((v, index) => ({ index, embedding: Array.from(v) })) }));
    }, latency);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/v1`;

const runs = new Map(levels.map((c) => [c, []]));
const digests = new Set();
for (let round = 0; round < Number(opt.rounds); round++) {
  for (const c of round % 2 ? [...levels].reverse() : levels) {
    const dir = mkdtempSync(join(tmpdir(), 'memloom-bench-embed-api-'));
    const embedder = api.apiEmbedder({ url, model: 'latency-stand-in', dims: hash.dims, concurrency: c });
    const store = await api.openStore({ dir, embedder });
    try {
      const before = requests;
      const t = performance.now();
      const report = await store.ingest(corpus);
      const s = (performance.now() - t) / 1000;
      runs.get(c).push({ s, chunks: report.chunks, requests: requests - before });
      const { rows } = await store.db.query(`SELECT source, content, md5(embedding::text) AS e FROM memloom_items ORDER BY id`);
      digests.add(createHash('sha256').update(JSON.stringify(rows)).digest('hex'));
      console.error(`  round ${round + 1}, concurrency ${c}: ${s.toFixed(2)} s`);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
server.close();

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`package ${resolve(opt.pkg)}: ingest of ${corpus} through an embeddings API answering in ${latency} ms, embedded store, ${opt.rounds} rounds alternated\n`);
console.log('| concurrency | chunks | requests | end to end s (median) | chunks/s | vs concurrency ' + levels[0] + ' |');
console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
const base = median(runs.get(levels[0]).map((r) => r.s));
for (const c of levels) {
  const rs = runs.get(c);
  const s = median(rs.map((r) => r.s));
  console.log(`| ${c} | ${rs[0].chunks} | ${rs[0].requests} | ${s.toFixed(2)} | ${(rs[0].chunks / s).toFixed(0)} | ${(base / s).toFixed(2)}x |`);
}
if (digests.size !== 1) {
  console.error(`MISMATCH: the concurrency levels stored different rows (${digests.size} digests)`);
  process.exit(1);
}
console.log('\nevery run stored the same rows (source, content, embedding)');
