import { vectorArmNote } from '../output.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'stats',
  summary: 'what the store holds, and what its vector arm can match',
  description: 'Shows the store (location, backend, schema), its embedder and what its vector arm can and cannot match, and counts of files, chunks, memories and entities.',
  examples: [['memloom stats', 'a table'], ['memloom stats --json | jq .memories', 'as JSON']],
  json: 'store.stats(): {location, backend, schemaVersion, namespace, embedder: {name, version, dims}, files, chunks, memories: {active, superseded, keys}, entities, unindexed, vectorIndex, ...} plus vectorArm (text)',
  async run(ctx) {
    return ctx.withStore(async (store) => {
      const s = await store.stats();
      const note = vectorArmNote(s.embedder);
      if (ctx.json) {
        ctx.outJson({ ...s, vectorArm: note });
        return 0;
      }
      ctx.out(`store       ${s.location} (${s.backend}, schema ${s.schemaVersion})`);
      ctx.out(`namespace   ${s.namespace}`);
      ctx.out(`embedder    ${s.embedder.name}-v${s.embedder.version} (${s.embedder.dims} dims)`);
      ctx.out(`vector arm  ${note}`);
      ctx.out(`files       ${s.files}`);
      ctx.out(`chunks      ${s.chunks}`);
      ctx.out(`memories    ${s.memories.active} active, ${s.memories.superseded} superseded, ${s.memories.keys} keys`);
      ctx.out(`entities    ${s.entities} (${s.unindexed} items not indexed yet)`);
      ctx.out(`vectors     ${s.vectorIndex}`);
      return 0;
    });
  },
};
