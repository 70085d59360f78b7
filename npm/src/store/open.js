// openStore: the driver (PGlite or a server by URL) opened, the store migrated, its embedder
// checked and the session bound to its namespace.
import { hashEmbedder } from '../embedders.js';
import { MemloomError } from '../errors.js';
import { initEmbedder } from './embedder.js';
import { migrate } from './migrate.js';
import { Store } from './store.js';
import { learnVectorTypes } from './vectors.js';
/** @import { OpenStoreOptions } from '../types.js' */

/** Default namespace of a store opened without one. */
export const DEFAULT_NAMESPACE = 'default';

/**
 * Opens (creating and migrating when needed) a store.
 * - `{ dir }`: embedded PGlite in a directory (Node) or `idb://name` (browser); no `dir`: memory.
 * - `{ url }`: a PostgreSQL server with pgvector.
 * Options: `namespace`, `embedder` (default: the offline embedder an existing store was built
 * with, else hash-v1), `create` (default true; false refuses a
 * directory that holds no store), `pglite` (extra PGlite options for an embedded store, e.g.
 * `{ relaxedDurability: true }`; `startParams` replace PGlite's and memloom's shared_buffers,
 * src/db-pglite.js), `drivers` (supplied by the entry module). Unknown options are
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
  const embedder = options.embedder ?? hashEmbedder();
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
    // The embedder: Node's driver can start a new store already initialised for it (template-node.js).
    const { name, version, dims } = embedder;
    db = await d.openPglite(dir, options.pglite, { create: options.create !== false, assets: options.assets, embedder: { name, version, dims } });
  }
  const store = new Store(db, { namespace, embedder, files: d.files, location: url ? redact(url) : dir ?? 'memory' });
  try {
    await migrate(store, { create: options.create !== false });
    await learnVectorTypes(store);
    await initEmbedder(store, { adopt: options.embedder === undefined });
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

let defaultDrivers = async () => ({ openPglite: (await import('../db-pglite.js')).openPglite });

/**
 * Used by the Node entry to add the `pg` driver and file system access.
 * @param {() => Promise<any>} fn
 */
export function setDefaultDrivers(fn) {
  defaultDrivers = fn;
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
