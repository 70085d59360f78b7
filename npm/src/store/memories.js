// Memories: remember (a new version supersedes the active one), bulk import, forget, history.
// Each is one SQL function call per batch (sql/memloom/09_memories.sql, 14_reads.sql).
import { ensureReady } from '../core.js';
import { vectorsParam } from './vectors.js';
import { MemloomError } from '../errors.js';
import { writeBehind } from '../in-flight.js';
import { checkNoNul, hasNul, toInstant } from './input.js';
import { afterWrite, ANALYZE_CHECK_EVERY } from './maintenance.js';
/** @import { Store } from './store.js' */

/** Memories per importMemories batch (one embed call and one transaction each). */
export const IMPORT_BATCH = 500;

/**
 * A memory record's fields, as remember / rememberMany / importMemories take them, checked;
 * returns its event time as PostgreSQL gets it (or null), so it is parsed once.
 */
function checkMemory(r, what) {
  if (typeof r?.text !== 'string' || r.text.trim() === '') throw new MemloomError(`${what} has no text`);
  if (r.key != null && (typeof r.key !== 'string' || r.key === '')) throw new MemloomError(`${what}: key must be a non-empty string`);
  checkNoNul(r.text, `${what}'s text`);
  if (r.key != null) checkNoNul(r.key, `${what}'s key`);
  if (r.metadata != null && hasNul(r.metadata)) checkNoNul('\0', `${what}'s metadata`);
  return toInstant(r.at, `${what}'s at (event time)`);
}

/** Store#remember (store.js documents it). @param {Store} store @param {string} text @param {import('../types.js').RememberOptions} [options] */
export async function remember(store, text, { key, metadata, at, onIndexBuild } = {}) {
  const [out] = await rememberMany(store, [{ text, key, metadata, at }], { onIndexBuild });
  return out;
}

/**
 * Store#rememberMany (store.js documents it). @param {Store} store @param {import('../types.js').MemoryRecord[]} records
 * @param {{ onIndexBuild?: (e: import('../types.js').IndexBuild) => void }} [options]
 */
export async function rememberMany(store, records, { onIndexBuild } = {}) {
  // The instant rule and the vectors' array literal are the core's; a browser store with an API
  // embedder may not have loaded it.
  await ensureReady();
  const ats = records.map((r, i) => checkMemory(r, `memory ${i + 1}`));
  const vectors = vectorsParam(store, await store.embedder.embed(records.map((r) => r.text)));
  // One memloom_remember_many call: one statement, so the batch is atomic through a PL/Proxy
  // front too, where every routed call commits on its own partition (docs/SCALING.md). A
  // transaction of its own, so a server store runs it again after a deadlock (db-pg.js).
  const { rows } = await store.db.transaction((tx) =>
    tx.query(
      'SELECT ord, id, version FROM memloom_remember_many($1, $2::text[], $3::text[], $4::vector[], $5::jsonb[], $6::timestamptz[]) ORDER BY ord',
      [
        store.namespace,
        records.map((r) => r.key ?? null),
        records.map((r) => r.text),
        vectors,
        records.map((r) => JSON.stringify(r.metadata ?? {})),
        ats,
      ],
    ),
  );
  const out = rows.map((row, i) => ({ id: Number(row.id), key: records[i].key ?? null, version: Number(row.version) }));
  await afterWrite(store, { small: true, onIndexBuild });
  return out;
}

/**
 * Store#importMemories (store.js documents it).
 * @param {Store} store
 * @param {Iterable<import('../types.js').ImportRecord> | AsyncIterable<import('../types.js').ImportRecord>} records
 * @param {import('../types.js').ImportOptions} [options]
 */
