// Build step (run by scripts/build-wasm.sh after gen-migrations.js): an initialised and migrated
// PGlite data directory, as data/pgdata-template.tar.gz, with data/pgdata-template.json saying
// what made it (the PGlite version and every migration's checksum). A new embedded store in a
// Node directory starts from a copy of it (entry-node.js) instead of running PGlite's initdb and
// the migrations in WebAssembly (issue 19: most of `memloom init`). The store API checks the
// migrations of every store it opens as always, so a template that is not current only costs
// the time it was meant to save. Skips the work when the stamp already matches.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { templateStamp, TEMPLATE_FILE, TEMPLATE_STAMP } from './template-node.js';

const data = fileURLToPath(new URL('../data/', import.meta.url));
const stamp = await templateStamp();
const stampPath = data + TEMPLATE_STAMP;
if (existsSync(data + TEMPLATE_FILE) && existsSync(stampPath) && readFileSync(stampPath, 'utf8') === JSON.stringify(stamp)) {
  process.exit(0);
}
const { PGlite } = await import('@electric-sql/pglite');
const { vector } = await import('@electric-sql/pglite-pgvector');
const started = Date.now();
// A store in memory, migrated by the store API itself (no embedder recorded: init does that).
const pg = new PGlite({ extensions: { vector } });
await pg.waitReady;
const db = {
  kind: 'embedded',
  query: (sql, params) => pg.query(sql, params),
  exec: (sql) => pg.exec(sql),
  transaction: (fn) => pg.transaction((tx) => fn({ query: (s, p) => tx.query(s, p), exec: (s) => tx.exec(s) })),
  close: async () => {},
};
const { Store } = await import('./store.js');
await new Store(db, { namespace: 'default', location: 'template' })._migrate({ create: true });
await pg.query('CHECKPOINT');
const blob = await pg.dumpDataDir('gzip');
await pg.close();
writeFileSync(data + TEMPLATE_FILE + '.tmp', Buffer.from(await blob.arrayBuffer()));
renameSync(data + TEMPLATE_FILE + '.tmp', data + TEMPLATE_FILE);
writeFileSync(stampPath, JSON.stringify(stamp));
process.stderr.write(`gen-template: data/${TEMPLATE_FILE} (${blob.size} bytes) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
