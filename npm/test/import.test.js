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
import { bin, faultyWrites, runCli } from './helpers.js';

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

/**
 * What importMemories wrote before the set-based batch (schema 20): per batch, the keys' states
 * under their locks (memloom_memory_states), then one memloom_remember call per record, the
 * skips decided here. Kept as the reference the batch function must equal.
 */
async function importPerRecord(store, records, batchSize) {
  for (let at = 0; at < records.length; at += batchSize) {
    const batch = records.slice(at, at + batchSize).map((r) => ({ key: r.key ?? null, seq: r.seq ?? 0, text: r.text, metadata: r.metadata, at: r.at ?? null }));
    const vectors = await store._embed(batch.map((r) => r.text));
    const keys = [...new Set(batch.filter((r) => r.key !== null).map((r) => r.key))].sort();
    await store.db.transaction(async (tx) => {
      const state = new Map();
      if (keys.length > 0) {
        const { rows } = await tx.query('SELECT key, seq, active FROM memloom_memory_states($1, $2::text[])', [store.namespace, keys]);
        for (const r of rows) state.set(r.key, { seq: r.seq == null ? null : Number(r.seq), active: r.active });
      }
      for (const [i, r] of batch.entries()) {
        let metadata = r.metadata ?? {};
        if (r.key !== null) {
          const st = state.get(r.key) ?? { seq: null, active: null };
          if ((st.seq !== null && r.seq <= st.seq) || st.active === r.text) continue;
          metadata = { ...metadata, seq: r.seq };
          state.set(r.key, { seq: r.seq, active: r.text });
        }
        await tx.query('SELECT id, version FROM memloom_remember($1, $2, $3, $4::vector, $5::jsonb, $6::timestamptz)', [
          store.namespace,
          r.key,
          r.text,
          vectors[i],
          JSON.stringify(metadata),
          r.at,
        ]);
      }
    });
  }
}

/** Every stored memory with its links, metadata and event time: the same ids in both stores. */
async function rows(store) {
  const { rows: out } = await store.db.query(
    `SELECT id, key, version, status, content, metadata, supersedes, superseded_by, event_at, valid_to IS NULL AS open
       FROM memloom_items WHERE kind = 'memory' ORDER BY id`,
  );
  return out.map((r) => ({ ...r, event_at: r.event_at == null ? null : new Date(r.event_at).toISOString() }));
}

