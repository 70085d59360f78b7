// A page with an embedded memloom store, bundled by esbuild (build.mjs). PGlite's files are
// copied next to the bundle by copyBrowserAssets, and `assets` tells openStore where they are,
// so that a missing one fails at once and by name.
import { init, openStore } from 'memloom';

window.run = async (docs, query) => {
  await init(); // the core's wasm, next to the bundle
  const store = await openStore({ assets: new URL('./', import.meta.url) });
  try {
    await store.ingest(docs);
    return await store.recall(query, { limit: 3 });
  } finally {
    await store.close();
  }
};
