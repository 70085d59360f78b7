// Export and import of a store's namespaces as a versioned JSONL dump (docs/EXPORT.md), and
// the mem0 importer. What a line holds is decided in SQL (sql/memloom/12_export.sql:
// memloom_export_entities, memloom_export_items, memloom_import_batch); this module pages
// through them, streams, batches, checks lines and re-embeds when the embedders differ. It
// runs in every runtime: the caller gives the lines (a file in Node: lines-node.js).
import { vectorsParam } from './store/vectors.js';
import { MemloomError } from './errors.js';
import { entityEmbeddingText } from './store/entities.js';
import { withVectorIndexDeferred } from './store/maintenance.js';
import { SCHEMA_VERSION } from './store/migrate.js';

/** The dump's `format` field, and the newest `formatVersion` this code writes and reads. */
export const EXPORT_FORMAT = 'memloom-export';
export const EXPORT_FORMAT_VERSION = 1;
/** Rows per export query (memloom_export_items' page). */
export const EXPORT_PAGE = 500;
/** Lines per import batch: one embed call (when re-embedding) and one transaction each. */
export const IMPORT_DUMP_BATCH = 500;
/** The validity interval and event time (docs/TIME.md): optional on import (docs/EXPORT.md). */
const TIME_FIELDS = ['validFrom', 'validTo', 'eventAt'];

/**
 * Writes `store`'s namespaces as dump lines, each passed to `write(object)` (awaited: the
 * caller's backpressure), in one REPEATABLE READ snapshot: a header, then per namespace its
 * entities and its items in id order, then an end line with the counts. Options: `namespace`
 * (one; default every namespace the session can see), `memloomVersion` (for the header).
 * Returns `{exportId, namespaces, entities, items, lines}`.
 * @param {import('./store.js').Store} store
 * @param {(line: import('./types.js').DumpLine) => void | Promise<void>} write
 * @param {{ namespace?: string, memloomVersion?: string | null }} [options]
 * @returns {Promise<import('./types.js').ExportReport>}
 */
export async function exportDump(store, write, { namespace, memloomVersion = null } = {}) {
  const db = store.db;
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const namespaces =
      namespace != null
        ? [namespace]
        : (
            await tx.query(
              `SELECT namespace FROM memloom_items UNION SELECT namespace FROM memloom_entities ORDER BY 1`,
            )
          ).rows.map((r) => r.namespace);
    const { rows: meta } = await tx.query('SELECT schema_version, embedder_name, embedder_version, embedder_dims FROM memloom_meta');
    const m = meta[0];
    const header = {
      type: 'header',
      format: EXPORT_FORMAT,
      formatVersion: EXPORT_FORMAT_VERSION,
      memloomVersion,
      schemaVersion: Number(m.schema_version),
      embedder: m.embedder_name == null ? null : { name: m.embedder_name, version: Number(m.embedder_version), dims: Number(m.embedder_dims) },
      namespaces,
      exportId: globalThis.crypto.randomUUID(),
      exportedAt: new Date().toISOString(),
    };
    await write(header);
    const out = { exportId: header.exportId, namespaces, entities: 0, items: 0, lines: 1 };
    for (const ns of namespaces) {
      for (const [fn, field] of [
        ['memloom_export_entities', 'entities'],
        ['memloom_export_items', 'items'],
      ]) {
        let after = 0;
        for (;;) {
          const { rows } = await tx.query(`SELECT id, line FROM ${fn}($1, $2, $3)`, [ns, after, EXPORT_PAGE]);
          for (const r of rows) {
            await write(typeof r.line === 'string' ? JSON.parse(r.line) : r.line);
            out[field]++;
            out.lines++;
          }
          if (rows.length < EXPORT_PAGE) break;
          after = Number(rows[rows.length - 1].id);
        }
      }
    }
    out.lines++;
    await write({ type: 'end', entities: out.entities, items: out.items, lines: out.lines });
    return out;
  });
}

