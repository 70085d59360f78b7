// Migrations (sql/README.md): a fresh store gets the current definition (sql/memloom/) with every
// frozen migration recorded; an existing one the frozen migrations it lacks.
import { ledger } from '../../sql/ledger.js';
import { MemloomError } from '../errors.js';
/** @import { Store } from './store.js' */

/** The newest schema version this code ships (its last frozen migration). */
export const SCHEMA_VERSION = Math.max(...ledger.map((m) => m.version));

/**
 * The SQL texts (sql/migrations.js, about 770 kB of module), imported only when a store needs
 * them: an open of a current store checks the ledger alone (sql/ledger.js). That is 767 kB less
 * to load per open; a cold CLI call's wall time did not measurably change (docs/BENCHMARKS.md).
 */
const schemaSql = () => import('../../sql/migrations.js');
/** sql/README.md: "memloom" as a bigint; every runner queues on it. */
const MIGRATION_LOCK = '30792293106544493';
const MIGRATIONS_TABLE_DDL = `CREATE TABLE IF NOT EXISTS memloom_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now())`;

/**
 * Brings the store to the current schema as sql/README.md specifies: an empty one gets the
 * current definition (sql/memloom/) with every frozen migration recorded, in one
 * transaction; an existing one the frozen migrations it lacks, one transaction each.
 * @param {Store} store
 * @param {{ create: boolean }} options
 */
export async function migrate(store, { create }) {
  const db = store.db;
  const newest = SCHEMA_VERSION;
  // Fast path of every open of a current store: ONE read of the store's ledger, no lock, no
  // transaction, and no SQL text loaded. When it records every shipped file (sql/ledger.js)
  // with the same checksum and nothing newer, there is nothing to apply (rows are only ever
  // added, by committed migrations), so the per-file locked protocol below would only confirm
  // it, at 3 queries per file (issue 19: a third of a cold CLI call's SQL time). Anything else
  // takes the full path, which also gives the errors.
  let stored = null;
  try {
    ({ rows: stored } = await db.query('SELECT version, checksum FROM memloom_migrations'));
  } catch (e) {
    if (e.code !== '42P01') throw e; // undefined_table: a fresh database
  }
  const fresh = stored === null;
  if (fresh && !create) {
    throw new MemloomError(`no memloom store at ${store.location}; run \`memloom init\` (with the same --store / --database-url) first`);
  }
  if (fresh && (await installCurrent(store))) return;
  if (!fresh) {
    const have = new Map(stored.map((r) => [Number(r.version), r.checksum]));
    if (ledger.every((m) => have.get(m.version) === m.checksum) && stored.every((r) => Number(r.version) <= newest)) return;
  }
  const { migrations } = await schemaSql();
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

/** The current definition on an empty ledger; false (nothing done) when another runner was first. @param {Store} store */
export async function installCurrent(store) {
  const { current, migrations } = await schemaSql();
  return store.db.transaction(async (tx) => {
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
