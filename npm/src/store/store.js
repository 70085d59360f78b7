// The Store: one memloom pool in Postgres (embedded PGlite or a server by URL). Each method is a
// thin door onto the module of its job (this folder); the behaviour lives there and in sql/.
import { exportDump, importDump } from '../export.js';
import { embedTexts, loadStaticTable, storedEmbedder } from './embedder.js';
import { indexEntities } from './entities.js';
import { ingest } from './ingest.js';
import { afterWrite, hasVectorIndex, maintainVectorIndex } from './maintenance.js';
import { forget, history, importMemories, memories, remember, rememberMany } from './memories.js';
import { migrate } from './migrate.js';
import { recall, warmUp } from './recall.js';
import { stats } from './stats.js';
/**
 * @import { Embedder, IngestInput, IngestOptions, IngestReport, RememberOptions, MemoryRecord, Remembered,
 *   ImportRecord, ImportOptions, ImportReport, DumpLine, ExportReport, DumpImportReport, DumpImportOptions, ForgetTarget, ForgetReport, MemoryVersion, ActiveMemory, RecallOptions, Recall,
 *   IndexOptions, IndexReport, StoreStats, StoredEmbedder } from '../types.js'
 */

export class Store {
  /**
   * Made by openStore; not meant to be called directly.
   * @param {any} db The driver's connection (db-pglite.js, db-pg.js).
   * @param {{ namespace: string, embedder: Embedder, files?: any, location: string }} options
   */
  constructor(db, { namespace, embedder, files, location }) {
    /** Internal. @type {any} */
    this.db = db;
    /** @readonly */
    this.namespace = namespace;
    /** @readonly */
    this.embedder = embedder;
    /** Internal. @type {any} */
    this.files = files;
    /** Where the store is: its directory, `memory`, or the server URL without its password. @readonly */
    this.location = location;
    /** Internal. @type {boolean} */
    this._vectorIndex = false; // once built, the HNSW index stays: no catalog query per write
    /** Internal: the database's OIDs of vector and vector[] (store/vectors.js). @type {{vector: number, array: number} | null} */
    this._vectorTypes = null;
    /** Internal. @type {number} */
    this._smallWrites = 0;
  }

  /**
   * 'embedded' (PGlite) or 'server'.
   * @returns {'embedded' | 'server'}
   */
  get kind() {
    return this.db.kind;
  }

  /** Brings the store to the current schema (store/migrate.js). Bench scripts and the template build call it. @private */
  _migrate(options) {
    return migrate(this, options);
  }

  // Embedder -------------------------------------------------------------------------------------
  /**
   * The embedder the store was built with: {name, version, dims}.
   * @returns {Promise<StoredEmbedder | null>}
   */
  storedEmbedder() {
    return storedEmbedder(this);
  }

  /**
   * static-v1 or -v2 on a server: a copy of their token table in the database
   * (sql/memloom/13_static_table.sql), so the edge worker, whose bundle cannot carry the 7.8 MB
   * file, embeds queries with it too. Done when the store is initialised, and when a store
   * without it is opened by a role that may write it (another role's open goes on: the worker
   * names the fix). Returns the token rows loaded, 0 when there was nothing to do.
   * @param {{ ifMissing?: boolean }} [options]
   * @returns {Promise<number>}
   */
  loadStaticTable(options) {
    return loadStaticTable(this, options);
  }

  /** The texts' vectors as `vector` parameters (bytes: store/vectors.js). Bench scripts and tests call it. @private */
  _embed(texts) {
    return embedTexts(this, texts);
  }

  // Ingest ---------------------------------------------------------------------------------------
  /**
   * Ingests files and folders (Node) or documents `{source, text}` / `{source, file}` (a Blob or
   * File, any runtime; binary, non-UTF-8 and oversized ones are skipped). Idempotent and
   * incremental: an unchanged file (same content hash) is skipped; a changed file's chunks are
   * replaced in one transaction; files gone from an ingested folder lose their chunks; binary
   * and non-UTF-8 files are skipped with a warning. A file that yields no chunks (only
   * headings, or blank) stores nothing and counts as `empty` on every run (a file that had
   * chunks and now yields none is `changed`: its chunks go). Changed files are written in
   * batches (options batchBytes, batchFiles: INGEST_BATCH_BYTES / INGEST_BATCH_FILES), one
   * transaction and one memloom_replace_chunks call (sql/migrations/0013_bulk_writes.sql) each;
   * onProgress fires per file, in order, as its batch is written.
   * @param {IngestInput | IngestInput[]} inputs
   * @param {IngestOptions} [options]
   * @returns {Promise<IngestReport>}
   */
  ingest(inputs, options = {}) {
    return ingest(this, inputs, options);
  }

