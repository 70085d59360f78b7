// `memloom remember --file` streams (issue 19, item 4): the file is read, embedded and written
// in bounded batches, one transaction each; a re-run after a kill resumes with exactly one
// version per (key, seq); the store is the one the old all-at-once import made (every record
// sorted by seq, one rememberMany). Fixtures are generated here; embedded stores, no network.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/entry-node.js';
import { bin, runCli } from './helpers.js';

const WORDS = ['deploy', 'freeze', 'Friday', 'billing', 'Postgres', 'timeout', 'pg_hba.conf', 'ERR_REQUIRE_ESM', 'orders-api', 'queue', 'socket'];

/**
 * `n` JSONL records: keys with up to 4 versions each, lines of different keys interleaved (each
 * key's in seq order), every 7th line without a key, and some versions repeating the text of
 * the key's previous one (unchanged: no new version).
 */
function records(n) {
  const keys = Math.floor(n / 4);
  const out = [];
  for (let i = 0; i < n; i++) {
    if (i % 7 === 3) {
      out.push({ seq: i % 5, text: `loose note ${i} about ${WORDS[i % WORDS.length]}` });
      continue;
    }
    const k = i % keys;
    const seq = Math.floor(i / keys) + 1;
    const same = seq > 1 && k % 9 === 0; // repeats the previous version's text
    out.push({ key: `key-${k}`, seq, text: `${WORDS[(k * 3) % WORDS.length]} ${WORDS[k % WORDS.length]} fact ${k} v${same ? seq - 1 : seq}` });
  }
  return out;
}

const jsonl = (recs) => recs.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** The memories of a store, comparable across stores (no ids, no timestamps). */
async function memories(store) {
  const { rows } = await store.db.query(
    `SELECT key, version, status, content FROM memloom_items WHERE kind = 'memory' ORDER BY key NULLS FIRST, version, content`,
  );
  return rows.map((r) => `${r.key ?? '-'}|${r.version}|${r.status}|${r.content}`);
}

let tmp;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-import-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

test('remember --file of 1,000 lines in batches gives the store the all-at-once import gave', async () => {
  const recs = records(1000);
  const file = join(tmp, 'same.jsonl');
  writeFileSync(file, jsonl(recs));
  const dir = join(tmp, 'same');
  assert.equal(runCli(['init', '--store', dir]).status, 0);
  const r = runCli(['remember', '--file', file, '--store', dir, '--batch-size', '200', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.read, 1000);
  assert.equal(report.batches, 5);

  // Before: every record sorted by seq (stable), one rememberMany.
  const ref = await openStore({});
  const sorted = recs.map((x, i) => ({ ...x, i })).sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0) || a.i - b.i);
  await ref.rememberMany(sorted.map((x) => ({ key: x.key, text: x.text })));
  const want = await memories(ref);
  await ref.close();
  const got = await openStore({ dir, create: false });
  try {
    assert.deepEqual(await memories(got), want);
    assert.equal(report.written, want.length);
    assert.equal(report.skipped, 1000 - want.length, 'the unchanged repeats are skipped');
  } finally {
    await got.close();
  }
  // The same file again writes nothing: every (key, seq) is there.
  const again = runCli(['remember', '--file', file, '--store', dir, '--json']);
  assert.equal(again.status, 0, again.stderr);
  const rep2 = JSON.parse(again.stdout);
  assert.equal(rep2.written, recs.filter((x) => !x.key).length, 'only records without a key (no identity) are written again');
});

test('a re-run after a kill mid-file gives exactly one version per (key, seq)', async () => {
  const recs = records(600).filter((x) => x.key);
  const file = join(tmp, 'kill.jsonl');
  writeFileSync(file, jsonl(recs));
  const dir = join(tmp, 'kill');
  assert.equal(runCli(['init', '--store', dir]).status, 0);
  // Piped, with a progress line per committed batch: kill -9 after the second one.
  const child = spawn(process.execPath, [bin, 'remember', '--file', file, '--store', dir, '--batch-size', '40'], {
    env: { ...process.env, MEMLOOM_PROGRESS_BATCHES: '1', DATABASE_URL: '' },
  });
  let lines = 0;
  await new Promise((resolve) => {
    child.stderr.on('data', (d) => {
      lines += String(d).split('\n').filter((l) => /memories \(\d+%\)/.test(l)).length;
      if (lines >= 2) child.kill('SIGKILL');
    });
    child.on('close', resolve);
  });
  assert.ok(lines >= 2, 'the import reported two committed batches before the kill');
  let store = await openStore({ dir, create: false });
  const { rows: partial } = await store.db.query(`SELECT count(*)::int AS n FROM memloom_items WHERE kind = 'memory'`);
  await store.close();
  const distinct = new Set(recs.map((x) => `${x.key}|${x.text}`));
  assert.ok(partial[0].n > 0 && partial[0].n < distinct.size, `killed mid-file (${partial[0].n} of ${distinct.size} stored)`);

  const r = runCli(['remember', '--file', file, '--store', dir, '--batch-size', '40', '--json']);
  assert.equal(r.status, 0, r.stderr);
  store = await openStore({ dir, create: false });
  try {
    const { rows } = await store.db.query(
      `SELECT key, metadata->>'seq' AS seq, count(*)::int AS n FROM memloom_items WHERE kind = 'memory' GROUP BY 1, 2`,
    );
    assert.ok(rows.every((x) => x.n === 1), 'one version per (key, seq)');
    // Exactly the versions an uninterrupted import stores (the unchanged repeats are none).
    const ref = await openStore({});
    await ref.importMemories(recs);
    assert.deepEqual(await memories(store), await memories(ref));
    await ref.close();
  } finally {
    await store.close();
  }
});

test('importMemories holds at most one batch: records are pulled as batches are written', async () => {
  const store = await openStore({});
  try {
    let pulled = 0;
    const sizes = [];
    const source = (function* () {
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield { key: `k${i % 300}`, seq: Math.floor(i / 300), text: `note ${i} about ${WORDS[i % WORDS.length]}` };
      }
    })();
    const report = await store.importMemories(source, {
      batchSize: 128,
      onBatch: (b) => {
        sizes.push(b.size);
        // Nothing read ahead of the batch just written: pulled == read so far.
        assert.equal(pulled, b.read);
      },
    });
    assert.deepEqual(sizes, [...Array(7).fill(128), 1000 - 7 * 128]);
    assert.equal(report.written, 1000);
    assert.equal(report.superseding, 700);
  } finally {
    await store.close();
  }
});

test('remember --file refuses a key whose seq goes back, before writing anything', () => {
  const file = join(tmp, 'order.jsonl');
  writeFileSync(file, jsonl([{ key: 'a', seq: 1, text: 'one' }, { key: 'b', seq: 1, text: 'b' }, { key: 'a', seq: 1, text: 'again' }]));
  const dir = join(tmp, 'order');
  assert.equal(runCli(['init', '--store', dir]).status, 0);
  const r = runCli(['remember', '--file', file, '--store', dir]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /order\.jsonl:3: key "a" has seq 1 after seq 1 \(.*order\.jsonl:1\); .*increasing seq order/);
  assert.equal(runCli(['history', 'b', '--store', dir]).status, 2, 'nothing was written');
});
