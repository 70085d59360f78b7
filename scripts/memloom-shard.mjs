#!/usr/bin/env node
// memloom across several PostgreSQL servers with PL/Proxy (docs/SCALING.md). The clients
// connect to one PROXY database; each namespace lives on exactly one PARTITION (an ordinary
// memloom store); the proxy routes every call by its namespace (sql/plproxy/).
//
//   node scripts/memloom-shard.mjs setup   --proxy URL --partition URL [--partition URL ...]
//        the partitions migrated to this memloom's schema (its runner, as `memloom init`), their
//        id sequences made disjoint (partition p of at most 1024 hands out ids = p + 1 mod 1024,
//        so a moved namespace keeps its ids), and the proxy's front: plproxy, the SERVER memloom
//        with the partitions, sql/plproxy/front.sql, the routed functions generated from
//        partition 0's catalog (sql/plproxy/generate.sql). The partitions: a power of 2.
//   node scripts/memloom-shard.mjs migrate --proxy URL
//        every partition to this memloom's schema, then the routed functions generated again
//        (a migration that changes a signature follows without a hand edit)
//   node scripts/memloom-shard.mjs where   --proxy URL --namespace NS
//   node scripts/memloom-shard.mjs move    --proxy URL --namespace NS --to P
//        copy-then-switch under the namespace's routing lock (calls of NS wait meanwhile):
//        every row of NS copied to partition P (COPY, triggers off: the statistics rows come
//        along), compared table by table (count and digest of every row), the route switched,
//        the rows deleted from the old partition. A failure before the switch deletes the copy
//        and leaves NS where it was.
//
// Run as a superuser of the proxy and the partitions (the move writes with
// session_replication_role = replica). Connection strings of the partitions are stored in the
// SERVER without a user: PL/Proxy connects as the caller's role (row-level security applies).
// Diagnostics go to stderr; exit 2 on error.
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(ROOT, 'npm', 'package.json'));
const pg = require('pg');
const PSQL = process.env.PSQL ?? '/usr/lib/postgresql/15/bin/psql';
const MAX_PARTITIONS = 1024; // the id sequences' stride: partition p hands out p + 1 (mod 1024)
const ROUTE_LOCK = 30792293; // memloom_route_hash's advisory lock class (sql/plproxy/front.sql)

const log = (m) => process.stderr.write(`memloom-shard: ${m}\n`);
class UsageError extends Error {}

/** A URL as PL/Proxy keeps it: libpq key=value without a user (it adds the caller's). */
function connstr(url) {
  const u = new URL(url);
  const parts = [`host=${u.hostname}`, `port=${u.port || 5432}`, `dbname=${decodeURIComponent(u.pathname.slice(1)) || 'postgres'}`];
  return parts.join(' ');
}

/** The partition's URL for this tool: its stored connection string with the proxy URL's user. */
function partitionUrl(cs, proxyUrl) {
  const kv = Object.fromEntries(cs.split(/\s+/).filter(Boolean).map((p) => p.split('=')));
  const user = new URL(proxyUrl).username || 'postgres';
  const pw = new URL(proxyUrl).password;
  return `postgres://${encodeURIComponent(user)}${pw ? ':' + pw : ''}@${kv.host}:${kv.port}/${kv.dbname}`;
}

async function connect(url) {
  const c = new pg.Client({ connectionString: url, application_name: 'memloom-shard' });
  await c.connect();
  await c.query('SET client_min_messages = warning');
  return c;
}

async function partitionsOf(proxy, proxyUrl) {
  const { rows } = await proxy.query(
    `SELECT substring(o FROM '^p([0-9]+)=')::int AS p, substring(o FROM '^p[0-9]+=(.*)$') AS cs
       FROM pg_foreign_server s, unnest(s.srvoptions) AS o
      WHERE s.srvname = 'memloom' AND o ~ '^p[0-9]+=' ORDER BY 1`,
  );
  if (rows.length === 0) throw new UsageError('the proxy database has no SERVER memloom: run `setup` first');
  return rows.map((r) => ({ index: r.p, connstr: r.cs, url: partitionUrl(r.cs, proxyUrl) }));
}

