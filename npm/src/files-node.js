// File system access for Store#ingest in Node: expands a path into documents, relative to the
// ingested root, and reads each as UTF-8 text or says why it was skipped.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { MemloomError } from './errors.js';

/** Files over this size are skipped with a warning (a chunked 10 MB file is rarely wanted). */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
const SKIP_DIRS = new Set(['node_modules', 'target']);

/** A directory: every file under it (dot-files and dot-dirs skipped), pruned on re-ingest. */
export async function expand(path) {
  const abs = resolve(path);
  let st;
  try {
    st = await stat(abs);
  } catch (e) {
    throw new MemloomError(`cannot read ${path}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`);
  }
  if (st.isDirectory()) {
    const files = [];
    await walk(abs, files);
    files.sort();
    return { root: abs, prune: true, docs: files.map((f) => doc(toSource(relative(abs, f)), f)) };
  }
  if (st.isFile()) {
    return { root: dirname(abs), prune: false, docs: [doc(basename(abs), abs)] };
  }
  throw new MemloomError(`cannot ingest ${path}: not a file or directory`);
}

async function walk(dir, out) {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    throw new MemloomError(`cannot read directory ${dir}: ${e.message}`);
  }
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) await walk(p, out);
    } else if (e.isFile()) {
      out.push(p);
    } else if (e.isSymbolicLink()) {
      // Follow links to files, never to directories (no cycles).
      const t = await stat(p).catch(() => null);
      if (t?.isFile()) out.push(p);
    }
  }
}

function toSource(rel) {
  return sep === '/' ? rel : rel.split(sep).join('/');
}

function doc(source, path) {
  return {
    source,
    async load() {
      let bytes;
      try {
        // stat, not lstat: a symbolic link's own size says nothing about the file it names.
        const st = await stat(path);
        if (st.size > MAX_FILE_BYTES) return { path, skip: `larger than ${MAX_FILE_BYTES} bytes` };
        bytes = await readFile(path);
      } catch (e) {
        return { path, skip: `unreadable: ${e.code ?? e.message}` };
      }
      // Anywhere in the file, not only the first 8 KB: PostgreSQL text cannot hold a NUL byte.
      if (bytes.includes(0)) return { path, skip: 'binary (contains NUL bytes)' };
      try {
        return { path, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
      } catch {
        return { path, skip: 'not valid UTF-8' };
      }
    },
  };
}
