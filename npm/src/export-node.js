// Node: a file's lines, streamed with backpressure (nothing but the current chunk and line is
// held, whatever the file's size), and a streamed SHA-256 of a file. Used by `memloom import`.
import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { MemloomError } from './errors.js';

/**
 * Yields `{n, text, bytes}` per line of `path` (1-based n; bytes: read so far, for progress).
 * A final line without a newline is yielded too (a truncated dump's last line).
 */
export async function* readLines(path) {
  let size;
  try {
    size = statSync(path).size;
  } catch (e) {
    throw new MemloomError(`cannot read ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  }
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let n = 0;
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    bytes += chunk.length;
    const text = carry + decoder.write(chunk);
    let start = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', start)) {
      n++;
      yield { n, text: text.slice(start, text.charCodeAt(i - 1) === 13 ? i - 1 : i), bytes, size };
      start = i + 1;
    }
    carry = text.slice(start);
  }
  carry += decoder.end();
  if (carry !== '') yield { n: n + 1, text: carry, bytes, size };
}

/** SHA-256 (hex) of a file, streamed. */
export async function fileSha256(path) {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) h.update(chunk);
  return h.digest('hex');
}

/**
 * mem0's export as records `{n, obj}`: a JSON array of memory objects, an object with a
 * `results` (or `memories`) array (what `get_all` returns), both read whole (n: 1-based
 * position), or JSONL, one object a line, streamed (n: the line). A JSONL line that does not
 * parse is an error naming the line.
 */
export async function* readMem0(path) {
  let first = null;
  for await (const l of readLines(path)) {
    if (l.text.trim() !== '') {
      first = l.text.trim();
      break;
    }
  }
  if (first === null) throw new MemloomError(`${path} is empty: expected mem0's memories (a JSON array, {"results": [...]}, or JSONL)`);
  let jsonl = false;
  if (first.startsWith('{')) {
    try {
      const o = JSON.parse(first);
      jsonl = !Array.isArray(o.results) && !Array.isArray(o.memories);
    } catch {
      jsonl = false; // a pretty-printed object: read whole
    }
  }
  if (jsonl) {
    for await (const { n, text } of readLines(path)) {
      if (text.trim() === '') continue;
      try {
        yield { n, obj: JSON.parse(text) };
      } catch (e) {
        throw new MemloomError(`${path}:${n}: not valid JSON (${e.message}); fix or remove that line`);
      }
    }
    return;
  }
  const { readFile } = await import('node:fs/promises');
  let doc;
  try {
    doc = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new MemloomError(`${path}: not valid JSON (${e.message}); mem0's export is a JSON array, {"results": [...]}, or JSONL`);
  }
  const list = Array.isArray(doc) ? doc : (doc?.results ?? doc?.memories);
  if (!Array.isArray(list)) throw new MemloomError(`${path}: expected a JSON array of mem0 memories or an object with a "results" array`);
  for (const [i, obj] of list.entries()) yield { n: i + 1, obj };
}

/**
 * `memloom export`: the store's dump (Store#exportDump) as JSONL to `path`, or to `stream`
 * (stdout) when no path is given, one line per object, honouring backpressure.
 * @param {import('./store.js').Store} store
 * @param {{ path?: string, stream: NodeJS.WritableStream, namespace?: string, memloomVersion?: string | null }} options
 */
export async function exportToFile(store, { path, stream, namespace, memloomVersion }) {
  const { createWriteStream } = await import('node:fs');
  const { once } = await import('node:events');
  const out = path ? createWriteStream(path) : stream;
  let bytes = 0;
  const report = await store.exportDump(
    async (obj) => {
      const line = JSON.stringify(obj) + '\n';
      bytes += Buffer.byteLength(line);
      if (!out.write(line)) await once(out, 'drain');
    },
    { namespace, memloomVersion },
  );
  if (path) {
    out.end();
    await once(out, 'finish');
  }
  return { ...report, bytes };
}

/**
 * What `memloom import FILE` reads before it opens the store: the dump's header (or, for
 * `from: 'mem0'`, a header made for the file, its exportId `mem0:` + the file's SHA-256, so a
 * re-run of the same file resumes) and the lines to pass to Store#importDump. `progress` gets
 * the bytes read so far.
 * @param {string} path
 * @param {{ from?: string, namespace?: string, progress?: (p: { bytes: number, size: number }) => void }} [options]
 */
export async function openDump(path, { from = 'memloom', namespace, progress } = {}) {
  const { mem0Lines } = await import('./export.js');
  if (from === 'mem0') {
    const exportId = `mem0:${await fileSha256(path)}`;
    const { size } = statSync(path);
    const lines = mem0Lines(readMem0(path), { exportId, namespace });
    const first = await lines.next();
    return {
      header: JSON.parse(first.value.text),
      lines: (async function* () {
        yield first.value;
        for await (const l of lines) {
          progress?.({ bytes: size, size });
          yield l;
        }
      })(),
    };
  }
  if (from !== 'memloom') throw new MemloomError(`--from takes memloom (a memloom dump, the default) or mem0, not ${JSON.stringify(from)}`);
  let header = null;
  for await (const { text } of readLines(path)) {
    if (text.trim() === '') continue;
    try {
      header = JSON.parse(text);
    } catch (e) {
      throw new MemloomError(`${path}:1: not valid JSON (${e.message}): not a memloom dump (for a mem0 export use --from mem0)`);
    }
    break;
  }
  if (header === null) throw new MemloomError(`${path} is empty: no header line`);
  // Before any store is opened or created: a dump this code cannot read changes nothing.
  const { checkHeader } = await import('./export.js');
  const { SCHEMA_VERSION } = await import('./store.js');
  checkHeader(header, `${path}:1`, { schemaVersion: SCHEMA_VERSION });
  return {
    header,
    lines: (async function* () {
      for await (const l of readLines(path)) {
        progress?.(l);
        yield l;
      }
    })(),
  };
}
