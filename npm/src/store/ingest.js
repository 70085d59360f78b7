// Ingest: files and documents chunked, embedded and written in batches (memloom_replace_chunks).
import { chunk } from '../core.js';
import { vectorsParam } from './vectors.js';
import { loadBlob } from '../decode.js';
import { MemloomError } from '../errors.js';
import { writeBehind } from '../in-flight.js';
import { checkNoNul, positive } from './input.js';
import { activeItems, afterWrite, refreshStats, withVectorIndexDeferred } from './maintenance.js';
/** @import { Store } from './store.js' */

/**
 * Ingest writes files in batches, one transaction and one memloom_replace_chunks call each:
 * a batch closes once its changed files hold this many characters or number this many.
 * Progress is reported per file as its batch is written.
 */
export const INGEST_BATCH_BYTES = 1 << 20;
export const INGEST_BATCH_FILES = 500;

/**
 * Store#ingest (store.js documents it).
 * @param {Store} store
 * @param {import('../types.js').IngestInput | import('../types.js').IngestInput[]} inputs
 * @param {import('../types.js').IngestOptions} [options]
 */
export async function ingest(store, inputs, options = {}) {
  return withVectorIndexDeferred(store, () => ingestInputs(store, inputs, options));
}

/** @param {Store} store @param {import('../types.js').IngestInput | import('../types.js').IngestInput[]} inputs @param {import('../types.js').IngestOptions} options */
async function ingestInputs(store, inputs, options) {
  const { maxBytes, onProgress, onWarning, onIndexBuild } = options;
  const list = Array.isArray(inputs) ? inputs : [inputs];
  const warn = (w) => onWarning?.(w);
  const report = { files: 0, added: 0, changed: 0, unchanged: 0, empty: 0, removed: 0, skipped: 0, chunks: 0 };
  // groups: [{root, docs: [{source, load()}], prune}]
  const groups = [];
  const loose = [];
  for (const input of list) {
    if (typeof input === 'string') {
      if (!store.files) throw new MemloomError('ingesting paths needs Node; pass documents {source, text} instead');
      const g = await store.files.expand(input);
      if (g.prune) groups.push(g);
      else loose.push(...g.docs.map((doc) => ({ root: g.root, doc })));
    } else if (input && typeof input.source === 'string' && typeof input.text === 'string') {
      loose.push({ root: input.root ?? '', doc: { source: input.source, load: async () => ({ text: input.text }) } });
    } else if (input && typeof input.source === 'string' && typeof input.file?.arrayBuffer === 'function') {
      // A Blob / File (browser file pickers, drag and drop): read when its turn comes.
      loose.push({ root: input.root ?? '', doc: { source: input.source, load: () => loadBlob(input.file) } });
    } else {
      throw new MemloomError('ingest takes paths (strings) or documents {source, text} / {source, file: Blob}');
    }
  }
  // Loose documents with one root share a group, so they share its hash lookup, embed calls
  // and write batches (3,000 documents one group each took 48 s, as a folder 3 s). A source
  // that comes again starts a new group: it is compared with what the first one wrote.
  let run;
  for (const { root, doc } of loose) {
    if (!run || run.root !== root || run.sources.has(doc.source)) {
      run = { root, docs: [], prune: false, sources: new Set() };
      groups.push(run);
    }
    run.docs.push(doc);
    run.sources.add(doc.source);
  }
  for (const g of groups) {
    checkNoNul(g.root, 'a document root');
    for (const doc of g.docs) checkNoNul(doc.source, `the document name ${JSON.stringify(doc.source)}`);
  }
  const total = groups.reduce((n, g) => n + g.docs.length, 0);
  // A load that writes more chunks than the namespace held is a bulk load: its transactions
  // only mark the statistics for one recompute at the end (sql/0009, memloom.stats_bulk),
  // which reads each document once instead of summing every file's lexemes.
  const bulk = { before: await activeItems(store), written: 0, used: false };
  let done = 0;
  const started = Date.now();
  const opts = maxBytes ? { maxBytes } : undefined;

  const batchBytes = positive(options.batchBytes, INGEST_BATCH_BYTES, 'batchBytes');
  const batchFiles = positive(options.batchFiles, INGEST_BATCH_FILES, 'batchFiles');

  for (const group of groups) {
    const known = new Map(
      (
        await store.db.query(
          'SELECT source, hash FROM memloom_file_hashes($1, $2)',
          [store.namespace, group.root],
        )
      ).rows.map((r) => [r.source, r.hash]),
    );
    const seen = new Set();
    // Files read and chunked but not written yet, in order: [{source, done, write?: {hash,
    // previous, chunks}}]. Progress is reported when a file's batch is written.
    let pending = [];
    let pendingBytes = 0;
    let pendingWrites = 0;
    // The write of a batch runs while the next one is read, chunked and embedded (in-flight.js).
    const writes = writeBehind();
    const flush = async () => {
      const batch = pending;
      pending = [];
      pendingBytes = 0;
      pendingWrites = 0;
      const changed = batch.filter((f) => f.write);
      const chunks = changed.flatMap((f) => f.write.chunks);
      const vectors = chunks.length > 0 ? await store.embedder.embed(chunks.map((c) => c.content)) : [];
      await writes.start(async () => {
        if (changed.length > 0) {
          const isBulk = bulk.written + chunks.length > bulk.before;
          // One statement for the batch (sql/migrations/0013_bulk_writes.sql): each file's lock, in key
          // order, then its chunks replaced; two ingests of one folder queue per file, and the
          // later one replaces the earlier one's chunks, so none is stored twice.
          await store.db.transaction((tx) =>
            tx.query('SELECT deleted, inserted FROM memloom_replace_chunks($1, $2, $3, $4, $5, $6, $7, $8::vector[], $9)', [
              store.namespace,
              group.root,
              changed.map((f) => f.source),
              changed.map((f) => f.write.hash),
              changed.flatMap((f, i) => f.write.chunks.map(() => i + 1)),
              chunks.map((c) => c.breadcrumb),
              chunks.map((c) => c.content),
              vectorsParam(store, vectors),
              isBulk,
            ]),
          );
          for (const f of changed) {
            report.chunks += f.write.chunks.length;
            if (f.write.previous === undefined) report.added++;
            else report.changed++;
          }
          bulk.written += chunks.length;
          bulk.used ||= isBulk;
        }
        for (const f of batch) onProgress?.({ done: f.done, total, chunks: report.chunks, started, source: f.source });
      });
    };
    try {
      for await (const { doc, loaded } of loadAhead(group.docs)) {
        done++;
        if (loaded.skip) {
          report.skipped++;
          warn({ source: doc.source, path: loaded.path, reason: loaded.skip });
          // A file that became unreadable keeps no stale chunks.
          if (known.has(doc.source)) seen.delete(doc.source);
          pending.push({ source: doc.source, done });
          continue;
        }
        if (loaded.text.includes('\0')) {
          // A document given as text: the same rule as a file's bytes (decode.js).
          report.skipped++;
          warn({ source: doc.source, path: loaded.path, reason: 'binary (contains NUL bytes)' });
          pending.push({ source: doc.source, done });
          continue;
        }
        report.files++;
        seen.add(doc.source);
        const hash = loaded.hash;
        const previous = known.get(doc.source);
        const chunks = previous === hash ? undefined : chunk(doc.source, loaded.text, opts);
        if (previous === hash) {
          report.unchanged++;
          pending.push({ source: doc.source, done });
        } else if (chunks.length === 0 && previous === undefined) {
          // Nothing to index (only headings, or white space): no rows, so no stored hash and
          // nothing to compare with next time. Reported as empty on every run, never as new.
          report.empty++;
          pending.push({ source: doc.source, done });
        } else {
          pending.push({ source: doc.source, done, write: { hash, previous, chunks } });
          pendingBytes += loaded.text.length;
          pendingWrites++;
        }
        if (pendingBytes >= batchBytes || pendingWrites >= batchFiles) await flush();
      }
      await flush();
      await writes.settle();
    } catch (error) {
      await writes.drain(); // the write in flight ends before the error is raised
      throw error;
    }
    if (group.prune) {
      const gone = [...known.keys()].filter((s) => !seen.has(s));
      if (gone.length > 0) {
        // Replaced by nothing, under the same per-file locks as a write.
        await store.db.transaction((tx) =>
          tx.query(`SELECT deleted FROM memloom_replace_chunks($1, $2, $3, $4, '{}', '{}', '{}', '{}')`, [
            store.namespace,
            group.root,
            gone,
            gone.map(() => null),
          ]),
        );
        report.removed += gone.length;
      }
    }
  }
  if (bulk.used) await refreshStats(store);
  if (report.added + report.changed + report.removed > 0) await afterWrite(store, { onIndexBuild });
  return report;
}