/** This memloom's migration runner (npm Store._migrate, as `memloom init` runs it) on one partition. */
async function migratePartition(url) {
  const { Store } = await import(join(ROOT, 'npm', 'src', 'store.js'));
  const { openPg } = await import(join(ROOT, 'npm', 'src', 'db-pg.js'));
  const db = await openPg(url);
  try {
    await new Store(db, { namespace: 'default', location: url })._migrate({ create: true });
  } finally {
    await db.close();
  }
}

/** Partition p's identity sequences: stride MAX_PARTITIONS, values = p + 1 (mod stride), above every id stored. */
async function separateIds(client, p) {
  for (const table of ['memloom_items', 'memloom_entities']) {
    const { rows: seq } = await client.query('SELECT pg_get_serial_sequence($1, $2) AS s', [table, 'id']);
    const { rows } = await client.query(
      `SELECT greatest((SELECT coalesce(max(id), 0) FROM ${table}), (SELECT last_value FROM ${seq[0].s}))::text AS m`,
    );
    const next = nextWithResidue(BigInt(rows[0].m), p);
    await client.query(`ALTER TABLE ${table} ALTER COLUMN id SET INCREMENT BY ${MAX_PARTITIONS} RESTART WITH ${next}`);
  }
}

/** The smallest value above m that is p + 1 modulo MAX_PARTITIONS. */
function nextWithResidue(m, p) {
  const stride = BigInt(MAX_PARTITIONS);
  const r = BigInt(p + 1) % stride;
  let v = m + 1n;
  v += (((r - v) % stride) + stride) % stride;
  return v;
}

/** The proxy's routed functions, dropped and generated again from partition 0's catalog, in one transaction. */
async function generate(proxy, partition0) {
  const { rows } = await partition0.query(readFileSync(join(ROOT, 'sql', 'plproxy', 'generate.sql'), 'utf8'));
  await proxy.query('BEGIN');
  try {
    await proxy.query(`SET LOCAL memloom.shard_admin = on`);
    const { rows: old } = await proxy.query(
      `SELECT p.oid::regprocedure::text AS sig FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
        WHERE l.lanname = 'plproxy' AND p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'memloom\\_%'
          AND p.proname NOT LIKE 'memloom\\_shard\\_%'`,
    );
    for (const o of old) await proxy.query(`DROP FUNCTION ${o.sig}`);
    for (const r of rows) await proxy.query(r.ddl);
    await proxy.query('COMMIT');
  } catch (e) {
    await proxy.query('ROLLBACK').catch(() => {});
    throw e;
  }
  log(`generated ${rows.length} routed functions`);
}

async function setup({ proxy: proxyUrl, partition: urls }) {
  if (!proxyUrl || !urls?.length) throw new UsageError('setup needs --proxy URL and at least one --partition URL');
  if ((urls.length & (urls.length - 1)) !== 0) throw new UsageError(`PL/Proxy needs a power of 2 partitions, not ${urls.length}`);
  if (urls.length > MAX_PARTITIONS) throw new UsageError(`at most ${MAX_PARTITIONS} partitions`);
  for (const [p, url] of urls.entries()) {
    await migratePartition(url);
    const c = await connect(url);
    try {
      await separateIds(c, p);
    } finally {
      await c.end();
    }
    log(`partition p${p} ready (${connstr(url)})`);
  }
  const proxy = await connect(proxyUrl);
  try {
    await proxy.query('SET memloom.shard_admin = on');
    await proxy.query('CREATE EXTENSION IF NOT EXISTS plproxy');
    const opts = urls.map((u, p) => `p${p} ${lit(connstr(u))}`).join(', ');
    const { rows } = await proxy.query(`SELECT 1 FROM pg_foreign_server WHERE srvname = 'memloom'`);
    if (rows.length === 0) {
      await proxy.query(`CREATE SERVER memloom FOREIGN DATA WRAPPER plproxy OPTIONS (${opts})`);
      await proxy.query('CREATE USER MAPPING FOR PUBLIC SERVER memloom');
      await proxy.query('GRANT USAGE ON FOREIGN SERVER memloom TO PUBLIC');
    } else {
      // One statement: PL/Proxy checks the partitions after each (a power of 2 at every step).
      const { rows: cur } = await proxy.query(`SELECT srvoptions FROM pg_foreign_server WHERE srvname = 'memloom'`);
      const had = new Set((cur[0].srvoptions ?? []).map((o) => o.split('=')[0]));
      const changes = urls.map((u, p) => `${had.has(`p${p}`) ? 'SET' : 'ADD'} p${p} ${lit(connstr(u))}`);
      for (const k of had) if (/^p[0-9]+$/.test(k) && Number(k.slice(1)) >= urls.length) changes.push(`DROP ${k}`);
      await proxy.query(`ALTER SERVER memloom OPTIONS (${changes.join(', ')})`);
    }
    await proxy.query(readFileSync(join(ROOT, 'sql', 'plproxy', 'front.sql'), 'utf8'));
    const p0 = await connect(urls[0]);
    try {
      await generate(proxy, p0);
    } finally {
      await p0.end();
    }
  } finally {
    await proxy.end();
  }
  log(`proxy ready: ${urls.length} partitions`);
}