test('the set-based batch (memloom_remember_batch) stores what one memloom_remember per record stored', async () => {
  // records(): interleaved keys, unkeyed lines, unchanged repeats; plus metadata and event
  // times, a key's seq going back and a repeated seq (the API does not refuse those: skipped).
  const recs = records(900).map((r, i) => ({
    ...r,
    ...(i % 5 === 0 ? { metadata: { source: 'chat', turn: i } } : {}),
    ...(i % 11 === 0 ? { at: `2024-0${1 + (i % 9)}-1${i % 10}T08:00:00Z` } : {}),
  }));
  recs.push({ key: 'key-1', seq: 1, text: 'an old seq' }, { key: 'key-2', seq: 99, text: 'late' }, { key: 'key-2', seq: 99, text: 'same seq' });
  for (const batchSize of [64, 400]) {
    // 400: a key's versions are 225 lines apart, so most batches hold two of some keys.
    const ref = await openStore({});
    const got = await openStore({});
    try {
      await importPerRecord(ref, recs, batchSize);
      const report = await got.importMemories(recs, { batchSize });
      const want = await rows(ref);
      assert.deepEqual(await rows(got), want, `batch size ${batchSize}`);
      assert.equal(report.written, want.length);
      assert.equal(report.skipped, recs.length - want.length);
      assert.equal(report.superseding, want.filter((r) => r.version > 1).length);
      // memloom_history of every key: the same versions, contents, statuses and event times,
      // and each closed interval ends where the next version's begins.
      const keys = [...new Set(recs.filter((r) => r.key).map((r) => r.key))];
      for (const key of keys) {
        const a = await ref.history(key);
        const b = await got.history(key);
        const strip = (h) => h.map((v) => ({ id: v.id, version: v.version, status: v.status, content: v.content, eventAt: v.eventAt ?? null, open: v.validTo == null }));
        assert.deepEqual(strip(b), strip(a), `history of ${key}`);
        for (let i = 1; i < b.length; i++) assert.equal(b[i - 1].validTo, b[i].validFrom, `${key}: version ${i}'s interval ends where ${i + 1}'s begins`);
      }
      // The same ranked recall, and statistics equal in both (each kept by its writes). The
      // vector arm breaks exact ties of distance (common with hash-v1: "loose note 556 about
      // pg_hba.conf" and "... 633 ..." are equally near any query) by physical row order, not
      // by id, and the two paths leave the same rows in different heap places (one updates a
      // version as it supersedes it, the other inserts it superseded): both tables are laid
      // out in id order first, so the comparison is of the rows, not of where they sit.
      for (const s of [ref, got]) await s.db.exec('CLUSTER memloom_items USING memloom_items_pkey; ANALYZE memloom_items');
      for (const q of ['deploy freeze', 'pg_hba.conf timeout', 'ERR_REQUIRE_ESM queue fact 17', 'loose note socket', 'billing Postgres']) {
        const ids = async (s) => (await s.recall(q, { limit: 10 })).results.map((h) => h.id);
        assert.deepEqual(await ids(got), await ids(ref), `recall "${q}"`);
      }
      const stats = (s) =>
        s.db.query(`SELECT lexeme, df FROM memloom_term_stats ORDER BY lexeme`).then((r) => r.rows);
      assert.deepEqual(await stats(got), await stats(ref), 'keyword statistics');
      const before = await stats(got);
      await got.db.query('SELECT memloom_recompute_stats($1)', [got.namespace]);
      assert.deepEqual(await stats(got), before, 'the batch kept the statistics exact (= a full recompute)');
    } finally {
      await ref.close();
      await got.close();
    }
  }
});

test('importMemories holds at most the batch being written and the next: records are pulled as batches are written', async () => {
  const store = await openStore({});
  try {
    let pulled = 0;
    let done = 0;
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
        done += b.size;
        // The next batch is read and embedded while this one is written, nothing beyond it (and
        // the one record the loop has pulled but not taken yet).
        assert.ok(pulled <= done + 128 + 1, `pulled ${pulled} with ${done} written`);
      },
    });
    assert.deepEqual(sizes, [...Array(7).fill(128), 1000 - 7 * 128]);
    assert.equal(report.written, 1000);
    assert.equal(report.superseding, 700);
  } finally {
    await store.close();
  }
});

test('importMemories: a failed batch write stops the import; a bad record is raised once the batch in flight is written', async () => {
  const source = (n, bad = -1) =>
    (function* () {
      for (let i = 0; i < n; i++) yield i === bad ? { key: 'k', text: '' } : { key: `k${i}`, seq: 1, text: `note ${i} about ${WORDS[i % WORDS.length]}` };
    })();
  const count = async (s) => (await s.db.query(`SELECT count(*)::int AS n FROM memloom_items WHERE kind = 'memory'`)).rows[0].n;
  const a = await openStore({});
  try {
    faultyWrites(a, { failAt: 3 });
    const batches = [];
    await assert.rejects(a.importMemories(source(100), { batchSize: 10, onBatch: (b) => batches.push(b.batch) }), /disk full/);
    assert.deepEqual(batches, [1, 2]);
    assert.equal(await count(a), 20);
  } finally {
    await a.close();
  }
  const b = await openStore({});
  try {
    const writes = faultyWrites(b, { slowAt: 2 });
    // Record 25 is refused while batch 2 (records 10-19) may still be written.
    await assert.rejects(b.importMemories(source(100, 25), { batchSize: 10 }), /memory 26/);
    assert.equal(writes.ended, 2);
    assert.equal(await count(b), 20);
  } finally {
    await b.close();
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
