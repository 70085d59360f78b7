// Embedded Postgres: PGlite + pgvector. A directory in Node, `idb://name` in a browser, or
// memory when `dir` is undefined. The extensions are passed on every open (PGlite needs it).
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

export async function openPglite(dir, options = {}) {
  const opts = { ...options, extensions: { vector } };
  const pg = dir === undefined ? new PGlite(opts) : new PGlite(dir, opts);
  await pg.waitReady;
  return {
    kind: 'embedded',
    query: (sql, params) => pg.query(sql, params),
    exec: (sql) => pg.exec(sql),
    transaction: (fn) =>
      pg.transaction((tx) =>
        fn({ query: (sql, params) => tx.query(sql, params), exec: (sql) => tx.exec(sql) }),
      ),
    close: () => pg.close(),
  };
}