async function migrate({ proxy: proxyUrl }) {
  if (!proxyUrl) throw new UsageError('migrate needs --proxy URL');
  const proxy = await connect(proxyUrl);
  try {
    const parts = await partitionsOf(proxy, proxyUrl);
    for (const p of parts) {
      await migratePartition(p.url);
      log(`partition p${p.index} migrated`);
    }
    await proxy.query('SET memloom.shard_admin = on');
    await proxy.query(readFileSync(join(ROOT, 'sql', 'plproxy', 'front.sql'), 'utf8'));
    const p0 = await connect(parts[0].url);
    try {
      await generate(proxy, p0);
    } finally {
      await p0.end();
    }
  } finally {
    await proxy.end();
  }
}

async function where({ proxy: proxyUrl, namespace }) {
  if (!proxyUrl || !namespace) throw new UsageError('where needs --proxy URL and --namespace NS');
  const proxy = await connect(proxyUrl);
  try {
    const { rows } = await proxy.query('SELECT memloom_route($1) AS p', [namespace]);
    process.stdout.write(`${rows[0].p}\n`);
  } finally {
    await proxy.end();
  }
}

/** The memloom_ tables with a namespace column, and their columns a COPY writes (not generated ones). */
async function namespacedTables(client) {
  const { rows } = await client.query(
    `SELECT c.relname AS t, string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) FILTER (WHERE a.attgenerated = '') AS cols
       FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relname LIKE 'memloom\\_%'
      GROUP BY c.relname
     HAVING bool_or(a.attname = 'namespace')
      ORDER BY c.relname`,
  );
  return rows;
}

/** Per table: rows of ns and a digest of them (every column, generated ones too). */
async function fingerprint(client, tables, ns) {
  const out = {};
  for (const { t } of tables) {
    const { rows } = await client.query(
      `SELECT count(*)::bigint AS n, coalesce(md5(string_agg(md5(x::text), '' ORDER BY md5(x::text))), '') AS digest
         FROM ${t} x WHERE x.namespace = $1`,
      [ns],
    );
    out[t] = `${rows[0].n}:${rows[0].digest}`;
  }
  return out;
}

/** COPY of ns's rows of one table from one partition to another (binary; triggers off on the target). */
function copyTable(fromUrl, toUrl, table, cols, ns) {
  const where = `namespace = ${lit(ns)}`;
  return new Promise((resolve, reject) => {
    const src = spawn(PSQL, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', fromUrl, '-c', `\\copy (SELECT ${cols} FROM ${table} WHERE ${where}) TO STDOUT (FORMAT binary)`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const dst = spawn(
      PSQL,
      ['-X', '-q', '-v', 'ON_ERROR_STOP=1', toUrl, '-c', 'SET session_replication_role = replica', '-c', `\\copy ${table} (${cols}) FROM STDIN (FORMAT binary)`],
      { stdio: ['pipe', 'inherit', 'inherit'] },
    );
    src.stdout.pipe(dst.stdin);
    let done = 0;
    const codes = {};
    const finish = (who) => (code) => {
      codes[who] = code;
      if (++done === 2) {
        if (codes.src === 0 && codes.dst === 0) resolve();
        else reject(new Error(`copying ${table} failed (psql exit ${codes.src} / ${codes.dst})`));
      }
    };
    src.on('exit', finish('src'));
    dst.on('exit', finish('dst'));
    src.on('error', reject);
    dst.on('error', reject);
  });
}

