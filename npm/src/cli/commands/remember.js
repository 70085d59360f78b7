import { MemloomError } from '../../errors.js';
import { IMPORT_BATCH, toInstant } from '../../store.js';
import { UsageError, positiveInt } from '../args.js';
import { readJsonl } from '../jsonl.js';
import { indexBuildLine } from '../progress.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'remember',
  summary: 'save a memory; a new version of a key supersedes the old',
  description:
    'Saves a memory (a durable fact, decision or note). With --key it is versioned: remembering the same key again supersedes the previous version, and recall only returns the newest (history shows them all). ' +
    'With --file, saves {key, seq, text, at} JSONL records streamed in batches, each batch one transaction; a re-run after an interruption resumes (one version per key and seq).',
  args: [{ name: 'text?', description: 'the memory (quote it); omit with --file' }],
  options: [
    { flags: '--key <key>', description: 'a stable name; remembering it again supersedes the old version' },
    { flags: '--at <when>', description: 'when the event it describes happened (2023-05-08, ISO 8601), distinct from when it is saved' },
    { flags: '--file <memories.jsonl>', description: 'save every {key, seq, text} line of a JSONL file', complete: 'file' },
    { flags: '--batch-size <n>', description: `with --file: records per transaction (${IMPORT_BATCH})`, parse: (s) => positiveInt(s, '--batch-size') },
  ],
  examples: [
    ['memloom remember "the deploy freeze starts Friday 18:00" --key deploy-freeze', 'a keyed memory (version 1, then 2, ...)'],
    ['memloom remember --file memories.jsonl', 'import a JSONL file, resumable'],
    ['memloom remember "use pnpm, not npm" --json', '{"id":..,"key":null,"version":1}'],
  ],
  json: 'one text: {id, key, version}; --file: {read, written, superseding, skipped, batches, seconds}',
  async run(ctx, [text], o) {
    if (o.file) {
      if (text !== undefined || o.key || o.at) throw new UsageError('remember --file takes no text, --key or --at (they come from the file)');
      return rememberFile(ctx, o.file, o.batchSize ?? IMPORT_BATCH);
    }
    if (o.batchSize !== undefined) throw new UsageError('--batch-size goes with --file memories.jsonl');
    if (text === undefined) throw new UsageError('remember takes one text argument (quote it), or --file memories.jsonl');
    return ctx.withStore(async (store) => {
      const r = await store.remember(text, { key: o.key, at: toInstant(o.at, '--at'), onIndexBuild: (e) => ctx.info(indexBuildLine(e)) });
      if (ctx.json) ctx.outJson({ id: r.id, key: r.key ?? null, version: r.version });
      else
        ctx.out(
          r.key
            ? `remembered ${r.key} version ${r.version} (id ${r.id})${r.version > 1 ? `; version ${r.version - 1} is superseded` : ''}`
            : `remembered id ${r.id}`,
        );
      return 0;
    });
  },
};

/**
 * @param {import('../context.js').Context} ctx
 * @param {string} file
 * @param {number} batchSize
 */
async function rememberFile(ctx, file, batchSize) {
  let records = 0;
  /** @param {any} obj @param {string} where */
  const check = (obj, where) => {
    if (typeof obj.text !== 'string' || obj.text.trim() === '') throw new MemloomError(`${where}: "text" must be a non-empty string`);
    if (obj.key != null && (typeof obj.key !== 'string' || obj.key === '')) throw new MemloomError(`${where}: "key" must be a non-empty string`);
    if (obj.seq != null && !Number.isFinite(obj.seq)) throw new MemloomError(`${where}: "seq" must be a number`);
    records++;
    // Here, in the first pass, not only when its batch comes: nothing is written then.
    for (const field of ['text', 'key']) {
      if (typeof obj[field] === 'string' && obj[field].includes('\0')) {
        throw new MemloomError(`${where}: memory ${records}'s ${field} contains a NUL character (U+0000), which PostgreSQL cannot store; remove it`);
      }
    }
    const at = toInstant(obj.at, `${where}: "at"`);
    return { key: obj.key ?? null, seq: obj.seq ?? 0, text: obj.text, at };
  };
  // First pass, nothing kept but each key's last seq: every line valid and each key's lines
  // in increasing seq order, or nothing is written (the second pass streams in batches).
  const last = new Map();
  let total = 0;
  for await (const { record: r, where } of readJsonl(file, check)) {
    total++;
    if (r.key === null) continue;
    const prev = last.get(r.key);
    if (prev !== undefined && r.seq <= prev.seq) {
      throw new MemloomError(
        `${where}: key ${JSON.stringify(r.key)} has seq ${r.seq} after seq ${prev.seq} (${prev.where}); the lines of a key must come in increasing seq order, one line per (key, seq): sort the file by seq or give later versions a higher seq`,
      );
    }
    last.set(r.key, { seq: r.seq, where });
  }
  last.clear();
  records = 0;
  return ctx.withStore(async (store) => {
    const bar = ctx.progress('memories', { batches: true });
    const started = Date.now();
    const stream = (async function* () {
      for await (const { record } of readJsonl(file, check)) yield record;
    })();
    const res = await store.importMemories(stream, {
      batchSize,
      onBatch: (b) => bar.update({ done: b.read, total, started, tick: true }),
      onIndexBuild: (e) => {
        bar.clear();
        ctx.info(indexBuildLine(e));
      },
    });
    bar.done();
    const secs = (Date.now() - started) / 1000;
    ctx.info(
      `remembered ${res.read} memories from ${file} (${res.written} written, ${res.superseding} of them new versions of existing keys` +
        `${res.skipped ? `; ${res.skipped} skipped: unchanged or imported before` : ''}) in ${res.batches} batches, ${secs.toFixed(1)} s`,
    );
    if (ctx.json) ctx.outJson({ ...res, seconds: secs });
    return 0;
  });
}
