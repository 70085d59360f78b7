// Store additions the browser preview uses: ingesting Blob/File documents (the same skip rules
// as files on disk) and listing active memories. An in-memory PGlite store, no network.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../src/entry-node.js';
import { faultyWrites } from './helpers.js';
import { decodeDocument, MAX_DOCUMENT_BYTES } from '../src/decode.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let store;
before(async () => {
  store = await openStore({});
});
after(async () => {
  await store?.close();
});

test('decodeDocument: text, binary, non-UTF-8 and oversized bytes', () => {
  assert.deepEqual(decodeDocument(new TextEncoder().encode('# A\n\nhé')), { text: '# A\n\nhé' });
  assert.match(decodeDocument(Uint8Array.of(65, 0, 66)).skip, /binary/);
  assert.match(decodeDocument(Uint8Array.of(0xff, 0xfe, 0x41)).skip, /not valid UTF-8/);
  assert.match(decodeDocument(new Uint8Array(MAX_DOCUMENT_BYTES + 1).fill(65)).skip, /larger than/);
});

test('ingest takes File documents, skips binary ones with a warning, and is incremental', async () => {
  const warnings = [];
  const progress = [];
  const docs = [
    { root: 'notes', source: 'pg.md', file: new File(['# Postgres\n\n## Auth\n\nRules live in pg_hba.conf.\n'], 'pg.md') },
    { root: 'notes', source: 'logo.png', file: new Blob([Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0, 0, 1)]) },
  ];
  const r = await store.ingest(docs, { onWarning: (w) => warnings.push(w), onProgress: (p) => progress.push(p.done) });
  assert.equal(r.files, 1);
  assert.equal(r.added, 1);
  assert.equal(r.skipped, 1);
  assert.equal(r.chunks, 1);
  assert.deepEqual(warnings, [{ source: 'logo.png', path: undefined, reason: 'binary (contains NUL bytes)' }]);
  assert.deepEqual(progress, [1, 2]);
  const again = await store.ingest(docs.slice(0, 1));
  assert.equal(again.unchanged, 1);
  const { results } = await store.recall('pg_hba.conf', { limit: 1 });
  assert.equal(results[0].source, 'pg.md');
  assert.equal(results[0].breadcrumb, 'Postgres > Auth');
});

test('a document with no chunks (only headings) is empty on every ingest, never new (issue 15)', async () => {
  const docs = [
    { root: 'empty', source: 'title-only.md', text: '# Just a title\n' },
    { root: 'empty', source: 'headings.md', text: '# A\n\n## B\n\n### C\n' },
    { root: 'empty', source: 'blank.txt', text: '\n  \n\t\n' },
    { root: 'empty', source: 'real.md', text: '# Real\n\nThis one has a body.\n' },
  ];
  const first = await store.ingest(docs);
  assert.deepEqual([first.files, first.added, first.empty, first.unchanged, first.chunks], [4, 1, 3, 0, 1], JSON.stringify(first));
  for (let run = 0; run < 2; run++) {
    const again = await store.ingest(docs);
    assert.deepEqual([again.added, again.changed, again.empty, again.unchanged, again.chunks], [0, 0, 3, 1, 0], JSON.stringify(again));
  }
  // A file that had chunks and now yields none is changed: its chunks go.
  const emptied = await store.ingest([{ ...docs[3], text: '# Real\n' }]);
  assert.deepEqual([emptied.changed, emptied.empty, emptied.chunks], [1, 0, 0], JSON.stringify(emptied));
  const { rows } = await store.db.query(`SELECT count(*)::int AS n FROM memloom_items WHERE metadata->>'root' = 'empty'`);
  assert.equal(rows[0].n, 0);
  assert.equal((await store.ingest([docs[3]])).added, 1);
});