async function deleteNamespace(client, tables, ns) {
  await client.query('BEGIN');
  try {
    await client.query('SET LOCAL session_replication_role = replica');
    for (const { t } of tables) await client.query(`DELETE FROM ${t} WHERE namespace = $1`, [ns]);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  }
}

async function move({ proxy: proxyUrl, namespace: ns, to }) {
  if (!proxyUrl || !ns || to === undefined) throw new UsageError('move needs --proxy URL, --namespace NS and --to P (a partition number)');
  const target = Number(to);
  const proxy = await connect(proxyUrl);
  try {
    const parts = await partitionsOf(proxy, proxyUrl);
    if (!Number.isInteger(target) || !parts.some((p) => p.index === target)) {
      throw new UsageError(`--to must be one of the partitions ${parts.map((p) => p.index).join(', ')}, not ${to}`);
    }
    // Calls of ns in flight end first; new ones wait until the route is switched (memloom_route_hash).
    await proxy.query('SELECT pg_advisory_lock($1, hashtext($2))', [ROUTE_LOCK, ns]);
    try {
      const { rows } = await proxy.query('SELECT memloom_route($1) AS p', [ns]);
      const source = rows[0].p;
      if (source === target) {
        log(`namespace ${JSON.stringify(ns)} is on p${target} already`);
        return;
      }
      const from = await connect(parts.find((p) => p.index === source).url);
      const dest = await connect(parts.find((p) => p.index === target).url);
      try {
        const tables = await namespacedTables(from);
        const before = await fingerprint(from, tables, ns);
        const already = await fingerprint(dest, tables, ns);
        const busy = Object.entries(already).filter(([, v]) => !v.startsWith('0:'));
        if (busy.length > 0) throw new Error(`partition p${target} already holds rows of ${JSON.stringify(ns)} (${busy.map(([t]) => t).join(', ')}); remove them first`);
        const srcUrl = parts.find((p) => p.index === source).url;
        const dstUrl = parts.find((p) => p.index === target).url;
        try {
          for (const { t, cols } of tables) await copyTable(srcUrl, dstUrl, t, cols, ns);
          const after = await fingerprint(dest, tables, ns);
          const differ = tables.filter(({ t }) => after[t] !== before[t]).map(({ t }) => `${t} ${before[t]} -> ${after[t]}`);
          if (differ.length > 0) throw new Error(`the copy differs from the source: ${differ.join('; ')}`);
        } catch (e) {
          await deleteNamespace(dest, tables, ns);
          throw e;
        }
        // New ids on the target stay above the moved ones (newest-first orders keep holding).
        await separateIds(dest, target);
        await proxy.query(
          `INSERT INTO memloom_shard_routes (namespace, partition) VALUES ($1, $2)
           ON CONFLICT (namespace) DO UPDATE SET partition = excluded.partition, moved_at = now()`,
          [ns, target],
        );
        await deleteNamespace(from, tables, ns);
        const rowsMoved = Object.values(before).reduce((n, v) => n + Number(v.split(':')[0]), 0);
        log(`moved ${JSON.stringify(ns)} from p${source} to p${target}: ${rowsMoved} rows in ${tables.length} tables, identical`);
        process.stdout.write(`${JSON.stringify({ namespace: ns, from: source, to: target, rows: rowsMoved, tables: before })}\n`);
      } finally {
        await from.end();
        await dest.end();
      }
    } finally {
      await proxy.query('SELECT pg_advisory_unlock($1, hashtext($2))', [ROUTE_LOCK, ns]);
    }
  } finally {
    await proxy.end();
  }
}

function lit(s) {
  return `'${String(s).replace(/'/g, "''")}'`;
}

const commands = { setup, migrate, where, move };
try {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { proxy: { type: 'string' }, partition: { type: 'string', multiple: true }, namespace: { type: 'string' }, to: { type: 'string' } },
  });
  const cmd = commands[positionals[0]];
  if (!cmd) throw new UsageError(`usage: memloom-shard.mjs setup|migrate|where|move [options] (docs/SCALING.md), not ${JSON.stringify(positionals[0] ?? '')}`);
  await cmd(values);
} catch (e) {
  log(`error: ${e.message}`);
  process.exit(2);
}
