// JSONL input files (remember --file, recall --batch, eval): streamed, each line checked, errors
// naming "path:line" and the fix.
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { MemloomError } from '../errors.js';

/**
 * Streams a JSONL file: yields `{record: check(obj, where), where}` for each non-blank line
 * ("path:line"), reading it as it goes (nothing but the current line is held).
 * @template T
 * @param {string} path
 * @param {(obj: any, where: string) => T} check
 * @returns {AsyncGenerator<{record: T, where: string}>}
 */
export async function* readJsonl(path, check) {
  if (!existsSync(path)) throw new MemloomError(`cannot read ${path}: no such file`);
  const rl = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of rl) {
      n++;
      if (line.trim() === '') continue;
      const where = `${path}:${n}`;
      let obj;
      try {
        obj = JSON.parse(line);
      } catch (e) {
        throw new MemloomError(`${where}: not valid JSON (${/** @type {Error} */ (e).message}); fix or remove that line`);
      }
      if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new MemloomError(`${where}: expected a JSON object`);
      yield { record: check(obj, where), where };
    }
  } catch (e) {
    if (e instanceof MemloomError) throw e;
    throw new MemloomError(`cannot read ${path}: ${/** @type {Error} */ (e).message}`);
  } finally {
    rl.close();
  }
}

/**
 * Every record of a JSONL file (readJsonl), validated before any is used.
 * @template T
 * @param {string} path
 * @param {(obj: any, where: string) => T} check
 * @returns {Promise<T[]>}
 */
export async function readJsonlAll(path, check) {
  const all = [];
  for await (const { record } of readJsonl(path, check)) all.push(record);
  return all;
}
