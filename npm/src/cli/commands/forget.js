import { UsageError, positiveInt } from '../args.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'forget',
  summary: 'delete a memory key (every version), one item, or a whole namespace',
  description:
    'Deletes memories for good: --key K every version of a key, --id N one item (a memory or a chunk), or --namespace NS --yes everything the namespace holds (items, entities, statistics). ' +
    'To correct a fact, prefer remember with the same key: it keeps the history.',
  options: [
    { flags: '--key <key>', description: 'every version of this memory key' },
    { flags: '--id <n>', description: 'one item, by the id recall or remember printed', parse: (s) => positiveInt(s, '--id') },
    { flags: '--yes', description: 'confirm forgetting the whole namespace given with --namespace' },
  ],
  examples: [
    ['memloom forget --key deploy-freeze', 'every version of the key'],
    ['memloom forget --id 42', 'one item'],
    ['memloom forget --namespace scratch --yes', 'everything in namespace "scratch"'],
  ],
  json: '{deleted, mentions, entities} (deleted: items); a namespace adds statistics (rows)',
  async run(ctx, _args, o) {
    const ns = ctx.g.namespace;
    if (o.key === undefined && o.id === undefined && ns !== undefined) {
      if (!o.yes) {
        throw new UsageError(
          `forget --namespace ${ns} deletes every item, memory, entity and statistic of namespace "${ns}" and cannot be undone; add --yes to do it`,
        );
      }
      return ctx.withStore(async (store) => {
        const r = await store.forget({ all: true, namespace: store.namespace });
        if (ctx.json) ctx.outJson(r);
        else
          ctx.out(
            `forgot namespace ${store.namespace}: ${r.deleted} item${r.deleted === 1 ? '' : 's'}, ${r.mentions} mention${r.mentions === 1 ? '' : 's'}, ${r.entities} entit${r.entities === 1 ? 'y' : 'ies'}, ${r.statistics} statistics row${r.statistics === 1 ? '' : 's'}`,
          );
        return 0;
      });
    }
    if (o.yes) throw new UsageError('forget --yes confirms forgetting a whole namespace: forget --namespace NS --yes (without --key or --id)');
    if ((o.key === undefined) === (o.id === undefined)) throw new UsageError('forget takes --key K, --id N, or --namespace NS --yes (the whole namespace)');
    const target = o.key !== undefined ? { key: o.key } : { id: o.id };
    return ctx.withStore(async (store) => {
      const r = await store.forget(target);
      if (ctx.json) ctx.outJson(r);
      else ctx.out(`forgot ${r.deleted} item${r.deleted === 1 ? '' : 's'}`);
      return 0;
    });
  },
};
