// A new embedded store in a Node directory starts from the package's template data directory
// (data/pgdata-template.tar.gz, made at build time by gen-template.js: PGlite's initdb and every
// migration already run), extracted natively, instead of running initdb and the migrations in
// WebAssembly. Used only when its stamp matches this runtime (the PGlite version and the
// migrations' checksums); otherwise, or when the file is missing, PGlite's initdb runs as before.
// A store for the default embedder starts from the template with its overlay (gen-template.js),
// already initialised for it.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ledger } from '../sql/ledger.js';

export const TEMPLATE_FILE = 'pgdata-template.tar.gz';
export const TEMPLATE_STAMP = 'pgdata-template.json';
/** The unit an overlay patches a file in: Postgres writes its relation and WAL files in 8 kB pages. */
export const PATCH_BLOCK = 8192;
const DATA = new URL('../data/', import.meta.url);

/** What a template must have been made with to be used here. */
export async function templateStamp() {
  // Its package.json is not exported: found from the resolved entry, one level above dist/.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const pglite = JSON.parse(readFileSync(join(dirname(dirname(entry)), 'package.json'), 'utf8')).version;
  return { pglite, migrations: ledger.map((m) => `${m.version}:${m.checksum}`) };
}

/**
 * The file names (without .tar.gz / .json) of the overlay that makes the template a store
 * initialised for `embedder` (gen-template.js makes the default embedder's).
 * @param {{ name: string, version: number }} embedder
 */
export function overlayName(embedder) {
  return `pgdata-template-${embedder.name}-v${embedder.version}`;
}

/**
 * The overlay for `embedder` that applies to the template `archive` (its bytes), or null.
 * @param {{ name: string, version: number, dims: number }} embedder
 * @param {Buffer} archive
 */
async function overlayFor(embedder, archive) {
  const name = overlayName(embedder);
  let meta;
  try {
    meta = JSON.parse(readFileSync(new URL(`${name}.json`, DATA), 'utf8'));
  } catch {
    return null; // none for this embedder
  }
  const e = meta.embedder;
  if (e?.name !== embedder.name || e.version !== embedder.version || e.dims !== embedder.dims) return null;
  if (meta.base !== createHash('sha256').update(archive).digest('hex')) return null; // made for another template
  const { unpackTar } = await import('modern-tar');
  return { entries: await unpackTar(gunzipSync(readFileSync(new URL(`${name}.tar.gz`, DATA)))), remove: new Set(meta.remove), patch: meta.patch };
}

/**
 * The template's entries with the overlay applied: its new and replaced files in, the blocks
 * of its patched files written over the template's, the files it lacks out (the template's
 * directories stay: an overlay directory is one more mkdir).
 * @param {import('modern-tar').ParsedTarEntryWithData[]} entries
 * @param {NonNullable<Awaited<ReturnType<typeof overlayFor>>>} overlay
 */
function applyOverlay(entries, { entries: extra, remove, patch }) {
  const blocks = new Map(extra.filter((e) => patch[e.header.name]).map((e) => [e.header.name, e.data ?? new Uint8Array(0)]));
  const replaced = new Set(extra.filter((e) => e.header.type !== 'directory' && !patch[e.header.name]).map((e) => e.header.name));
  const out = [];
  for (const e of entries) {
    const name = e.header.name;
    if (remove.has(name) || replaced.has(name)) continue;
    const p = patch[name];
    if (!p) {
      out.push(e);
      continue;
    }
    const data = new Uint8Array(p.size);
    data.set((e.data ?? new Uint8Array(0)).subarray(0, p.size));
    const given = /** @type {Uint8Array} */ (blocks.get(name));
    p.blocks.forEach((b, i) => data.set(given.subarray(i * PATCH_BLOCK, (i + 1) * PATCH_BLOCK), b * PATCH_BLOCK));
    out.push({ header: { ...e.header, size: p.size }, data });
  }
  return out.concat(extra.filter((e) => !patch[e.header.name]));
}

/**
 * Fills `dir` (missing or empty; the caller holds the store's lock) from the template; with
 * `embedder`, when the package has its overlay (gen-template.js), a store initialised for it
 * (memloom_init_store done). Returns false, touching nothing, when there is no current template.
 * @param {string} dir
 * @param {{ embedder?: { name: string, version: number, dims: number } }} [o]
 */
export async function fillFromTemplate(dir, { embedder } = {}) {
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
  const archive = readFileSync(file);
  let entries = await unpackTar(gunzipSync(archive));
  const overlay = embedder ? await overlayFor(embedder, archive) : null;
  if (overlay) entries = applyOverlay(entries, overlay);
  // Into a sibling folder first, then moved in with PG_VERSION last: an init killed midway
  // leaves no directory that looks like a store (PG_VERSION is what says "a store is here").
  const tmp = mkdtempSync(join(dirname(resolve(dir)), '.memloom-template-'));
  try {
    // The entries are "/base/...": the leading slash is stripped, so they land under tmp, with
    // the modes of the archive (as PGlite wrote them: nothing for others). The archive is the
    // package's own (gen-template.js): directories and regular files only.
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
