/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'index',
  summary: 'extract entities (for the entity arm) of items not indexed yet',
  description:
    'Extracts the entities (identifiers, error codes, file names, names) each item mentions and links them, for the entity arm of recall. Only items not indexed yet, unless --all. The extractor is offline unless extractor.url / MEMLOOM_EXTRACT_URL names an OpenAI-compatible chat endpoint.',
  options: [
    { flags: '--all', description: 're-index every item (after changing the extractor)' },
    { flags: '--offline', description: 'use the built-in offline extractor even when an LLM extractor is configured' },
  ],
  examples: [
    ['memloom index', 'index what ingest and remember added since the last run'],
    ['memloom index --all --offline', 'rebuild every entity with the offline extractor'],
  ],
  json: '{items, entities, newEntities, mentions, removedMentions, removedEntities, fallbacks, extractor, seconds}',
  async run(ctx, _args, o) {
    return ctx.withStore(async (store) => {
      const r = await runIndex(ctx, store, { all: !!o.all, offline: !!o.offline });
      if (ctx.json) ctx.outJson(r);
      return 0;
    });
  },
};

/**
 * Indexes with progress (counts and rate) and warnings on stderr; returns the report.
 * @param {import('../context.js').Context} ctx
 * @param {import('../../store.js').Store} store
 * @param {{ all?: boolean, offline?: boolean }} o
 */
export async function runIndex(ctx, store, { all = false, offline = false }) {
  const extractor = ctx.extractor({ offline });
  const bar = ctx.progress('items');
  const r = await store.index({
    extractor,
    all,
    onProgress: bar.update,
    onWarning: (w) => {
      bar.clear();
      ctx.warn(w.reason);
    },
  });
  bar.done();
  const rate = r.items / Math.max(r.seconds, 0.001);
  ctx.info(
    `indexed ${r.items} items: ${r.entities} entities (${r.newEntities} new), ${r.mentions} mentions ` +
      `in ${r.seconds.toFixed(1)} s (${rate.toFixed(0)} items/s, ${r.extractor} extractor)` +
      (r.fallbacks ? `; ${r.fallbacks} items fell back to the offline extractor` : '') +
      (r.removedMentions || r.removedEntities ? `; removed ${r.removedMentions} stale mentions, ${r.removedEntities} unused entities` : ''),
  );
  return r;
}
