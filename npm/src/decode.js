// Turns a file's bytes into text the way Store#ingest wants it, in any runtime: the same rules
// as the Node file reader (files-node.js): too large, binary (a NUL byte anywhere) and
// non-UTF-8 files are skipped with a reason instead of failing the run.

/** Files over this size are skipped with a warning (a chunked 10 MB file is rarely wanted). */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

/** `{text}` or `{skip: reason}` for the bytes of one file. */
export function decodeDocument(bytes) {
  if (bytes.byteLength > MAX_DOCUMENT_BYTES) return { skip: `larger than ${MAX_DOCUMENT_BYTES} bytes` };
  // Anywhere in the file, not only the first 8 KB: PostgreSQL text cannot hold a NUL byte.
  if (bytes.includes(0)) return { skip: 'binary (contains NUL bytes)' };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { skip: 'not valid UTF-8' };
  }
}

/** Reads a Blob / File (browser, Node 20+) and decodes it; the size is checked before reading. */
export async function loadBlob(blob) {
  if (blob.size > MAX_DOCUMENT_BYTES) return { skip: `larger than ${MAX_DOCUMENT_BYTES} bytes` };
  let bytes;
  try {
    bytes = new Uint8Array(await blob.arrayBuffer());
  } catch (e) {
    return { skip: `unreadable: ${e.message}` };
  }
  return decodeDocument(bytes);
}
