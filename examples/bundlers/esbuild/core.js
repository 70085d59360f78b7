// A page that only chunks and embeds: `memloom/core` has no store, so nothing of PGlite is
// bundled and esbuild needs no externals.
import { init, chunk, embed } from 'memloom/core';

window.run = async (text) => {
  await init();
  const chunks = chunk('page.md', text);
  return { breadcrumbs: chunks.map((c) => c.breadcrumb), dims: embed(chunks[0].content).length };
};
