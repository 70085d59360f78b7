// A PostgreSQL server (with pgvector) by URL, through `pg`. One connection: the CLI and the
// store API run one statement at a time, and transactions need one session anyway.
import pg from 'pg';

export async function openPg(url) {
  const client = new pg.Client({ connectionString: url, application_name: 'memloom' });
  await client.connect();
  client.on('error', () => {}); // a dropped connection surfaces on the next query
  await client.query('SET client_min_messages = warning');
  const wrap = (c) => ({
    query: (sql, params) => c.query(sql, params),
    exec: (sql) => c.query(sql),
  });
  let depth = 0;
  return {
    kind: 'server',
    ...wrap(client),
    async transaction(fn) {
      if (depth > 0) return fn(wrap(client));
      depth++;
      await client.query('BEGIN');
      try {
        const out = await fn(wrap(client));
        await client.query('COMMIT');
        return out;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        throw e;
      } finally {
        depth--;
      }
    },
    close: () => client.end(),
  };
}