  /** After a write (store/maintenance.js). Bench scripts and the template build call it. @private */
  _afterWrite(options) {
    return afterWrite(this, options);
  }

  /**
   * Embedded store: builds the HNSW indexes (memloom_ensure_vector_index) once it holds
   * EMBEDDED_HNSW_THRESHOLD active items (exact search below that). Server: makes sure they
   * exist. Embedders of more than HNSW_MAX_DIMS dimensions always search exactly. Returns
   * whether the index exists.
   * @param {{ force?: boolean }} [options]
   * @returns {Promise<boolean>}
   */
  maintainVectorIndex(options) {
    return maintainVectorIndex(this, options);
  }

  /** Whether the HNSW indexes exist (store/maintenance.js). Bench scripts and the template build call it. @private */
  _hasVectorIndex() {
    return hasVectorIndex(this);
  }

  // Memories -------------------------------------------------------------------------------------
  /**
   * Saves a memory; with a key, the new version supersedes the active one (same transaction)
   * and closes its validity interval. `at`: when the event it describes happened (Date or ISO
   * string), distinct from when it is saved (docs/TIME.md).
   * @param {string} text
   * @param {RememberOptions} [options]
   * @returns {Promise<Remembered>}
   */
  remember(text, options) {
    return remember(this, text, options);
  }

  /**
   * Saves memories in the given order, all in one call (one statement: all or none, through a
   * PL/Proxy front too); a later record of a key supersedes an earlier one.
   * @param {MemoryRecord[]} records
   * @returns {Promise<Remembered[]>}
   */
  rememberMany(records) {
    return rememberMany(this, records);
  }

  /**
   * Imports memories from an iterable or async iterable of `{key, seq, text, metadata, at}` records
   * (a JSONL file streamed line by line: `memloom remember --file`) in bounded batches of
   * `batchSize` records, each written by one memloom_remember_batch call (one transaction, a few
   * set-based statements) while the next is read and embedded: at most two batches are held, so
   * memory stays constant and time linear whatever the size of the input.
   * Atomic per batch, and resumable: a keyed record carries its `seq` in its metadata
   * (`{"seq": N}`), and a keyed record whose seq is at or below the greatest seq already stored
   * for its key is taken as imported and skipped, so a re-run after an interruption (or of the
   * same file) gives exactly one version per (key, seq). A keyed record whose text is the key's
   * active text is skipped as unchanged (as `remember` does). Records without a key have no
   * identity: a re-run writes those of the batches already committed again.
   * Records of one key must come in increasing seq order (later ones supersede earlier ones);
   * `seq` defaults to 0. `onBatch({batch, size, written, skipped, superseding, read})` after
   * each commit (`read` counts the records read so far, the next batch's among them). Returns `{read, written, skipped, superseding, batches}`.
   * @param {Iterable<ImportRecord> | AsyncIterable<ImportRecord>} records
   * @param {ImportOptions} [options]
   * @returns {Promise<ImportReport & { batches: number }>}
   */
  importMemories(records, options) {
    return importMemories(this, records, options);
  }

  /**
   * Deletes a memory key (every version) or one item by id, with their mentions and the
   * entities nothing mentions any more: memloom_forget (sql/memloom/09_memories.sql), the function
   * every client calls, under the key's lock as remember takes it. Returns what it removed:
   * `{deleted, mentions, entities}` (deleted = items). `{id, memoriesOnly: true}` deletes the id
   * only when it names a memory and adds `notAMemory` (true: it names a document chunk).
   * `{all: true, namespace}` forgets the whole namespace (it must be this store's: naming it is
   * the confirmation): memloom_forget_namespace (sql/0012_integrity.sql) deletes every item,
   * mention, entity and statistics row of it in one transaction and adds `statistics` (rows).
   * @param {ForgetTarget} target
   * @returns {Promise<ForgetReport>}
   */
  forget(target) {
    return forget(this, target);
  }