test('a directory read ahead: files, skips and progress come in path order; a re-ingest finds every hash unchanged', async () => {
  // More files than the loads kept in flight (ingest.js READ_AHEAD), with skips among them.
  const dir = mkdtempSync(join(tmpdir(), 'memloom-ahead-'));
  try {
    const names = [];
    for (let i = 0; i < 40; i++) {
      const name = `f${String(i).padStart(2, '0')}.md`;
      names.push(name);
      if (i % 7 === 3) writeFileSync(join(dir, name), Uint8Array.of(0x89, 0x50, 0, 1));
      else if (i % 11 === 5) writeFileSync(join(dir, name), Uint8Array.of(0xff, 0xfe, 0x41));
      else writeFileSync(join(dir, name), `# File ${i}\n\nReading ahead keeps note ${i} in order.\n`);
    }
    const skipped = names.filter((_, i) => i % 7 === 3 || i % 11 === 5);
    const progress = [];
    const warnings = [];
    const r = await store.ingest(dir, { batchFiles: 3, onProgress: (p) => progress.push([p.done, p.source]), onWarning: (w) => warnings.push(w.source) });
    assert.deepEqual(progress, names.map((n, i) => [i + 1, n]));
    assert.deepEqual(warnings, skipped);
    assert.deepEqual([r.files, r.added, r.skipped], [40 - skipped.length, 40 - skipped.length, skipped.length]);
    const again = await store.ingest(dir);
    assert.deepEqual([again.unchanged, again.added, again.changed, again.removed], [40 - skipped.length, 0, 0, 0], JSON.stringify(again));
    const { results } = await store.recall('note 18', { limit: 1 });
    assert.equal(results[0].source, 'f18.md');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('documents in one call are written as one call per document would write them, in order', async () => {
  // Loose documents with one root share batches (ingest.js); a source given twice, a binary
  // Blob and a second root must come out as they do one document per call.
  const docs = [];
  for (let i = 0; i < 12; i++) docs.push({ root: 'inbox', source: `m${i}.md`, text: `# Memo ${i}\n\nBatched memo ${i} about topic ${i % 3}.\n` });
  docs.splice(4, 0, { root: 'inbox', source: 'blob.bin', file: new Blob([Uint8Array.of(1, 0, 2)]) });
  docs.splice(7, 0, { root: 'inbox', source: 'm2.md', text: '# Memo 2\n\nThe second version of memo 2.\n' });
  docs.splice(9, 0, { root: 'other', source: 'm2.md', text: '# Other\n\nA memo 2 under another root.\n' });
  const rows = (s) => s.db.query(`SELECT metadata->>'root' AS root, source, content FROM memloom_items WHERE kind = 'chunk' ORDER BY 1, 2, 3`).then((r) => r.rows);
  const batched = await openStore({});
  const single = await openStore({});
  try {
    const progress = [];
    const warnings = [];
    const r = await batched.ingest(docs, { batchFiles: 4, onProgress: (p) => progress.push([p.done, p.source]), onWarning: (w) => warnings.push(w.source) });
    assert.deepEqual(progress, docs.map((d, i) => [i + 1, d.source]));
    assert.deepEqual(warnings, ['blob.bin']);
    const sum = { files: 0, added: 0, changed: 0, unchanged: 0, empty: 0, removed: 0, skipped: 0, chunks: 0 };
    for (const d of docs) for (const [k, v] of Object.entries(await single.ingest([d]))) sum[k] += v;
    assert.deepEqual(r, sum);
    assert.deepEqual([r.added, r.changed, r.skipped], [13, 1, 1]);
    assert.deepEqual(await rows(batched), await rows(single));
    assert.deepEqual(
      (await rows(batched)).filter((x) => x.source === 'm2.md').map((x) => [x.root, x.content]),
      [['inbox', 'Memo 2\n\nThe second version of memo 2.'], ['other', 'Other\n\nA memo 2 under another root.']],
    );
  } finally {
    await batched.close();
    await single.close();
  }
});

test('a batch is embedded while the one before is written; a failed write or embed stops the ingest with nothing left in flight', async () => {
  const docs = Array.from({ length: 6 }, (_, i) => ({ root: 'pipe', source: `p${i}.md`, text: `# Pipe ${i}\n\nPipelined note ${i}.\n` }));
  const stored = async (s) => (await s.db.query(`SELECT DISTINCT source FROM memloom_items WHERE kind = 'chunk' ORDER BY 1`)).rows.map((r) => r.source);
  // The third write fails: the first two are stored, progress came for them only, in order.
  const a = await openStore({});
  try {
    faultyWrites(a, { failAt: 3 });
    const progress = [];
    await assert.rejects(a.ingest(docs, { batchFiles: 1, onProgress: (p) => progress.push(p.source) }), /disk full/);
    assert.deepEqual(progress, ['p0.md', 'p1.md']);
    assert.deepEqual(await stored(a), ['p0.md', 'p1.md']);
  } finally {
    await a.close();
  }
  // The third embed fails while the second batch's (slow) write is in flight: the ingest
  // rejects only once that write has ended, so nothing writes after the caller sees the error.
  const b = await openStore({});
  try {
    const writes = faultyWrites(b, { slowAt: 2 });
    const embed = b.embedder.embed.bind(b.embedder);
    let embeds = 0;
    b.embedder = { ...b.embedder, embed: (texts) => (++embeds === 3 ? Promise.reject(new Error('embedder down')) : embed(texts)) };
    await assert.rejects(b.ingest(docs, { batchFiles: 1 }), /embedder down/);
    assert.equal(writes.ended, 2);
    assert.deepEqual(await stored(b), ['p0.md', 'p1.md']);
  } finally {
    await b.close();
  }
});

test('a document that is neither text nor a Blob is refused with the accepted shapes', async () => {
  await assert.rejects(store.ingest([{ source: 'x.md', file: 'not a blob' }]), /\{source, file: Blob\}/);
});

test('memories lists active memories newest first, superseded versions left out', async () => {
  await store.remember('Deploys freeze on Thursdays.', { key: 'freeze' });
  await store.remember('Deploys freeze on Fridays.', { key: 'freeze' });
  await store.remember('The on-call rota lives in the wiki.');
  const list = await store.memories();
  assert.deepEqual(
    list.map((m) => [m.key, m.version, m.content]),
    [
      [null, 1, 'The on-call rota lives in the wiki.'],
      ['freeze', 2, 'Deploys freeze on Fridays.'],
    ],
  );
  assert.equal((await store.memories({ limit: 1 })).length, 1);
  await assert.rejects(store.memories({ limit: 0 }), /limit must be a positive integer/);
});

test('extra PGlite options reach an embedded store', async () => {
  const relaxed = await openStore({ pglite: { relaxedDurability: true } });
  try {
    await relaxed.ingest([{ source: 'a.md', text: '# A\n\nThe ERR_TEST_CODE error.\n' }]);
    assert.equal(relaxed.db.kind, 'embedded');
    assert.equal((await relaxed.recall('ERR_TEST_CODE', { limit: 1 })).results[0].source, 'a.md');
  } finally {
    await relaxed.close();
  }
});
