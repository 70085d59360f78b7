// A new embedded store in a Node directory starts from the package's template data directory
// (data/pgdata-template.tar.gz, made at build time by gen-template.js: PGlite's initdb and every
// migration already run), extracted natively, instead of running initdb and the migrations in
// WebAssembly. Used only when its stamp matches this runtime (the PGlite version and the
// migrations' checksums); otherwise, or when the file is missing, PGlite's initdb runs as before.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';
import migrations from '../sql/migrations.js';

export const TEMPLATE_FILE = 'pgdata-template.tar.gz';
export const TEMPLATE_STAMP = 'pgdata-template.json';
const DATA = new URL('../data/', import.meta.url);

/** What a template must have been made with to be used here. */
export async function templateStamp() {
  // Its package.json is not exported: found from the resolved entry, one level above dist/.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const pglite = JSON.parse(readFileSync(join(dirname(dirname(entry)), 'package.json'), 'utf8')).version;
  return { pglite, migrations: migrations.map((m) => `${m.version}:${m.checksum}`) };
}

/**
 * Fills `dir` (missing or empty; the caller holds the store's lock) from the template. Returns
 * false, touching nothing, when there is no current template.
 */
export async function fillFromTemplate(dir) {
  const file = new URL(TEMPLATE_FILE, DATA);
  const stampFile = new URL(TEMPLATE_STAMP, DATA);
  if (!existsSync(file) || !existsSync(stampFile)) return false;
  if (readFileSync(stampFile, 'utf8') !== JSON.stringify(await templateStamp())) return false;
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).some((f) => f !== 'memloom.lock')) return false;
  // modern-tar: a tar reader with no dependencies (`tar` brought five). The archive is read,
  // inflated and split in memory (5 MB gzipped, 40 MB of files) and the files written with
  // synchronous calls: its streaming extractor took 0.4 s of init's 1.2 s for the same files,
  // in the awaits and stream buffers between ~1,000 small writes (docs/BENCHMARKS.md).
  const { unpackTar } = await import('modern-tar');
  const entries = await unpackTar(gunzipSync(readFileSync(file)));
  // Into a sibling folder first, then moved in with PG_VERSION last: an init killed midway
  // leaves no directory that looks like a store (PG_VERSION is what says "a store is here").
  const tmp = mkdtempSync(join(dirname(resolve(dir)), '.memloom-template-'));
  try {
    // The entries are "/base/...": the leading slash is stripped, so they land under tmp (with
    // the modes of the archive: 0750 directories, 0640 files, as PGlite wrote them). The archive
    // is the package's own (gen-template.js): directories and regular files only.
    for (const { header, data } of entries) {
      const path = join(tmp, header.name.replace(/^\/+/, ''));
      if (!path.startsWith(tmp + sep)) throw new Error(`${file}: entry ${header.name} is outside the data directory; rebuild the package (scripts/build-wasm.sh)`);
      if (header.type === 'directory') mkdirSync(path, { recursive: true, mode: header.mode });
      else if (header.type === 'file') writeFileSync(path, data ?? new Uint8Array(0), { mode: header.mode });
      else throw new Error(`${file}: unexpected ${header.type} entry ${header.name}; rebuild the package (scripts/build-wasm.sh)`);
    }
    const names = readdirSync(tmp).sort((a, b) => (a === 'PG_VERSION') - (b === 'PG_VERSION'));
    for (const name of names) renameSync(join(tmp, name), join(dir, name));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return true;
}
