// A page with an embedded memloom store, built by Vite with no configuration (`vite build`):
// Vite emits the files memloom and PGlite load with `new URL(file, import.meta.url)` itself.
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