/**
 * How many documents are read and hashed ahead of the one being chunked and written. A file's
 * read and its SHA-256 run on libuv's threads, PGlite's writes on this one: read one at a time,
 * the reads of 3,000 small files added 0.86 s to a 3.4 s ingest (npm/bench/ingest.js). At most
 * this many documents (each under MAX_FILE_BYTES) are held beyond the batch being built.
 */
const READ_AHEAD = 8;

/**
 * The documents loaded in order, each with the SHA-256 of its text when it has one, up to
 * READ_AHEAD of them in flight. A load that fails is raised when its turn comes, as before;
 * one still in flight when the caller stops is settled into a value, never an unhandled
 * rejection.
 * @param {{ source: string, load(): Promise<{ text?: string, skip?: string, path?: string }> }[]} docs
 */
async function* loadAhead(docs) {
  const inFlight = [];
  let next = 0;
  const start = () => {
    const doc = docs[next++];
    const loading = (async () => {
      const loaded = await doc.load();
      if (loaded.skip || loaded.text.includes('\0')) return { doc, loaded };
      return { doc, loaded: { ...loaded, hash: await sha256(loaded.text) } };
    })();
    inFlight.push(loading.then((value) => ({ value }), (error) => ({ error })));
  };
  while (next < docs.length && inFlight.length < READ_AHEAD) start();
  while (inFlight.length > 0) {
    const settled = await inFlight.shift();
    if (next < docs.length) start();
    if ('error' in settled) throw settled.error;
    yield settled.value;
  }
}

async function sha256(text) {
  const bytes = new TextEncoder().encode(text);
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