/** Reads a dump's header line; throws when it is not one this code understands. */
export function checkHeader(obj, where, { schemaVersion }) {
  if (obj?.type !== 'header' || obj.format !== EXPORT_FORMAT) {
    throw new MemloomError(`${where}: not a memloom dump (its first line must be {"type":"header","format":"${EXPORT_FORMAT}",...}); for a mem0 export use --from mem0`);
  }
  if (!Number.isInteger(obj.formatVersion) || obj.formatVersion < 1) throw new MemloomError(`${where}: formatVersion must be a positive integer`);
  if (obj.formatVersion > EXPORT_FORMAT_VERSION) {
    throw new MemloomError(
      `${where}: the dump has format version ${obj.formatVersion}, newer than this memloom's ${EXPORT_FORMAT_VERSION}; upgrade memloom (the one that wrote it: ${obj.memloomVersion ?? 'unknown'}) to import it`,
    );
  }
  if (Number.isInteger(obj.schemaVersion) && obj.schemaVersion > schemaVersion) {
    throw new MemloomError(
      `${where}: the dump was written by a store at schema version ${obj.schemaVersion}, newer than this memloom's ${schemaVersion}; upgrade memloom to import it`,
    );
  }
  if (typeof obj.exportId !== 'string' || obj.exportId === '') throw new MemloomError(`${where}: the header has no exportId`);
  return obj;
}

/**
 * Restores dump lines into `store`. `lines` is an iterable or async iterable of
 * `{n, text}` (line number and text, the header first); memory stays bounded by the batch.
 * Each batch of `batchSize` lines of one namespace is one memloom_import_batch call in one
 * transaction, recorded with its last line in memloom_imports, so an interruption leaves whole
 * batches and a re-run of the same dump resumes after the last one (no duplicates). A namespace
 * that already holds rows not from this dump is refused. Vectors are carried when the dump's
 * embedder is the store's, recomputed otherwise. Options: `namespace` (import every line into
 * it instead of the line's own), `batchSize`, `onBatch(report)`, `where(n)` (names a line in
 * errors, default `line N`). Returns the report: `{exportId, lines, namespaces, entities, items,
 * mentions, skipped, batches, reembedded, complete}`.
 */
export async function importDump(store, lines, options = {}) {
  // Into a new server store: the HNSW indexes built once after the load (maintenance.js).
  return withVectorIndexDeferred(store, () => importLines(store, lines, options));
}

