// A page with an embedded memloom store, bundled by webpack (webpack.config.mjs). webpack emits
// the files memloom and PGlite load with `new URL(file, import.meta.url)` (the wasm modules,
// PGlite's data, pgvector) by itself: no copying.
import { init, openStore } from 'memloom';

window.run = async (docs, query) => {
  await init();
  const store = await openStore();
  try {
    await store.ingest(docs);
    return await store.recall(query, { limit: 3 });
  } finally {
    await store.close();
  }
};
