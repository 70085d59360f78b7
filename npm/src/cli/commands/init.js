/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'init',
  summary: 'create the store (and apply migrations)',
  description:
    'Creates the store, or upgrades it to this version\'s schema; safe to run again. The embedder is fixed here: a store keeps the embedder it was created with (choose it with --embedder, MEMLOOM_EMBEDDER or a config file).',
  examples: [
    ['memloom init', 'an embedded store in ./.memloom'],
    ['memloom init --store ~/notes/.memloom --embedder static-v2', 'with the distilled offline embedder'],
    ['memloom init --database-url postgres://localhost/memloom', 'on a PostgreSQL server with pgvector'],
  ],
  json: '{location, backend, schemaVersion, namespace, embedder: {name, version, dims}, created, ...}: the stats --json shape plus created (false when the store existed)',
  async run(ctx) {
    const existed = ctx.exists() && !!ctx.target.dir;
    return ctx.withStore(
      async (store) => {
        const s = await store.stats();
        const e = s.embedder;
        if (ctx.json) ctx.outJson({ ...s, created: !existed });
        ctx.info(`store ready at ${s.location} (${s.backend}, schema ${s.schemaVersion}, embedder ${e.name}-v${e.version}, ${e.dims} dims)`);
        return 0;
      },
      { create: true },
    );
  },
};