/** @param {import('./store/store.js').Store} store @param {AsyncIterable<{ n: number, text: string }> | Iterable<{ n: number, text: string }>} lines @param {object} options */
async function importLines(store, lines, options) {
  const { namespace, batchSize = IMPORT_DUMP_BATCH, onBatch, where = (n) => `line ${n}`, source = 'dump' } = options;
  if (!Number.isInteger(batchSize) || batchSize <= 0) throw new MemloomError(`batchSize must be a positive integer, not ${batchSize}`);
  const schemaVersion = SCHEMA_VERSION;
  const target = await store.storedEmbedder();
  const report = { exportId: null, lines: 0, namespaces: [], entities: 0, items: 0, mentions: 0, skipped: 0, batches: 0, reembedded: false, complete: false };
  let header = null;
  let end = null;
  let counted = { entities: 0, items: 0 };
  // Per namespace: the last line already committed (memloom_imports), read once.
  const marks = new Map();
  let batch = null; // {ns, entities: [], items: [], last}
  let committedLine = 0;
  const failAt = (n, msg) => {
    const done = committedLine > 0 ? `lines up to ${committedLine} are imported (whole batches); ` : 'nothing was imported; ';
    return new MemloomError(`${where(n)}: ${msg}; ${done}fix the ${source} and run the same import again: it resumes after the last batch`);
  };
  const markOf = async (ns) => {
    if (!marks.has(ns)) {
      const { rows } = await store.db.query('SELECT last_line FROM memloom_imports WHERE namespace = $1 AND export_id = $2', [ns, report.exportId]);
      marks.set(ns, rows.length ? Number(rows[0].last_line) : 0);
      if (!report.namespaces.includes(ns)) report.namespaces.push(ns);
    }
    return marks.get(ns);
  };
  const flush = async () => {
    const b = batch;
    batch = null;
    if (!b || b.entities.length + b.items.length === 0) return;
    const carry = report.reembedded === false;
    let entityVectors;
    let itemVectors;
    if (carry) {
      entityVectors = b.entities.map((e) => e.vector);
      itemVectors = b.items.map((i) => i.vector);
    } else {
      entityVectors = b.entities.length ? await store.embedder.embed(b.entities.map((e) => entityEmbeddingText(e.j.name, e.j.kind, store.embedder))) : [];
      itemVectors = b.items.length ? await store.embedder.embed(b.items.map((i) => i.j.content)) : [];
    }
    let rows;
    try {
      ({ rows } = await store.db.transaction((tx) =>
        tx.query(
          `SELECT entities_written, items_written, mentions_written, skipped
           FROM memloom_import_batch($1, $2, $3, $4::jsonb, $5::jsonb, $6::vector[], $7::vector[])`,
          [
            b.ns,
            report.exportId,
            b.last,
            JSON.stringify(b.entities.map((e) => e.j)),
            JSON.stringify(b.items.map((i) => i.j)),
            vectorsParam(store, entityVectors),
            vectorsParam(store, itemVectors),
          ],
        ),
      ));
    } catch (e) {
      throw new MemloomError(
        `${where(b.first)}..${b.last}: this batch could not be written and nothing of it was (${e.message}); ` +
          (committedLine > 0 ? `lines up to ${committedLine} are imported; ` : '') +
          'fix the cause and run the same import again: it resumes after the last batch',
      );
    }
    const r = rows[0];
    report.entities += Number(r.entities_written);
    report.items += Number(r.items_written);
    report.mentions += Number(r.mentions_written);
    report.skipped += Number(r.skipped);
    report.batches++;
    marks.set(b.ns, b.last);
    committedLine = b.last;
    onBatch?.({ ...report, line: b.last });
  };

  for await (const { n, text } of lines) {
    if (text.trim() === '') continue;
    report.lines = n;
    let obj;
    try {
      obj = JSON.parse(text);
    } catch (e) {
      throw failAt(n, `not valid JSON (${e.message}): the line is truncated or damaged`);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw failAt(n, 'expected a JSON object');
    if (header === null) {
      header = checkHeader(obj, where(n), { schemaVersion });
      report.exportId = header.exportId;
      const e = header.embedder;
      report.reembedded = !(e && target && e.name === target.name && e.version === target.version && e.dims === target.dims);
      continue;
    }
    if (end !== null) throw failAt(n, 'a line after the end line');
    if (obj.type === 'end') {
      end = obj;
      continue;
    }
    if (obj.type !== 'entity' && obj.type !== 'item') throw failAt(n, `unknown line type ${JSON.stringify(obj.type)} (expected entity or item)`);
    let checked;
    try {
      checked = obj.type === 'entity' ? checkEntity(obj) : checkItem(obj);
    } catch (e) {
      throw failAt(n, e.message);
    }
    counted[obj.type === 'entity' ? 'entities' : 'items']++;
    const ns = namespace ?? obj.namespace;
    if (typeof ns !== 'string' || ns === '') throw failAt(n, 'no namespace (pass --namespace to import into one)');
    if (batch && (batch.ns !== ns || batch.entities.length + batch.items.length >= batchSize)) await flush();
    const mark = await markOf(ns);
    if (n <= mark) {
      report.skipped++;
      continue;
    }
    let vector = null;
    if (!report.reembedded) {
      try {
        vector = decodeVector(obj.embedding, target.dims);
      } catch (e) {
        throw failAt(n, e.message);
      }
    }
    const { embedding, ...rest } = checked;
    batch ??= { ns, entities: [], items: [], first: n, last: n };
    batch.last = n;
    (obj.type === 'entity' ? batch.entities : batch.items).push({ j: { ...rest, line: n }, vector });
  }
  if (header === null) throw new MemloomError(`the ${source} is empty: no header line`);
  await flush();
  for (const ns of report.namespaces) await store.db.query('SELECT memloom_refresh_stats($1)', [ns]);
  if (report.items > 0) await store.maintainVectorIndex();
  if (end === null) {
    throw new MemloomError(
      `${where(report.lines)}: the ${source} ends without its end line: it is truncated (every line up to ${report.lines} is imported); import the complete dump with the same command: it resumes`,
    );
  }
  if (Number.isInteger(end.items) && Number.isInteger(end.entities) && (end.items !== counted.items || end.entities !== counted.entities)) {
    throw new MemloomError(
      `the ${source}'s end line counts ${end.entities} entities and ${end.items} items but it holds ${counted.entities} and ${counted.items}: lines are missing or duplicated; export it again`,
    );
  }
  report.complete = true;
  return report;
}

const iso = (v, what) => {
  if (v == null) return null;
  if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) throw new MemloomError(`${what} must be an ISO 8601 instant, not ${JSON.stringify(v)}`);
  return v;
};

