import { positiveInt, UsageError } from '../args.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'import',
  summary: 'restore a dump (memloom export), or mem0\'s export with --from mem0',
  description:
    'Restores a dump (docs/EXPORT.md) into an empty namespace (the dump\'s own, or --namespace NS) of an embedded store or a server, in batches, ' +
    'each one transaction; a re-run after an interruption resumes. Vectors are kept when the store\'s embedder is the dump\'s and re-embedded otherwise. ' +
    'A new store takes the dump\'s offline embedder unless one is configured. --from mem0 reads mem0\'s memories (a JSON array, {"results": [...]} or JSONL): user_id becomes the namespace (or NS), id the key.',
  args: [{ name: 'file', description: 'the dump (.jsonl), or mem0\'s export with --from mem0' }],
  options: [
    { flags: '--from <format>', description: 'the file\'s format: memloom (default) or mem0', choices: ['memloom', 'mem0'] },
    { flags: '--batch-size <n>', description: 'lines per transaction (500)', parse: (s) => positiveInt(s, '--batch-size') },
  ],
  examples: [
    ['memloom import dump.jsonl', 'restore a dump into a new store in ./.memloom'],
    ['memloom import dump.jsonl --database-url postgres://...', 'into a server'],
    ['memloom import --from mem0 mem0-export.json', 'mem0 memories, one namespace per user_id'],
  ],
  json: '{items, entities, mentions, namespaces, batches, skipped, reembedded, seconds}',
  async run(ctx, [file], o) {
    if (!file) throw new UsageError('import takes one file: memloom import dump.jsonl (or --from mem0 FILE)');
    const from = o.from === 'memloom' ? undefined : o.from;
    const asked = ctx.g.namespace; // a namespace given on the command line: every item goes there
    const { openDump } = await import('../../export-node.js');
    let read = { bytes: 0, size: 0 };
    const dump = await openDump(file, { from, namespace: asked, progress: (/** @type {any} */ p) => (read = p) });
    // The store's embedder: the one configured (flag, env or config file), else the dump's when
    // it is an offline one (a new store then carries its vectors), else the default.
    const h = dump.header;
    const s = ctx.settings.sources;
    const configured = ['embedder.name', 'embedder.url'].some((k) => s[k] && s[k] !== 'default');
    if (!configured && h?.embedder && (h.embedder.name === 'hash' || h.embedder.name === 'static')) {
      ctx.g.embedder = `${h.embedder.name}-v${h.embedder.version}`;
      ctx._settings = undefined;
    }
    if (ctx.g.namespace === undefined && Array.isArray(h?.namespaces) && h.namespaces.length === 1) ctx.g.namespace = h.namespaces[0];
    return ctx.withStore(
      async (store) => {
        const bar = ctx.progress('lines', { batches: true });
        const started = Date.now();
        const r = await store.importDump(dump.lines, {
          namespace: asked,
          batchSize: o.batchSize,
          where: (/** @type {number} */ n) => `${file}:${n}`,
          source: from === 'mem0' ? 'mem0 export' : 'dump',
          onBatch: (/** @type {{line: number}} */ b) => {
            const total = read.size && read.bytes ? Math.max(b.line, Math.round((b.line * read.size) / read.bytes)) : b.line;
            bar.update({ done: b.line, total, started, tick: true });
          },
        });
        bar.done();
        const seconds = (Date.now() - started) / 1000;
        ctx.info(
          `imported ${r.items} items, ${r.entities} entities and ${r.mentions} mentions into ${r.namespaces.join(', ') || '(nothing)'} from ${file} ` +
            `in ${r.batches} batches, ${seconds.toFixed(1)} s${r.reembedded ? ` (re-embedded with ${store.embedder.id})` : ''}` +
            (r.skipped ? `; ${r.skipped} lines skipped: imported before` : ''),
        );
        if (ctx.json) ctx.outJson({ ...r, seconds });
        return 0;
      },
      { create: true },
    );
  },
};
