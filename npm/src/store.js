// The store API: a memloom pool in Postgres (embedded PGlite or a server by URL), over the
// schema in sql/ (bundled into the package as sql/migrations.js). All ranking happens in
// SQL: recall is ONE memloom_fuse call. This file only moves data in and out.
import { current, migrations } from '../sql/migrations.js';
import { chunk, extractEntities, vectorArrayLiteral } from './core.js';
import { loadBlob } from './decode.js';
import { hashEmbedder } from './embedders.js';
import { offlineExtractor } from './extractors.js';
import { MemloomError } from './errors.js';
import { exportDump, importDump } from './export.js';
/**
 * @import { OpenStoreOptions, Embedder, IngestInput, IngestOptions, IngestReport, RememberOptions, MemoryRecord, Remembered,
 *   ImportRecord, ImportOptions, ImportReport, DumpLine, ExportReport, DumpImportReport, DumpImportOptions, ForgetTarget, ForgetReport, MemoryVersion, ActiveMemory, RecallOptions, Recall,
 *   IndexOptions, IndexReport, StoreStats, StoredEmbedder, Arm } from './types.js'
 */

export { MemloomError };

/** The newest schema version this code ships (its last frozen migration). */
export const SCHEMA_VERSION = Math.max(...migrations.map((m) => m.version));

/** Default namespace of a store opened without one. */
export const DEFAULT_NAMESPACE = 'default';
/**
 * The embedded store searches vectors exactly (a sequential scan: exact top-k) until it holds
 * this many active items, then builds the HNSW indexes (45-60 s for 20k rows in single-threaded
 * wasm, and every later insert pays to maintain it: HNSW from the first row made the Node docs'
 * ingest 3.4x slower and the vector arm's top 10 only 89% of the exact one, docs/BENCHMARKS.md
 * "Embedded recall"). The exact scan reads the vectors from the heap rows (sql/0014: storage
 * PLAIN, no TOAST fetch per row). A server store builds the indexes at init (memloom_init_store).
 */
export const EMBEDDED_HNSW_THRESHOLD = 20_000;
/** pgvector's HNSW indexes `vector` columns of at most this many dimensions; above, exact search. */
export const HNSW_MAX_DIMS = 2000;
/** sql/README.md: "memloom" as a bigint; every runner queues on it. */
const MIGRATION_LOCK = '30792293106544493';
const MIGRATIONS_TABLE_DDL = `CREATE TABLE IF NOT EXISTS memloom_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now())`;
/** remember / forget run the planner-statistics growth check (memloom_analyze_if_grown) every this many. */
const ANALYZE_CHECK_EVERY = 64;
/**
 * Ingest writes files in batches, one transaction and one memloom_replace_chunks call each:
 * a batch closes once its changed files hold this many characters or number this many.
 * Progress is reported per file as its batch is written.
 */
export const INGEST_BATCH_BYTES = 1 << 20;
export const INGEST_BATCH_FILES = 500;
/** Memories per importMemories batch (one embed call and one transaction each). */
export const IMPORT_BATCH = 500;
/** Items per index transaction. */
const INDEX_BATCH = 500;
/**
 * The recall arms, in fusion order.
 * @type {readonly Arm[]}
 */
export const ARMS = ['vector', 'keyword', 'entity'];

/**
 * Opens (creating and migrating when needed) a store.
 * - `{ dir }`: embedded PGlite in a directory (Node) or `idb://name` (browser); no `dir`: memory.
 * - `{ url }`: a PostgreSQL server with pgvector.
 * Options: `namespace`, `embedder` (default hash-v1), `create` (default true; false refuses a
 * directory that holds no store), `pglite` (extra PGlite options for an embedded store, e.g.
 * `{ relaxedDurability: true }`), `drivers` (supplied by the entry module). Unknown options are
 * an error naming the valid ones.
 * @param {OpenStoreOptions} [options]
 * @param {() => Promise<any>} [drivers] Supplied by the entry module.
 * @returns {Promise<Store>}
 */
export async function openStore(options = {}, drivers = defaultDrivers) {
  await checkStoreOptions(options);
  const { url, dir, namespace = DEFAULT_NAMESPACE } = options;
  if (typeof namespace !== 'string' || namespace === '') {
    throw new MemloomError('namespace must be a non-empty string');
  }
  const d = await drivers();
  let db;
  if (url) {
    if (!d.openPg) throw new MemloomError('a Postgres URL needs Node (the `pg` driver); in a browser use an embedded store');
    try {
      db = await d.openPg(url);
    } catch (e) {
      if (e instanceof MemloomError) throw e;
      throw new MemloomError(`cannot connect to ${redact(url)}: ${e.message}; check --database-url / DATABASE_URL and that the server is running`);
    }
  } else {
    db = await d.openPglite(dir, options.pglite, { create: options.create !== false, assets: options.assets });
  }
  const store = new Store(db, { namespace, embedder: options.embedder ?? hashEmbedder(), files: d.files, location: url ? redact(url) : dir ?? 'memory' });
  try {
    await store._migrate({ create: options.create !== false });
    await store._initEmbedder();
    // Tenant isolation (sql/memloom/10_security.sql): under a role bound by
    // row-level security this session sees and writes only this namespace's rows, whatever a
    // statement says, and only if the role is granted the namespace. Without a grant every read
    // would come back empty and every write fail: say so now, with the fix.
    await db.query(`SELECT set_config('memloom.namespace', $1, false)`, [namespace]);
    const bound = (await db.query(`SELECT memloom_current_namespace() AS ns, session_user AS role`)).rows[0];
    if (bound.ns === null) {
      const lit = (v) => `'${String(v).replace(/'/g, "''")}'`;
      throw new MemloomError(
        `database role ${bound.role} is not granted namespace ${JSON.stringify(namespace)}; the store's owner grants it with: SELECT memloom_grant_namespace(${lit(bound.role)}, ${lit(namespace)}) (docs/SECURITY.md)`,
      );
    }
  } catch (e) {
    await db.close().catch(() => {});
    throw e;
  }
  return store;
}

/**
 * openStore's options (types.js OpenStoreOptions): strict, so that a typo (`directory` for
 * `dir`) is an error instead of an in-memory store that loses what is written to it.
 */
