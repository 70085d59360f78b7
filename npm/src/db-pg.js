// A PostgreSQL server (with pgvector) by URL, through `pg`. One connection: the CLI and the
// store API run one statement at a time, and transactions need one session anyway.
// `pg` is an optional peer dependency: loaded here, on the first server connection.
import { isTransient, WRITE_ATTEMPTS } from './errors.js';
import { importOptional } from './optional.js';

export async function openPg(url) {
  const pg = (await importOptional('pg', 'a PostgreSQL server store (openStore({ url }), --database-url)')).default;
  const client = new pg.Client({ connectionString: url, application_name: 'memloom' });
  await client.connect();
  client.on('error', () => {}); // a dropped connection surfaces on the next query
  await client.query('SET client_min_messages = warning');
  // One result shape for both drivers, { rows, rowCount } (db-pglite.js).
  const wrap = (c) => ({
    query: async (sql, params) => {
      const r = await c.query(sql, params);
      return { rows: r.rows, rowCount: r.rowCount ?? r.rows.length };
    },
    exec: (sql) => c.query(sql),
  });
  let depth = 0;
  return {
    kind: 'server',
    ...wrap(client),
    // pg sends a Uint8Array parameter in binary by itself (store/vectors.js): nothing to set up.
    useVectorTypes: () => {},
    // A deadlock (40P01) or serialization failure (40001) rolled back the whole transaction so
    // that the other writer could go on: run it again, a bounded number of times, after a
    // short jittered pause. Every store write is a transaction function that reads what it
    // needs inside, so running it again is running it anew. A nested call joins the outer
    // transaction, which is the one retried.
    async transaction(fn) {
      if (depth > 0) return fn(wrap(client));
      for (let attempt = 1; ; attempt++) {
        depth++;
        try {
          await client.query('BEGIN');
          const out = await fn(wrap(client));
          await client.query('COMMIT');
          return out;
        } catch (e) {
          await client.query('ROLLBACK').catch(() => {});
          if (!isTransient(e) || attempt >= WRITE_ATTEMPTS) throw e;
        } finally {
          depth--;
        }
        await new Promise((r) => setTimeout(r, backoffMs(attempt)));
      }
    },
    close: () => client.end(),
  };
}

/** 10 ms, 20 ms, ... doubled per attempt, plus up to as much again at random. */
function backoffMs(attempt) {
  const base = 10 * 2 ** Math.min(attempt - 1, 6);
  return base + Math.random() * base;
}