function checkString(v, what, { nullable = false } = {}) {
  if (v == null && nullable) return null;
  if (typeof v !== 'string' || v === '') throw new MemloomError(`${what} must be a non-empty string`);
  if (v.includes('\0')) throw new MemloomError(`${what} contains a NUL character (U+0000), which PostgreSQL cannot store`);
  return v;
}

function checkEntity(o) {
  return {
    name: checkString(o.name, 'an entity\'s "name"'),
    kind: checkString(o.kind, 'an entity\'s "kind"'),
    createdAt: iso(o.createdAt, '"createdAt"'),
    embedding: o.embedding,
  };
}

function checkRef(r, what) {
  if (r == null) return null;
  if (typeof r !== 'object' || typeof r.key !== 'string' || !Number.isInteger(r.version)) throw new MemloomError(`${what} must be {"key", "version"} or null`);
  return { key: r.key, version: r.version };
}

/** An item line's fields as memloom_import_batch reads them (docs/EXPORT.md). */
function checkItem(o) {
  if (o.kind !== 'memory' && o.kind !== 'chunk') throw new MemloomError(`"kind" must be memory or chunk, not ${JSON.stringify(o.kind)}`);
  const status = o.status ?? 'active';
  if (status !== 'active' && status !== 'superseded') throw new MemloomError(`"status" must be active or superseded, not ${JSON.stringify(o.status)}`);
  const version = o.version ?? 1;
  if (!Number.isInteger(version) || version < 1) throw new MemloomError(`"version" must be a positive integer, not ${JSON.stringify(o.version)}`);
  if (typeof o.content !== 'string' || o.content.trim() === '') throw new MemloomError('"content" must be a non-empty string');
  if (o.content.includes('\0')) throw new MemloomError('"content" contains a NUL character (U+0000), which PostgreSQL cannot store');
  if (o.metadata != null && (typeof o.metadata !== 'object' || Array.isArray(o.metadata))) throw new MemloomError('"metadata" must be a JSON object');
  const mentions = o.mentions ?? [];
  if (!Array.isArray(mentions)) throw new MemloomError('"mentions" must be an array');
  for (const m of mentions) {
    if (typeof m?.name !== 'string' || typeof m?.kind !== 'string' || !(m.strength > 0 && m.strength <= 1)) {
      throw new MemloomError('each mention must be {"name", "kind", "strength" in (0, 1]}');
    }
  }
  const out = {
    kind: o.kind,
    key: checkString(o.key, '"key"', { nullable: true }),
    version,
    status,
    source: o.source ?? null,
    breadcrumb: o.breadcrumb ?? null,
    content: o.content,
    metadata: o.metadata ?? {},
    createdAt: iso(o.createdAt, '"createdAt"'),
    updatedAt: iso(o.updatedAt, '"updatedAt"'),
    indexedAt: iso(o.indexedAt, '"indexedAt"'),
    supersedes: checkRef(o.supersedes, '"supersedes"'),
    supersededBy: checkRef(o.supersededBy, '"supersededBy"'),
    mentions,
    embedding: o.embedding,
  };
  // Optional instants of schema 15 (validity intervals, event time): checked and passed on.
  for (const f of TIME_FIELDS) if (o[f] != null) out[f] = iso(o[f], `"${f}"`);
  return out;
}