// zod is imported on the first openStore, not at import: the core of the browser entry stays
// importable as plain ES modules, without a bundler resolving bare specifiers.
let storeOptions;
async function storeOptionsSchema() {
  const { z } = await import('zod');
  storeOptions ??= z
    .object({
      dir: z.string().min(1).optional(),
      url: z.string().min(1).optional(),
      namespace: z.string().min(1).optional(),
      embedder: z
        .object({ id: z.string(), name: z.string(), version: z.number(), dims: z.number().int().positive(), embed: z.function() })
        .passthrough()
        .optional(),
      create: z.boolean().optional(),
      pglite: z.record(z.unknown()).optional(),
      assets: z.union([z.string().min(1), z.instanceof(URL)]).optional(),
    })
    .strict();
  return storeOptions;
}

/** Throws a MemloomError that names each bad option and, for an unknown one, the valid ones. */
async function checkStoreOptions(options) {
  const STORE_OPTIONS = await storeOptionsSchema();
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new MemloomError(`openStore takes an options object ({ ${Object.keys(STORE_OPTIONS.shape).join(', ')} }), not ${options === null ? 'null' : typeof options}`);
  }
  const parsed = STORE_OPTIONS.safeParse(options);
  if (parsed.success) return;
  const valid = Object.keys(STORE_OPTIONS.shape).join(', ');
  const problems = [];
  const embedderFields = [];
  for (const i of parsed.error.issues) {
    const at = i.path.join('.');
    if (i.code === 'unrecognized_keys') {
      problems.push(`unknown option${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => JSON.stringify(k)).join(', ')} (valid: ${valid})`);
    } else if (at === 'namespace') {
      problems.push('namespace must be a non-empty string');
    } else if (i.path[0] === 'embedder') {
      embedderFields.push(i.path.length > 1 ? String(i.path[1]) : 'the object itself');
    } else {
      problems.push(`option ${at}: ${i.message}`);
    }
  }
  if (embedderFields.length > 0) {
    problems.push(
      `embedder must be an Embedder { id, name, version, dims, embed(texts) } such as hashEmbedder(), staticEmbedder() or apiEmbedder(); wrong or missing: ${embedderFields.join(', ')}`,
    );
  }
  throw new MemloomError(`openStore: ${problems.join('; ')}`);
}

/**
 * PostgreSQL text cannot hold U+0000 ("invalid byte sequence for encoding UTF8: 0x00"): refuse
 * it up front with a message that names the field, instead of a database error mid-write.
 */
function checkNoNul(value, what) {
  if (value.includes('\0')) {
    throw new MemloomError(`${what} contains a NUL character (U+0000), which PostgreSQL cannot store; remove it`);
  }
}

/**
 * An instant option (`asOf`, `since`, `until`, a memory's `at`): a Date or an ISO 8601 string
 * (`2026-03-01`, `2026-03-01T12:00Z`, with seconds and an offset). Returns the ISO string
 * PostgreSQL gets, in milliseconds (the stored precision, docs/TIME.md), or null for null /
 * undefined. A date alone means midnight UTC; with `endOfDay` (until) the last millisecond of
 * that day, so `until: '2023-05-08'` includes the 8th.
 */
export function toInstant(value, what, { endOfDay = false } = {}) {
  if (value == null) return null;
  let d;
  if (value instanceof Date) d = value;
  else if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/i.test(value.trim())) {
    const v = value.trim();
    const dateOnly = v.length === 10;
    // The calendar and the clock, checked here: Date rolls 2023-02-30 over to March 2.
    const [y, mo, day] = [+v.slice(0, 4), +v.slice(5, 7), +v.slice(8, 10)];
    const [h, mi, sec] = dateOnly ? [0, 0, 0] : [+v.slice(11, 13), +v.slice(14, 16), v[16] === ':' ? +v.slice(17, 19) : 0];
    if (mo < 1 || mo > 12 || day < 1 || day > new Date(Date.UTC(y, mo, 0)).getUTCDate() || h > 23 || mi > 59 || sec > 59) {
      throw new MemloomError(`${what} is not a valid date or time: ${JSON.stringify(value)}`);
    }
    // A time without an offset is taken as UTC, as a date alone is (never the machine's zone).
    d = new Date(dateOnly || /(Z|[+-]\d{2}(:?\d{2})?)$/i.test(v) ? v : `${v}Z`);
    if (dateOnly && endOfDay && !Number.isNaN(d.getTime())) d = new Date(d.getTime() + 86_400_000 - 1);
  } else {
    throw new MemloomError(`${what} must be a Date or an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00Z, not ${JSON.stringify(value)}`);
  }
  if (Number.isNaN(d.getTime())) throw new MemloomError(`${what} is not a valid date or time: ${JSON.stringify(String(value))}`);
  return d.toISOString();
}

/** A memory record's fields, as remember / rememberMany / importMemories take them. */
function checkMemory(r, what) {
  if (typeof r?.text !== 'string' || r.text.trim() === '') throw new MemloomError(`${what} has no text`);
  if (r.key != null && (typeof r.key !== 'string' || r.key === '')) throw new MemloomError(`${what}: key must be a non-empty string`);
  checkNoNul(r.text, `${what}'s text`);
  if (r.key != null) checkNoNul(r.key, `${what}'s key`);
  if (r.metadata != null && hasNul(r.metadata)) checkNoNul('\0', `${what}'s metadata`);
  toInstant(r.at, `${what}'s at (event time)`);
}

/** Whether a JSON value holds U+0000 in a string or a key (jsonb refuses `\u0000`). */
function hasNul(value) {
  if (typeof value === 'string') return value.includes('\0');
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => k.includes('\0') || hasNul(v));
}

let defaultDrivers = async () => ({ openPglite: (await import('./db-pglite.js')).openPglite });

/**
 * Used by the Node entry to add the `pg` driver and file system access.
 * @param {() => Promise<any>} fn
 */
