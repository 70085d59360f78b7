// Build step (run by scripts/build-wasm.sh after gen-migrations.js): an initialised and migrated
// PGlite data directory, as data/pgdata-template.tar.gz, with data/pgdata-template.json saying
// what made it (the PGlite version and every migration's checksum). A new embedded store in a
// Node directory starts from a copy of it (entry-node.js) instead of running PGlite's initdb and
// the migrations in WebAssembly (issue 19: most of `memloom init`). The store API checks the
// migrations of every store it opens as always, so a template that is not current only costs
// the time it was meant to save. Skips the work when the stamp already matches.
//
// Beside it, the same directory after the default embedder's initialisation (hash-v1, as an
// embedded store records it: no HNSW index), as an overlay, data/pgdata-template-hash-v1.tar.gz:
// its new files, and of the files that changed only the blocks that differ (0.2 MB where the
// whole files were 2.5 MB gzipped: the WAL segment and the catalogs change in a few pages), with
// pgdata-template-hash-v1.json saying which blocks, which files of the template it no longer has
// and which template (by content) it applies to. `memloom init` with the default embedder then
// finds its embedder recorded and skips memloom_init_store (re-typing two tables' vector columns
// and rebuilding their indexes: 0.15-0.2 s of init on a quiet machine). Any other embedder
// starts from the template and is initialised at open, as before.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { overlayName, templateStamp, PATCH_BLOCK, TEMPLATE_FILE, TEMPLATE_STAMP } from './template-node.js';

const data = fileURLToPath(new URL('../data/', import.meta.url));
const stamp = await templateStamp();
const stampPath = data + TEMPLATE_STAMP;
const { hashEmbedder } = await import('./entry-node.js');
const hash = hashEmbedder(); // hash-v1, the default embedder
const overlay = overlayName(hash);
if (
  [TEMPLATE_FILE, `${overlay}.tar.gz`, `${overlay}.json`].every((f) => existsSync(data + f)) &&
  existsSync(stampPath) &&
  readFileSync(stampPath, 'utf8') === JSON.stringify(stamp)
) {
  process.exit(0);
}
const { PGlite } = await import('@electric-sql/pglite');
const { vector } = await import('@electric-sql/pglite-pgvector');
const { packTar, unpackTar } = await import('modern-tar');
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
const store = new Store(db, { namespace: 'default', embedder: hash, location: 'template' });
await store._migrate({ create: true });
await pg.query('CHECKPOINT');
const base = Buffer.from(await (await pg.dumpDataDir('gzip')).arrayBuffer());
// The default embedder's store: what openStore does to a new embedded store, done here once
// by the same code (store/embedder.js initEmbedder: memloom_init_store, no HNSW index).
const { initEmbedder } = await import('./store/embedder.js');
await initEmbedder(store);
await pg.query('CHECKPOINT');
const initialised = Buffer.from(await (await pg.dumpDataDir('gzip')).arrayBuffer());
await pg.close();

const entries = async (gz) => new Map((await unpackTar(gunzipSync(gz))).map((e) => [e.header.name, e]));
const [before, after] = [await entries(base), await entries(initialised)];
const bytes = (e) => Buffer.from(e.data ?? []);
/** @type {{ header: any, data: Uint8Array }[]} */
const overlayEntries = [];
/** @type {Record<string, { size: number, blocks: number[] }>} */
const patch = {};
for (const e of after.values()) {
  const old = before.get(e.header.name);
  if (old && old.header.type === e.header.type && old.header.mode === e.header.mode && bytes(old).equals(bytes(e))) continue;
  if (!old || e.header.type !== 'file' || old.header.type !== 'file' || old.header.mode !== e.header.mode) {
    overlayEntries.push({ header: e.header, data: bytes(e) });
    continue;
  }
  // A file both have: only its blocks that differ (a few catalog pages, the WAL appended).
  const [a, b] = [bytes(old), bytes(e)];
  const blocks = [];
  for (let i = 0; i * PATCH_BLOCK < b.length; i++) {
    if (!b.subarray(i * PATCH_BLOCK, (i + 1) * PATCH_BLOCK).equals(a.subarray(i * PATCH_BLOCK, (i + 1) * PATCH_BLOCK))) blocks.push(i);
  }
  const data = Buffer.concat(blocks.map((i) => b.subarray(i * PATCH_BLOCK, (i + 1) * PATCH_BLOCK)));
  patch[e.header.name] = { size: b.length, blocks };
  overlayEntries.push({ header: { ...e.header, size: data.length }, data });
}
const remove = [...before.keys()].filter((name) => !after.has(name));
const overlayTar = gzipSync(await packTar(overlayEntries));

const write = (name, bytes) => {
  writeFileSync(data + name + '.tmp', bytes);
  renameSync(data + name + '.tmp', data + name);
};
write(TEMPLATE_FILE, base);
write(`${overlay}.tar.gz`, overlayTar);
// The template it applies to, by content: an overlay is only ever used on the bytes it was made from.
const baseSha256 = createHash('sha256').update(base).digest('hex');
write(`${overlay}.json`, JSON.stringify({ embedder: { name: hash.name, version: hash.version, dims: hash.dims }, base: baseSha256, remove, patch }));
writeFileSync(stampPath, JSON.stringify(stamp));
process.stderr.write(
  `gen-template: data/${TEMPLATE_FILE} (${base.length} bytes), data/${overlay}.tar.gz (${overlayEntries.length} files, ${overlayTar.length} bytes; ${remove.length} removed) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