/** memloom_vector_base64's form back to numbers: base64 of big-endian float32. */
export function decodeVector(b64, dims) {
  if (typeof b64 !== 'string' || b64 === '') throw new MemloomError('"embedding" is missing (a dump from the same embedder carries every vector)');
  const bytes = base64Bytes(b64);
  if (bytes.length !== dims * 4) {
    throw new MemloomError(`"embedding" has ${bytes.length / 4} dimensions, but the header's embedder has ${dims}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v = new Array(dims);
  for (let i = 0; i < dims; i++) v[i] = view.getFloat32(i * 4, false);
  return v;
}

/** The inverse, for dumps written outside SQL (tests, benchmarks, converters). */
export function encodeVector(values) {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i], false);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function base64Bytes(b64) {
  let bin;
  try {
    bin = atob(b64);
  } catch {
    throw new MemloomError('"embedding" is not valid base64');
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// mem0 ------------------------------------------------------------------------------------------
/**
 * mem0's memory objects (`get_all` / export: {id, memory, user_id, hash, metadata, categories,
 * created_at, updated_at, agent_id, run_id, ...}) as dump lines, the header first: namespace =
 * user_id (or `namespace`), key = id, content = memory, created_at / updated_at kept, mem0's
 * other fields under metadata.mem0. No vectors: the store's embedder computes them.
 * `records` yields `{n, obj}`; `exportId` identifies the file (resuming a re-run).
 */
export async function* mem0Lines(records, { exportId, namespace }) {
  yield { n: 0, text: JSON.stringify({ type: 'header', format: EXPORT_FORMAT, formatVersion: EXPORT_FORMAT_VERSION, embedder: null, exportId, source: 'mem0' }) };
  let items = 0;
  let last = 0;
  for await (const { n, obj } of records) {
    last = n;
    const bad = (msg) => {
      throw new MemloomError(`record ${n}: ${msg}`);
    };
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) bad('expected a JSON object with id and memory');
    const { id, memory, user_id: userId, created_at: createdAt, updated_at: updatedAt, metadata, ...rest } = obj;
    if ((typeof id !== 'string' && typeof id !== 'number') || id === '') bad('"id" must be a non-empty string');
    if (typeof memory !== 'string' || memory.trim() === '') bad('"memory" must be a non-empty string');
    const ns = namespace ?? userId;
    if (typeof ns !== 'string' || ns === '') bad('no "user_id"; pass --namespace NS to import memories without one');
    if (metadata != null && (typeof metadata !== 'object' || Array.isArray(metadata))) bad('"metadata" must be an object or null');
    const mem0 = { ...rest };
    if (namespace != null && userId != null) mem0.user_id = userId;
    items++;
    yield {
      n,
      text: JSON.stringify({
        type: 'item',
        namespace: ns,
        kind: 'memory',
        key: String(id),
        version: 1,
        status: 'active',
        content: memory,
        metadata: { ...(metadata ?? {}), mem0 },
        createdAt: createdAt ?? null,
        updatedAt: updatedAt ?? createdAt ?? null,
        // The time branch's validity starts when mem0 recorded the memory.
        validFrom: createdAt ?? null,
      }),
    };
  }
  yield { n: last + 1, text: JSON.stringify({ type: 'end', entities: 0, items }) };
}