export function setDefaultDrivers(fn) {
  defaultDrivers = fn;
}

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

  // Migrations ----------------------------------------------------------------------------------
  /**
   * Brings the store to the current schema as sql/README.md specifies: an empty one gets the
   * current definition (sql/memloom/) with every frozen migration recorded, in one
   * transaction; an existing one the frozen migrations it lacks, one transaction each.
   * @private
   */
  async _migrate({ create }) {
    const db = this.db;
    const newest = Math.max(...migrations.map((m) => m.version));
    // Fast path of every open of a current store: ONE read of the ledger, no lock, no
    // transaction. When it records every shipped file with the same checksum and nothing newer,
    // there is nothing to apply (rows are only ever added, by committed migrations), so the
    // per-file locked protocol below would only confirm it, at 3 queries per file (issue 19: a
    // third of a cold CLI call's SQL time). Anything else takes the full path, which also gives
    // the errors.
    let ledger = null;
    try {
      ({ rows: ledger } = await db.query('SELECT version, checksum FROM memloom_migrations'));
    } catch (e) {
      if (e.code !== '42P01') throw e; // undefined_table: a fresh database
    }
    const fresh = ledger === null;
    if (fresh && !create) {
      throw new MemloomError(`no memloom store at ${this.location}; run \`memloom init\` (with the same --store / --database-url) first`);
    }
    if (fresh && (await this._installCurrent())) return;
    if (!fresh) {
      const have = new Map(ledger.map((r) => [Number(r.version), r.checksum]));
      if (migrations.every((m) => have.get(m.version) === m.checksum) && ledger.every((r) => Number(r.version) <= newest)) return;
    }
    for (const m of migrations) {
      await db.transaction(async (tx) => {
        await tx.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
        // Only on a fresh store: CREATE ... IF NOT EXISTS still needs the CREATE privilege, which
        // an application role bound by row-level security (sql/memloom/10_security.sql) should not have.
        if (fresh) await tx.exec(MIGRATIONS_TABLE_DDL);
        const { rows: max } = await tx.query('SELECT max(version) AS v FROM memloom_migrations');
        const have = max[0].v == null ? 0 : Number(max[0].v);
        if (have > newest) {
          throw new MemloomError(`the database has schema version ${have}, newer than this memloom's ${newest}; upgrade memloom`);
        }
        const { rows: done } = await tx.query('SELECT checksum FROM memloom_migrations WHERE version = $1', [m.version]);
        if (done.length > 0) {
          if (done[0].checksum !== m.checksum) {
            throw new MemloomError(
              `migration ${m.name} was applied with checksum ${done[0].checksum}, but this memloom ships ${m.checksum}; migrations are forward-only: restore the file and add a new one`,
            );
          }
          return;
        }
        try {
          await tx.exec(m.sql);
        } catch (e) {
          throw new MemloomError(`cannot apply migration ${m.name}: ${e.message}; apply it as the database's owner (\`memloom init\` with the owner's --database-url)`);
        }
        await tx.query('INSERT INTO memloom_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
      });
    }
  }

  /** The current definition on an empty ledger; false (nothing done) when another runner was first. @private */
  async _installCurrent() {
    return this.db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await tx.exec(MIGRATIONS_TABLE_DDL);
      const { rows } = await tx.query('SELECT count(*)::int AS n FROM memloom_migrations');
      if (rows[0].n > 0) return false;
      for (const part of current) {
        try {
          await tx.exec(part.sql);
        } catch (e) {
          throw new MemloomError(`cannot install the memloom schema (sql/memloom/${part.name}.sql): ${e.message}; install it as the database's owner (\`memloom init\` with the owner's --database-url)`);
        }
      }
      for (const m of migrations) {
        await tx.query('INSERT INTO memloom_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
      }
      return true;
    });
  }

  // Embedder ------------------------------------------------------------------------------------
  /**
   * The embedder the store was built with: {name, version, dims}.
   * @returns {Promise<StoredEmbedder | null>}
   */
  async storedEmbedder() {
    const { rows } = await this.db.query('SELECT embedder_name, embedder_version, embedder_dims FROM memloom_meta');
    if (rows.length === 0 || rows[0].embedder_name == null) return null;
    return { name: rows[0].embedder_name, version: Number(rows[0].embedder_version), dims: Number(rows[0].embedder_dims) };
  }

  /**
   * static-v1 on a server: a copy of its token table in the database
   * (sql/memloom/13_static_table.sql), so the edge worker, whose bundle cannot carry the 7.8 MB
   * file, embeds queries with it too. Done when the store is initialised, and when a store
   * without it is opened by a role that may write it (another role's open goes on: the worker
   * names the fix). Returns the token rows loaded, 0 when there was nothing to do.
   * @param {{ ifMissing?: boolean }} [options]
   * @returns {Promise<number>}
   */
  async loadStaticTable({ ifMissing = false } = {}) {
    if (this.kind !== 'server' || this.embedder.id !== 'static-v1') return 0;
    if (ifMissing) {
      const { rows } = await this.db.query('SELECT EXISTS (SELECT FROM memloom_static_table) AS loaded');
      if (rows[0].loaded) return 0;
    }
    const bytes = await this.embedder.table();
    try {
      const { rows } = await this.db.query('SELECT memloom_load_static_table($1) AS n', [Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]);
      return rows[0].n;
    } catch (err) {
      if (ifMissing && err.code === '42501') return 0;
      throw new MemloomError(`cannot load static-v1's table into the database (the edge worker embeds with it): ${err.message}; run memloom init as the store's owner`);
    }
  }

  /**
   * A store not initialised yet takes this run's embedder (memloom_init_store sizes its vector
   * columns to the embedder's dimensions); an initialised one must match it.
   * @private
   */
  async _initEmbedder() {
    const stored = await this.storedEmbedder();
    const e = this.embedder;
    if (stored && stored.name === e.name && stored.version === e.version && stored.dims === e.dims) {
      await this.loadStaticTable({ ifMissing: true });
      return;
    }
    if (!stored) {
      // A server builds the HNSW indexes now; the embedded store when it is large (maintainVectorIndex).
      const index = this.kind === 'server' && e.dims <= HNSW_MAX_DIMS;
      try {
        await this.db.query('SELECT memloom_init_store($1, $2, $3, $4)', [e.name, e.version, e.dims, index]);
      } catch (err) {
        throw new MemloomError(`cannot initialise the store for ${e.id} (${e.dims} dimensions): ${err.message}`);
      }
      await this.loadStaticTable();
      return;
    }
    const storedId = `${stored.name}-v${stored.version}`;
    throw new MemloomError(
      `this store was built with the ${storedId} embedder (${stored.dims} dimensions) but this run embeds with ${e.id} (${e.dims} dimensions); ` +
        (stored.name === 'hash' || stored.name === 'static'
          ? `set MEMLOOM_EMBEDDER=${storedId} (or --embedder ${storedId}) and unset MEMLOOM_EMBED_URL, `
          : `set MEMLOOM_EMBED_URL / MEMLOOM_EMBED_MODEL=${stored.name.replace(/^api:/, '')} / MEMLOOM_EMBED_DIMS=${stored.dims} as when it was built, `) +
        'or ingest into a new store (--store DIR)',
    );
  }

  /** @private */
  async _embed(texts) {
    const vectors = await this.embedder.embed(texts);
    return vectors.map(toVectorLiteral);
  }

  // Ingest --------------------------------------------------------------------------------------
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
  async ingest(inputs, options = {}) {
    const { maxBytes, onProgress, onWarning } = options;
    const list = Array.isArray(inputs) ? inputs : [inputs];
    const warn = (w) => onWarning?.(w);
    const report = { files: 0, added: 0, changed: 0, unchanged: 0, empty: 0, removed: 0, skipped: 0, chunks: 0 };
    // groups: [{root, docs: [{source, load()}], prune}]
    const groups = [];
    const loose = [];
    for (const input of list) {
      if (typeof input === 'string') {
        if (!this.files) throw new MemloomError('ingesting paths needs Node; pass documents {source, text} instead');
        const g = await this.files.expand(input);
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
    for (const { root, doc } of loose) groups.push({ root, docs: [doc], prune: false });
    for (const g of groups) {
      checkNoNul(g.root, 'a document root');
      for (const doc of g.docs) checkNoNul(doc.source, `the document name ${JSON.stringify(doc.source)}`);
    }
    const total = groups.reduce((n, g) => n + g.docs.length, 0);
    // A load that writes more chunks than the namespace held is a bulk load: its transactions
    // only mark the statistics for one recompute at the end (sql/0009, memloom.stats_bulk),
    // which reads each document once instead of summing every file's lexemes.
    const bulk = { before: await this._activeItems(), written: 0, used: false };
    let done = 0;
    const started = Date.now();
    const opts = maxBytes ? { maxBytes } : undefined;

    const batchBytes = positive(options.batchBytes, INGEST_BATCH_BYTES, 'batchBytes');
    const batchFiles = positive(options.batchFiles, INGEST_BATCH_FILES, 'batchFiles');

    for (const group of groups) {
      const known = new Map(
        (
          await this.db.query(
            'SELECT source, hash FROM memloom_file_hashes($1, $2)',
            [this.namespace, group.root],
          )
        ).rows.map((r) => [r.source, r.hash]),
      );
      const seen = new Set();
      // Files read and chunked but not written yet, in order: [{source, done, write?: {hash,
      // previous, chunks}}]. Progress is reported when a file's batch is written.
      let pending = [];
      let pendingBytes = 0;
      let pendingWrites = 0;
      const flush = async () => {
        const batch = pending;
        pending = [];
        pendingBytes = 0;
        pendingWrites = 0;
        const writes = batch.filter((f) => f.write);
        if (writes.length > 0) {
          const chunks = writes.flatMap((f) => f.write.chunks);
          const vectors = chunks.length > 0 ? await this.embedder.embed(chunks.map((c) => c.content)) : [];
          const isBulk = bulk.written + chunks.length > bulk.before;
          // One statement for the batch (sql/migrations/0013_bulk_writes.sql): each file's lock, in key
          // order, then its chunks replaced; two ingests of one folder queue per file, and the
          // later one replaces the earlier one's chunks, so none is stored twice.
          await this.db.transaction((tx) =>
            tx.query('SELECT deleted, inserted FROM memloom_replace_chunks($1, $2, $3, $4, $5, $6, $7, $8::vector[], $9)', [
              this.namespace,
              group.root,
              writes.map((f) => f.source),
              writes.map((f) => f.write.hash),
              writes.flatMap((f, i) => f.write.chunks.map(() => i + 1)),
              chunks.map((c) => c.breadcrumb),
              chunks.map((c) => c.content),
              vectorArrayLiteral(vectors),
              isBulk,
            ]),
          );
          for (const f of writes) {
            report.chunks += f.write.chunks.length;
            if (f.write.previous === undefined) report.added++;
            else report.changed++;
          }
          bulk.written += chunks.length;
          bulk.used ||= isBulk;
        }
        for (const f of batch) onProgress?.({ done: f.done, total, chunks: report.chunks, started, source: f.source });
      };
      for (const doc of group.docs) {
        done++;
        const loaded = await doc.load();
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
        const hash = await sha256(loaded.text);
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
      if (group.prune) {
        const gone = [...known.keys()].filter((s) => !seen.has(s));
        if (gone.length > 0) {
          // Replaced by nothing, under the same per-file locks as a write.
          await this.db.transaction((tx) =>
            tx.query(`SELECT deleted FROM memloom_replace_chunks($1, $2, $3, $4, '{}', '{}', '{}', '{}')`, [
              this.namespace,
              group.root,
              gone,
              gone.map(() => null),
            ]),
          );
          report.removed += gone.length;
        }
      }
    }
    if (bulk.used) await this._refreshStats();
    if (report.added + report.changed + report.removed > 0) await this._afterWrite();
    return report;
  }

  /**
   * After a write: planner statistics when a pool table has grown, and on the embedded store the
   * vector index policy. The keyword and entity statistics need nothing here: the writing
   * transaction kept them exact (sql/memloom/04_statistics.sql), so a write costs what it
   * writes, not the namespace. `small` (remember, forget): the growth check runs every
   * ANALYZE_CHECK_EVERY such writes, not each time (it costs a few catalog reads).
   * @private
   */
  async _afterWrite({ small = false } = {}) {
    if (!small || ++this._smallWrites % ANALYZE_CHECK_EVERY === 0) await this._analyzeIfGrown();
    await this.maintainVectorIndex();
  }

  /**
   * memloom_analyze_if_grown: ANALYZE of a pool table never analyzed or grown by 10% since.
   * PGlite has no autovacuum, and a server's may lag a bulk load: without planner statistics
   * the entity arm's join ran its HNSW scan once per mention row (26 s instead of 0.1 s on the
   * Node docs).
   * @private
   */
  async _analyzeIfGrown() {
    await this.db.query('SELECT memloom_analyze_if_grown()');
    await this._vacuumEmbedded();
  }

  /** After a bulk load: the statistics recomputed once, and planner statistics (ANALYZE). @private */
  async _refreshStats() {
    await this.db.query('SELECT memloom_refresh_stats($1)', [this.namespace]);
    await this._vacuumEmbedded();
  }

  /**
   * On the embedded store (no autovacuum), VACUUM of the pool tables whose pages are mostly not
   * marked all-visible (memloom_tables_to_vacuum, after an ANALYZE counted them), as autovacuum
   * would. It records the GIN indexes' sizes, without which the planner scanned every row for the
   * keyword arm instead of its GIN index, and marks the pages all-visible, so a scan checks no
   * row's visibility (docs/BENCHMARKS.md "Embedded recall", sql/0019). A VACUUM reads and cleans:
   * no row changes or moves. A server's own autovacuum does this there.
   * @private
   */
  async _vacuumEmbedded() {
    if (this.db.kind !== 'embedded') return;
    const { rows } = await this.db.query('SELECT memloom_tables_to_vacuum() AS tables');
    const tables = rows[0]?.tables ?? [];
    // One statement (VACUUM refuses a transaction block); the names come from the SQL function.
    if (tables.length > 0) await this.db.query(`VACUUM ${tables.map((t) => `"${String(t).replace(/"/g, '""')}"`).join(', ')}`);
  }

  /** The namespace's active items, from the statistics the writes keep. @private */
  async _activeItems() {
    const { rows } = await this.db.query('SELECT memloom_active_items($1) AS n', [this.namespace]);
    return rows[0].n;
  }

  /**
   * Embedded store: builds the HNSW indexes (memloom_ensure_vector_index) once it holds
   * EMBEDDED_HNSW_THRESHOLD active items (exact search below that). Server: makes sure they
   * exist. Embedders of more than HNSW_MAX_DIMS dimensions always search exactly. Returns
   * whether the index exists.
   * @param {{ force?: boolean }} [options]
   * @returns {Promise<boolean>}
   */
  async maintainVectorIndex({ force = false } = {}) {
    if (this._vectorIndex) return true;
    if (this.embedder.dims > HNSW_MAX_DIMS) return false;
    if (this.kind === 'embedded' && !force) {
      // The active items of every namespace, from the statistics the writes keep exact (a
      // count(*) read the whole pool on every write); the catalog only past the threshold.
      const { rows } = await this.db.query(`SELECT coalesce(sum(doc_count), 0)::int AS n FROM memloom_namespace_stats`);
      if (rows[0].n < EMBEDDED_HNSW_THRESHOLD) return false;
    }
    if (!(await this._hasVectorIndex())) await this.db.query('SELECT memloom_ensure_vector_index()');
    return (this._vectorIndex = true);
  }

  /** @private */
  async _hasVectorIndex() {
    const { rows } = await this.db.query('SELECT memloom_vector_index_exists() AS present');
    return rows[0].present;
  }

  // Memories ------------------------------------------------------------------------------------
  /**
   * Saves a memory; with a key, the new version supersedes the active one (same transaction)
   * and closes its validity interval. `at`: when the event it describes happened (Date or ISO
   * string), distinct from when it is saved (docs/TIME.md).
   * @param {string} text
   * @param {RememberOptions} [options]
   * @returns {Promise<Remembered>}
   */
  async remember(text, { key, metadata, at } = {}) {
    const [out] = await this.rememberMany([{ text, key, metadata, at }]);
    return out;
  }

  /**
   * Saves memories in the given order, all in one transaction; a later record of a key supersedes an earlier one.
   * @param {MemoryRecord[]} records
   * @returns {Promise<Remembered[]>}
   */
  async rememberMany(records) {
    for (const [i, r] of records.entries()) checkMemory(r, `memory ${i + 1}`);
    const vectors = await this._embed(records.map((r) => r.text));
    const out = await this.db.transaction(async (tx) => {
      const res = [];
      for (const [i, r] of records.entries()) {
        const { rows } = await tx.query('SELECT id, version FROM memloom_remember($1, $2, $3, $4::vector, $5::jsonb, $6::timestamptz)', [
          this.namespace,
          r.key ?? null,
          r.text,
          vectors[i],
          JSON.stringify(r.metadata ?? {}),
          toInstant(r.at, 'at'),
        ]);
        res.push({ id: Number(rows[0].id), key: r.key ?? null, version: Number(rows[0].version) });
      }
      return res;
    });
    await this._afterWrite({ small: true });
    return out;
  }

  /**
   * Imports memories from an iterable or async iterable of `{key, seq, text, metadata, at}` records
   * (a JSONL file streamed line by line: `memloom remember --file`) in bounded batches: at most
   * `batchSize` records are held, embedded and written at a time, each batch in its own
   * transaction, so memory stays constant and time linear whatever the size of the input.
   * Atomic per batch, and resumable: a keyed record carries its `seq` in its metadata
   * (`{"seq": N}`), and a keyed record whose seq is at or below the greatest seq already stored
   * for its key is taken as imported and skipped, so a re-run after an interruption (or of the
   * same file) gives exactly one version per (key, seq). A keyed record whose text is the key's
   * active text is skipped as unchanged (as `remember` does). Records without a key have no
   * identity: a re-run writes those of the batches already committed again.
   * Records of one key must come in increasing seq order (later ones supersede earlier ones);
   * `seq` defaults to 0. `onBatch({batch, size, written, skipped, superseding, read})` after
   * each commit. Returns `{read, written, skipped, superseding, batches}`.
   * @param {Iterable<ImportRecord> | AsyncIterable<ImportRecord>} records
   * @param {ImportOptions} [options]
   * @returns {Promise<ImportReport & { batches: number }>}
   */
  async importMemories(records, { batchSize = IMPORT_BATCH, onBatch } = {}) {
    if (!Number.isInteger(batchSize) || batchSize <= 0) throw new MemloomError(`batchSize must be a positive integer, not ${batchSize}`);
    const report = { read: 0, written: 0, skipped: 0, superseding: 0, batches: 0 };
    let batch = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const r = await this._importBatch(batch);
      report.written += r.written;
      report.skipped += r.skipped;
      report.superseding += r.superseding;
      report.batches++;
      onBatch?.({ batch: report.batches, size: batch.length, ...report });
      batch = [];
    };
    for await (const r of records) {
      report.read++;
      checkMemory(r, `memory ${report.read}`);
      if (r.seq != null && !Number.isFinite(r.seq)) throw new MemloomError(`memory ${report.read}: seq must be a finite number`);
      batch.push({ key: r.key ?? null, seq: r.seq ?? 0, text: r.text, metadata: r.metadata, at: toInstant(r.at, 'at') });
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    if (report.written > 0) await this._afterWrite({ small: report.written < ANALYZE_CHECK_EVERY });
    return report;
  }

  /** One batch of importMemories: embedded before, written in one transaction. @private */
  async _importBatch(batch) {
    const vectors = await this._embed(batch.map((r) => r.text));
    const keys = [...new Set(batch.filter((r) => r.key !== null).map((r) => r.key))].sort();
    return this.db.transaction(async (tx) => {
      const state = new Map();
      if (keys.length > 0) {
        // The keys' own locks (memloom_remember's, in key order) before reading what is
        // stored, so a concurrent import of the same records on a server cannot pass the check
        // too: memloom_memory_states (sql/memloom/14_reads.sql) takes them, to the end of this
        // transaction, and reads each key's newest seq and active text.
        const { rows } = await tx.query('SELECT key, seq, active FROM memloom_memory_states($1, $2::text[])', [this.namespace, keys]);
        for (const r of rows) state.set(r.key, { seq: r.seq == null ? null : Number(r.seq), active: r.active });
      }
      const out = { written: 0, skipped: 0, superseding: 0 };
      for (const [i, r] of batch.entries()) {
        let metadata = r.metadata ?? {};
        if (r.key !== null) {
          const st = state.get(r.key) ?? { seq: null, active: null };
          if ((st.seq !== null && r.seq <= st.seq) || st.active === r.text) {
            out.skipped++;
            continue;
          }
          metadata = { ...metadata, seq: r.seq };
          state.set(r.key, { seq: r.seq, active: r.text });
        }
        const { rows } = await tx.query('SELECT id, version FROM memloom_remember($1, $2, $3, $4::vector, $5::jsonb, $6::timestamptz)', [
          this.namespace,
          r.key,
          r.text,
          vectors[i],
          JSON.stringify(metadata),
          r.at,
        ]);
        out.written++;
        if (Number(rows[0].version) > 1) out.superseding++;
      }
      return out;
    });
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
  async forget(target) {
    const t = typeof target === 'string' ? { key: target } : (target ?? {});
    let key = null;
    let id = null;
    if (t.all != null) {
      if (t.all !== true || t.key != null || t.id != null) throw new MemloomError('forget: pass {all: true, namespace} alone to forget a whole namespace');
      if (t.namespace !== this.namespace) {
        throw new MemloomError(
          `forget {all: true} needs namespace: "${this.namespace}" (this store's namespace) to confirm, not ${JSON.stringify(t.namespace ?? null)}`,
        );
      }
      const { rows } = await this.db.transaction((tx) =>
        tx.query('SELECT items, mentions, entities, statistics FROM memloom_forget_namespace($1)', [this.namespace]),
      );
      const out = {
        deleted: Number(rows[0].items),
        mentions: Number(rows[0].mentions),
        entities: Number(rows[0].entities),
        statistics: Number(rows[0].statistics),
      };
      if (out.deleted + out.entities > 0) await this._afterWrite({ small: true });
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
    const { rows } = await this.db.transaction((tx) =>
      tx.query('SELECT items, mentions, entities, not_a_memory FROM memloom_forget($1, $2, $3, $4)', [this.namespace, key, id, memoriesOnly]),
    );
    const out = { deleted: Number(rows[0].items), mentions: Number(rows[0].mentions), entities: Number(rows[0].entities) };
    if (memoriesOnly) out.notAMemory = rows[0].not_a_memory === true;
    if (out.deleted > 0) await this._afterWrite({ small: true });
    return out;
  }

  /**
   * Every version of a memory key, oldest first, with its validity interval: memloom_history
   * (sql/memloom/09_memories.sql). `validTo` is null while the version is active; `eventAt`
   * is the event time given when it was remembered (or null).
   * @param {string} key
   * @returns {Promise<MemoryVersion[]>}
   */
  async history(key) {
    if (typeof key !== 'string' || key === '') throw new MemloomError('history needs a non-empty key');
    checkNoNul(key, 'the key');
    const { rows } = await this.db.query('SELECT * FROM memloom_history($1, $2)', [this.namespace, key]);
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

  /**
   * Active memories, newest first: `{id, key, version, content, createdAt}`.
   * @param {{ limit?: number }} [options] Default limit 100.
   * @returns {Promise<ActiveMemory[]>}
   */
  async memories({ limit = 100 } = {}) {
    if (!Number.isInteger(limit) || limit <= 0) throw new MemloomError(`limit must be a positive integer, not ${limit}`);
    const { rows } = await this.db.query('SELECT id, key, version, content, created_at FROM memloom_memories($1, $2)', [this.namespace, limit]);
    return rows.map((r) => ({
      id: Number(r.id),
      key: r.key ?? null,
      version: Number(r.version),
      content: r.content,
      createdAt: new Date(r.created_at).toISOString(),
    }));
  }

  // Recall --------------------------------------------------------------------------------------
  /**
   * Recall: embeds the query and makes ONE memloom_fuse call. Options: limit (10), kinds
   * (['memory','chunk']), weights {vector, keyword, entity}, k, candidates, keywordFloor
   * (the keyword arm votes for items scoring at least this fraction of its best: sql/memloom/08_fusion.sql), arms (subset of
   * ARMS; the others do not run in SQL), explain (adds each arm's term), asOf (a Date or ISO
   * string: the memory versions valid then and the chunks ingested by then; default now),
   * since / until (inclusive bounds on the event time, else the saved time; a date alone as
   * until means the end of that day). docs/TIME.md.
   * @param {string} query
   * @param {RecallOptions} [options]
   * @returns {Promise<Recall>}
   */
  async recall(query, options = {}) {
    const started = performance.now();
    if (typeof query !== 'string' || query.trim() === '') throw new MemloomError('recall needs a non-empty query');
    checkNoNul(query, 'the query');
    const { limit = 10, kinds, weights = {}, k, candidates, keywordFloor, arms, explain = false } = options;
    const asOf = toInstant(options.asOf, 'asOf');
    const since = toInstant(options.since, 'since');
    const until = toInstant(options.until, 'until', { endOfDay: true });
    if (since != null && until != null && since > until) throw new MemloomError(`since (${since}) is after until (${until}): nothing can match`);
    if (!Number.isInteger(limit) || limit <= 0) throw new MemloomError(`limit must be a positive integer, not ${limit}`);
    const enabled = new Set(arms ?? ARMS);
    for (const a of enabled) {
      if (!ARMS.includes(a)) throw new MemloomError(`unknown arm "${a}"; arms are ${ARMS.join(', ')}`);
    }
    for (const kind of kinds ?? []) {
      if (kind !== 'memory' && kind !== 'chunk') throw new MemloomError(`unknown kind "${kind}"; kinds are memory, chunk`);
    }
    const w = {};
    for (const a of ARMS) w[a] = weights[a] ?? null;
    const [vec] = await this._embed([query]);
    // Named arguments: NULL would override a default, so only given ones are passed.
    const args = [query, vec, this.namespace, limit];
    const named = [];
    const add = (name, value, cast) => {
      if (value == null) return;
      args.push(value);
      named.push(`${name} => $${args.length}::${cast}`);
    };
    add('k', k, 'float8');
    add('w_vector', w.vector, 'float8');
    add('w_keyword', w.keyword, 'float8');
    add('w_entity', w.entity, 'float8');
    add('candidates', candidates, 'int4');
    add('keyword_floor', keywordFloor, 'float8');
    add('kinds', kinds, 'text[]');
    add('arms', arms ? ARMS.filter((a) => enabled.has(a)) : null, 'text[]');
    add('as_of', asOf, 'timestamptz');
    add('since', since, 'timestamptz');
    add('until', until, 'timestamptz');
    const sql = `SELECT * FROM memloom_fuse($1, $2::vector, $3, $4${named.map((n) => `, ${n}`).join('')})`;
    let rows;
    try {
      ({ rows } = await this.db.query(sql, args));
    } catch (e) {
      throw new MemloomError(`recall failed: ${e.message}`);
    }
    const results = [];
    for (const r of rows) {
      const ranks = { vector: nullableInt(r.vector_rank), keyword: nullableInt(r.keyword_rank), entity: nullableInt(r.entity_rank) };
      const hit = {
        id: Number(r.id),
        kind: r.kind,
        source: r.source ?? null,
        breadcrumb: r.breadcrumb ?? null,
        key: r.key ?? null,
        content: r.content,
        rrfScore: Number(r.rrf_score),
        similarity: Number(r.similarity),
        ranks,
      };
      if (explain) hit.explain = explainHit(ranks, { k: k ?? 60, weights: w });
      results.push(hit);
    }
    return { query, results, tookMs: Math.round((performance.now() - started) * 100) / 100 };
  }

  // Index ---------------------------------------------------------------------------------------
  /**
   * Entity indexing for the entity arm: every active item not indexed yet (new, or whose content
   * changed in place: sql/0004 clears `indexed_at` then) -> the extractor (default: memloom-core's
   * offline extractor) -> entities (name, kind, the store embedder's vector of
   * `entityEmbeddingText`: name and kind, the name alone with hash-v1) and mention edges (strength in (0, 1]); then `indexed_at` is set.
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
  async index({ onProgress, onWarning, extractor, all = false, batchSize = INDEX_BATCH } = {}) {
    const ns = this.namespace;
    const ex = extractor ?? offlineExtractor();
    if (all) await this.db.query('SELECT memloom_reset_index($1)', [ns]);
    const { rows: todo } = await this.db.query('SELECT unindexed FROM memloom_stats($1)', [ns]);
    const total = todo[0].unindexed;
    // Indexing more than half the namespace (a first run, --all) is a bulk load (see ingest).
    const bulk = total > (await this._activeItems()) / 2;
    const started = Date.now();
    // entities: the distinct entities the indexed items mention (found or created);
    // newEntities: of those, the ones this run created (a re-index of an indexed store: 0).
    const report = { items: 0, entities: 0, newEntities: 0, mentions: 0, fallbacks: 0, removedMentions: 0, removedEntities: 0, extractor: ex.id };
    const mentioned = new Set();
    let after = 0;
    for (;;) {
      const { rows } = await this.db.query('SELECT id, breadcrumb, content, content_hash FROM memloom_unindexed($1, $2, $3)', [ns, after, Number(batchSize)]);
      if (rows.length === 0) break;
      after = Number(rows[rows.length - 1].id);
      // The chunk's stored breadcrumb line is passed as the breadcrumb, not as text.
      const items = rows.map((r) => {
        const prefix = r.breadcrumb ? `${r.breadcrumb}\n\n` : '';
        const text = prefix && r.content.startsWith(prefix) ? r.content.slice(prefix.length) : r.content;
        return { id: Number(r.id), text, breadcrumb: r.breadcrumb ?? null };
      });
      const extracted = await ex.extract(items, { onWarning });
      // item -> mentions, one edge per (entity, item).
      const edges = new Map();
      const names = new Map();
      for (const [i, it] of items.entries()) {
        if (extracted[i]?.fallback) report.fallbacks++;
        for (const m of extracted[i]?.mentions ?? []) {
          const key = `${m.kind}\u0000${m.name}`;
          names.set(key, { name: m.name, kind: m.kind });
          const edge = `${key}\u0000${it.id}`;
          const prev = edges.get(edge);
          if (!prev || prev.strength < m.strength) edges.set(edge, { item: it.id, key, strength: m.strength });
        }
      }
      // Entities the namespace lacks are embedded before the transaction (an API embedder may be
      // slow); memloom_index_batch (sql/migrations/0013_bulk_writes.sql) adds them, replaces the items'
      // mentions and marks them indexed, in one statement.
      const all = [...names.values()];
      const present = new Set();
      if (all.length > 0) {
        const { rows: found } = await this.db.query('SELECT name, kind FROM memloom_find_entities($1, $2::text[], $3::text[])', [
          ns,
          all.map((e) => e.name),
          all.map((e) => e.kind),
        ]);
        for (const f of found) present.add(`${f.kind}\u0000${f.name}`);
      }
      const fresh = all.filter((e) => !present.has(`${e.kind}\u0000${e.name}`));
      const freshVectors = fresh.length > 0 ? await this.embedder.embed(fresh.map((e) => entityEmbeddingText(e.name, e.kind, this.embedder))) : [];
      const vectorOf = new Map(fresh.map((e, i) => [`${e.kind}\u0000${e.name}`, freshVectors[i]]));
      const position = new Map([...names.keys()].map((key, i) => [key, i + 1]));
      const edgeList = [...edges.values()];
      const { rows: out } = await this.db.transaction((tx) =>
        tx.query(
          `SELECT entities, mentions FROM memloom_index_batch($1, $2, $3, $4, $5, $6::vector[], $7, $8, $9, $10)`,
          [
            ns,
            rows.map((r) => Number(r.id)),
            rows.map((r) => r.content_hash),
            all.map((e) => e.name),
            all.map((e) => e.kind),
            vectorArrayLiteral([...names.keys()].map((key) => vectorOf.get(key) ?? null)),
            edgeList.map((x) => x.item),
            edgeList.map((x) => position.get(x.key)),
            edgeList.map((x) => x.strength),
            bulk,
          ],
        ),
      );
      report.newEntities += Number(out[0].entities);
      report.items += rows.length;
      report.mentions += edgeList.length;
      for (const x of edgeList) mentioned.add(x.key);
      report.entities = mentioned.size;
      onProgress?.({ done: report.items, total, started, entities: report.entities, newEntities: report.newEntities, mentions: report.mentions, fallbacks: report.fallbacks });
    }
    // Stale edges: superseded items keep no mentions, and entities nothing mentions go.
    const { rows: pruned } = await this.db.query('SELECT mentions, entities FROM memloom_prune_index($1)', [ns]);
    report.removedMentions = Number(pruned[0].mentions);
    report.removedEntities = Number(pruned[0].entities);
    report.seconds = (Date.now() - started) / 1000;
    if (bulk && report.items > 0) await this._refreshStats();
    else if (report.items + report.removedMentions + report.removedEntities > 0) await this._analyzeIfGrown();
    return report;
  }

  // Stats ---------------------------------------------------------------------------------------
  /**
   * What the store holds, its embedder, schema version and vector index.
   * @returns {Promise<StoreStats>}
   */
  async stats() {
    const ns = this.namespace;
    // One namespace's counts in one call (memloom_stats, sql/memloom/14_reads.sql).
    const [n] = (await this.db.query('SELECT * FROM memloom_stats($1)', [ns])).rows;
    const [schema] = (await this.db.query('SELECT max(version)::int AS v FROM memloom_migrations')).rows;
    return {
      location: this.location,
      backend: this.kind,
      namespace: ns,
      embedder: await this.storedEmbedder(),
      schemaVersion: schema.v,
      files: n.files,
      chunks: n.chunks,
      memories: { active: n.active_memories, superseded: n.superseded_memories, keys: n.keys },
      entities: n.entities,
      unindexed: n.unindexed,
      vectorIndex: (await this._hasVectorIndex())
        ? 'hnsw'
        : this.embedder.dims > HNSW_MAX_DIMS
          ? `exact (HNSW takes at most ${HNSW_MAX_DIMS} dimensions)`
          : 'exact (no HNSW index below ' + EMBEDDED_HNSW_THRESHOLD + ' items)',
    };
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

/** Words for each entity kind in the text an entity is embedded from. */
const KIND_WORDS = {
  identifier: 'identifier',
  error_code: 'error code',
  file: 'file',
  flag: 'flag',
  ticket: 'ticket',
  host: 'host',
  version: 'version',
  code: 'code',
  name: 'name',
  topic: 'topic',
};

/**
 * The text an entity's embedding is computed from. A model embedder gets its name and kind
 * (`ERR_REQUIRE_ESM (error code)`); hash-v1 gets the name alone: it has no notion of a kind,
 * and the kind's words would pull a one-word name under the entity gate ("ETIMEDOUT" against
 * "ETIMEDOUT (error code)" is 0.53 < 0.60). static-v1 is half hash-v1, and the kind's words
 * would pull its static half too.
 */
export function entityEmbeddingText(name, kind, embedder) {
  if (embedder?.name === 'hash' || embedder?.name === 'static') return name;
  return `${name} (${KIND_WORDS[kind] ?? kind})`;
}

function explainHit(ranks, { k, weights }) {
  const terms = {};
  for (const a of ARMS) {
    const w = weights[a] ?? { vector: 1.0, keyword: 2.0, entity: 0.5 }[a];
    terms[a] = ranks[a] === null ? null : { rank: ranks[a], weight: w, term: w / (k + ranks[a]) };
  }
  return { k, terms };
}

/** An optional positive integer option, or its default. */
function positive(value, fallback, name) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) throw new MemloomError(`${name} must be a positive integer, not ${value}`);
  return value;
}

function nullableInt(v) {
  return v === null || v === undefined ? null : Number(v);
}

/** pgvector's text form; JS prints each f32 (held in a double) exactly, so it round-trips. */
function toVectorLiteral(v) {
  return `[${Array.prototype.join.call(v, ',')}]`;
}

async function sha256(text) {
  const bytes = new TextEncoder().encode(text);
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

function redact(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable database URL)';
  }
}