export async function importMemories(store, records, { batchSize = IMPORT_BATCH, onBatch, onIndexBuild } = {}) {
  if (!Number.isInteger(batchSize) || batchSize <= 0) throw new MemloomError(`batchSize must be a positive integer, not ${batchSize}`);
  const report = { read: 0, written: 0, skipped: 0, superseding: 0, batches: 0 };
  let batch = [];
  // The instant rule and the vectors' array literal are the core's; a browser store with an API
  // embedder may not have loaded it.
  await ensureReady();
  // A batch is written while the next one is read and embedded (in-flight.js).
  const writes = writeBehind();
  const flush = async () => {
    if (batch.length === 0) return;
    const items = batch;
    batch = [];
    const vectors = vectorsParam(store, await store.embedder.embed(items.map((r) => r.text)));
    await writes.start(async () => {
      const r = await writeBatch(store, items, vectors);
      report.written += r.written;
      report.skipped += r.skipped;
      report.superseding += r.superseding;
      report.batches++;
      onBatch?.({ batch: report.batches, size: items.length, ...report });
    });
  };
  try {
    for await (const r of records) {
      report.read++;
      const at = checkMemory(r, `memory ${report.read}`);
      if (r.seq != null && !Number.isFinite(r.seq)) throw new MemloomError(`memory ${report.read}: seq must be a finite number`);
      batch.push({ key: r.key ?? null, seq: r.seq ?? 0, text: r.text, metadata: r.metadata, at });
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    await writes.settle();
  } catch (error) {
    await writes.drain(); // the batch in flight is written (or fails) before the error is raised
    throw error;
  }
  if (report.written > 0) await afterWrite(store, { small: report.written < ANALYZE_CHECK_EVERY, onIndexBuild });
  return report;
}

/**
 * One batch of importMemories, its vectors given: one memloom_remember_batch call
 * (sql/memloom/09_memories.sql), which takes the keys' locks, decides the skips (seq at or
 * below the key's newest, or the key's active text) and writes the batch's versions in a few
 * set-based statements: one statement per batch, not one memloom_remember call per record.
 * @param {Store} store
 */
async function writeBatch(store, batch, vectors) {
  // A transaction of its own, so a server store runs it again after a deadlock (db-pg.js).
  const { rows } = await store.db.transaction((tx) =>
    tx.query(
      'SELECT written, skipped, superseding FROM memloom_remember_batch($1, $2::text[], $3::float8[], $4::text[], $5::vector[], $6::jsonb[], $7::timestamptz[])',
      [
        store.namespace,
        batch.map((r) => r.key),
        batch.map((r) => r.seq),
        batch.map((r) => r.text),
        vectors,
        batch.map((r) => JSON.stringify(r.metadata ?? {})),
        batch.map((r) => r.at),
      ],
    ),
  );
  return { written: Number(rows[0].written), skipped: Number(rows[0].skipped), superseding: Number(rows[0].superseding) };
}

/** Store#forget (store.js documents it). @param {Store} store @param {import('../types.js').ForgetTarget} target */
export async function forget(store, target) {
  const t = typeof target === 'string' ? { key: target } : (target ?? {});
  let key = null;
  let id = null;
  if (t.all != null) {
    if (t.all !== true || t.key != null || t.id != null) throw new MemloomError('forget: pass {all: true, namespace} alone to forget a whole namespace');
    if (t.namespace !== store.namespace) {
      throw new MemloomError(
        `forget {all: true} needs namespace: "${store.namespace}" (this store's namespace) to confirm, not ${JSON.stringify(t.namespace ?? null)}`,
      );
    }
    const { rows } = await store.db.transaction((tx) =>
      tx.query('SELECT items, mentions, entities, statistics FROM memloom_forget_namespace($1)', [store.namespace]),
    );
    const out = {
      deleted: Number(rows[0].items),
      mentions: Number(rows[0].mentions),
      entities: Number(rows[0].entities),
      statistics: Number(rows[0].statistics),
    };
    if (out.deleted + out.entities > 0) await afterWrite(store, { small: true });
    return out;
  }
  if (t.key != null) {
    if (typeof t.key !== 'string' || t.key === '') throw new MemloomError('forget: key must be a non-empty string');
    checkNoNul(t.key, 'the key');
    key = t.key;
  } else if (t.id != null) {
    if (!Number.isSafeInteger(Number(t.id)) || Number(t.id) < 1) throw new MemloomError('forget: id must be a positive integer');
    id = Number(t.id);
  } else {
    throw new MemloomError('forget takes a key, {key}, {id} or {all: true, namespace}');
  }
  // memories_only false: the CLI's `forget --id` removes any item of the namespace, chunks too;
  // {id, memoriesOnly: true} (MCP) deletes nothing when the id names a chunk, and says so.
  const memoriesOnly = t.memoriesOnly === true;
  const { rows } = await store.db.transaction((tx) =>
    tx.query('SELECT items, mentions, entities, not_a_memory FROM memloom_forget($1, $2, $3, $4)', [store.namespace, key, id, memoriesOnly]),
  );
  const out = { deleted: Number(rows[0].items), mentions: Number(rows[0].mentions), entities: Number(rows[0].entities) };
  if (memoriesOnly) out.notAMemory = rows[0].not_a_memory === true;
  if (out.deleted > 0) await afterWrite(store, { small: true });
  return out;
}

/** Store#history (store.js documents it). @param {Store} store @param {string} key */
export async function history(store, key) {
  if (typeof key !== 'string' || key === '') throw new MemloomError('history needs a non-empty key');
  checkNoNul(key, 'the key');
  const { rows } = await store.db.query('SELECT * FROM memloom_history($1, $2)', [store.namespace, key]);
  const iso = (t) => (t == null ? null : new Date(t).toISOString());
  return rows.map((r) => ({
    id: Number(r.id),
    key,
    version: Number(r.version),
    status: r.status,
    content: r.content,
    createdAt: iso(r.created_at),
    validFrom: iso(r.valid_from),
    validTo: iso(r.valid_to),
    eventAt: iso(r.event_at),
  }));
}

/** Store#memories (store.js documents it). @param {Store} store @param {{ limit?: number }} [options] */
export async function memories(store, { limit = 100 } = {}) {
  if (!Number.isInteger(limit) || limit <= 0) throw new MemloomError(`limit must be a positive integer, not ${limit}`);
  const { rows } = await store.db.query('SELECT id, key, version, content, created_at FROM memloom_memories($1, $2)', [store.namespace, limit]);
  return rows.map((r) => ({
    id: Number(r.id),
    key: r.key ?? null,
    version: Number(r.version),
    content: r.content,
    createdAt: new Date(r.created_at).toISOString(),
  }));
}
