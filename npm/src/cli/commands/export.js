import { readFileSync } from 'node:fs';
import { UsageError } from '../args.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'export',
  summary: 'write a JSONL dump of the store (every namespace, or --namespace NS)',
  description:
    'Writes a versioned JSONL dump (docs/EXPORT.md): a header (format, memloom and schema versions, the embedder), then every item with its versions, ' +
    'links, metadata and embedding, and the entities and mentions. `memloom import` restores it into an embedded store or a server.',
  options: [{ flags: '-o, --output <file>', description: 'write to FILE instead of stdout', complete: 'file' }],
  examples: [
    ['memloom export > dump.jsonl', 'every namespace, to stdout'],
    ['memloom export --namespace team-a --output team-a.jsonl', 'one namespace, to a file'],
  ],
  json: 'with --output: {items, entities, namespaces, bytes, seconds} on stdout (without it stdout carries the dump)',
  async run(ctx, args, o) {
    if (args.length) throw new UsageError('export takes no arguments (--output FILE writes to a file instead of stdout)');
    const { exportToFile } = await import('../../export-node.js');
    return ctx.withStore(async (store) => {
      const started = Date.now();
      const r = await exportToFile(store, { path: o.output, stream: process.stdout, namespace: ctx.g.namespace, memloomVersion: packageVersion() });
      const seconds = (Date.now() - started) / 1000;
      const n = r.namespaces.length;
      ctx.info(`exported ${r.items} items and ${r.entities} entities of ${n} namespace${n === 1 ? '' : 's'} (${(r.bytes / 1e6).toFixed(1)} MB) in ${seconds.toFixed(1)} s${o.output ? ` to ${o.output}` : ''}`);
      if (ctx.json && o.output) ctx.outJson({ ...r, seconds });
      return 0;
    });
  },
};

export function packageVersion() {
  return JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;
}