  /**
   * Every version of a memory key, oldest first, with its validity interval: memloom_history
   * (sql/memloom/09_memories.sql). `validTo` is null while the version is active; `eventAt`
   * is the event time given when it was remembered (or null).
   * @param {string} key
   * @returns {Promise<MemoryVersion[]>}
   */
  history(key) {
    return history(this, key);
  }

  /**
   * Active memories, newest first: `{id, key, version, content, createdAt}`.
   * @param {{ limit?: number }} [options] Default limit 100.
   * @returns {Promise<ActiveMemory[]>}
   */
  memories(options) {
    return memories(this, options);
  }

  // Recall ---------------------------------------------------------------------------------------
  /**
   * Recall: embeds the query and makes ONE memloom_fuse call. Options: limit (10), kinds
   * (['memory','chunk']), weights {vector, keyword, entity}, k, candidates, keywordFloor
   * (the keyword arm votes for items scoring at least this fraction of its best: sql/memloom/08_fusion.sql), arms (subset of
   * ARMS; the others do not run in SQL), explain (adds each hit's fusion terms and the response's
   * explain: embedder, k, weights, times), asOf (a Date or ISO
   * string: the memory versions valid then and the chunks ingested by then; default now),
   * since / until (inclusive bounds on the event time, else the saved time; a date alone as
   * until means the end of that day). docs/TIME.md.
   * @param {string} query
   * @param {RecallOptions} [options]
   * @returns {Promise<Recall>}
   */
  recall(query, options = {}) {
    return recall(this, query, options);
  }

  /** recall.js warmUp: the first recall's compile and planning done now. @internal */
  _warmUp() {
    return warmUp(this);
  }

  // Index ----------------------------------------------------------------------------------------
  /**
   * Entity indexing for the entity arm: every active item not indexed yet (new, or whose content
   * changed in place: a trigger deletes its `memloom_indexed` row then) -> the extractor (default: memloom-core's
   * offline extractor) -> entities (name, kind, the store embedder's vector of
   * `entityEmbeddingText`: name and kind, the name alone with hash-v1) and mention edges (strength in (0, 1]); then the item is marked in `memloom_indexed`.
   * Batches of `batchSize` items, one transaction each, replacing the item's previous edges:
   * an interrupted run leaves every item either fully indexed or not at all, and a re-run
   * resumes. Afterwards the edges of superseded items and entities nothing mentions any more
   * are removed (the arm also reads active items only, so stale never surfaces).
   * Options: extractor, all (re-index every item), batchSize, onProgress({done, total, started,
   * entities, newEntities, mentions, fallbacks}), onWarning({reason, items}). The report's
   * `entities` counts the distinct entities the indexed items mention, `newEntities` those
   * this run added to the store (so `index --all` of an indexed store reports its entities,
   * 0 of them new), `mentions` the edges written.
   * @param {IndexOptions} [options]
   * @returns {Promise<IndexReport>}
   */
  index(options) {
    return indexEntities(this, options);
  }

  // Stats ----------------------------------------------------------------------------------------
  /**
   * What the store holds, its embedder, schema version and vector index.
   * @returns {Promise<StoreStats>}
   */
  stats() {
    return stats(this);
  }

  // Export and import (docs/EXPORT.md; npm/src/export.js) -------------------------------------
  /**
   * Writes the store's dump lines (objects) to `write` (awaited), in one snapshot: a header,
   * each namespace's entities and items, an end line. `{namespace}`: that one only (default:
   * every namespace this session can see). Returns `{exportId, namespaces, entities, items, lines}`.
   * @param {(line: DumpLine) => void | Promise<void>} write
   * @param {{ namespace?: string, memloomVersion?: string | null }} [options]
   * @returns {Promise<ExportReport>}
   */
  exportDump(write, options = {}) {
    return exportDump(this, write, options);
  }

  /**
   * Restores dump lines (an iterable or async iterable of `{n, text}`, the header first) in
   * batches, each one transaction, resumable; see npm/src/export.js `importDump`.
   * @param {Iterable<{ n: number, text: string }> | AsyncIterable<{ n: number, text: string }>} lines
   * @param {DumpImportOptions} [options]
   * @returns {Promise<DumpImportReport>}
   */
  importDump(lines, options = {}) {
    return importDump(this, lines, options);
  }

  /** @returns {Promise<void>} */
  async close() {
    await this.db.close();
  }
}
