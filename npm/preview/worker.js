// The preview's Web Worker: owns the memloom store (PGlite in IndexedDB) and does all the work
// (reading files, chunking, embedding, inserting, entity indexing, recall) off the main thread.
// Protocol: the page posts {id, op, args}; the worker answers {id, ok, value} or {id, ok: false,
// error}, and posts {type: 'progress', ...} while ingesting.
import { init, openStore } from '../src/entry-browser.js';

/** The IndexedDB database PGlite keeps the store in (PGlite names it `/pglite/<name>`). */
const STORE_NAME = 'memloom-preview';
const STORE_DIR = `idb://${STORE_NAME}`;
/** Progress messages at most this often (the page repaints on each). */
const PROGRESS_EVERY_MS = 100;

let store;
let opening;

function open() {
  opening ??= (async () => {
    await init(new URL('./memloom_wasm_bg.wasm', import.meta.url));
    // relaxedDurability: PGlite writes each change to IndexedDB without making the next
    // statement wait for it (ingest is several times faster; a tab closed mid-ingest can lose
    // the last file, which the next ingest re-reads).
    store = await openStore({ dir: STORE_DIR, pglite: { relaxedDurability: true } });
    return store;
  })();
  return opening;
}

async function snapshot() {
  const s = await store.stats();
  return { files: s.files, chunks: s.chunks, memories: s.memories, entities: s.entities, unindexed: s.unindexed };
}

const ops = {
  async open() {
    await open();
    return snapshot();
  },

  /** files: [{root, source, file: File}] */
  async ingest({ files }, received) {
    // Wall-clock marks (epoch ms, comparable with the page's) of every step, measured or not.
    const at = () => performance.timeOrigin + performance.now();
    const timeline = { received };
    await open();
    timeline.opened = at();
    const started = performance.now();
    const warnings = [];
    let last = 0;
    const progress = (p, force = false) => {
      const now = performance.now();
      if (!force && now - last < PROGRESS_EVERY_MS) return;
      last = now;
      postMessage({ type: 'progress', elapsedMs: now - started, ...p });
    };
    progress({ phase: 'ingest', done: 0, total: files.length, chunks: 0 }, true);
    const report = await store.ingest(files, {
      onProgress: (p) => progress({ phase: 'ingest', done: p.done, total: p.total, chunks: p.chunks, source: p.source }, p.done === p.total),
      onWarning: (w) => warnings.push({ source: w.source, reason: w.reason }),
    });
    const ingestMs = performance.now() - started;
    const index = await store.index({
      onProgress: (p) => progress({ phase: 'index', done: p.done, total: p.total, chunks: report.chunks }, p.done === p.total),
    });
    const totalMs = performance.now() - started;
    timeline.indexed = at();
    const stats = await snapshot();
    timeline.done = at();
    return { report, index, warnings, ingestMs, indexMs: totalMs - ingestMs, totalMs, stats, timeline };
  },

  async recall({ query, limit = 10 }) {
    await open();
    return store.recall(query, { limit });
  },

  async remember({ text, key }) {
    await open();
    const saved = await store.remember(text, { key: key || undefined });
    await store.index();
    return saved;
  },

  async memories() {
    await open();
    return store.memories();
  },

  async history({ key }) {
    await open();
    return store.history(key);
  },

  async forget({ key, id }) {
    await open();
    return store.forget(key != null ? { key } : { id });
  },

  async stats() {
    await open();
    return snapshot();
  },

  /** Deletes the IndexedDB database and starts an empty store. */
  async clear() {
    await open().catch(() => {});
    await store?.close().catch(() => {});
    store = undefined;
    opening = undefined;
    await new Promise((resolve, reject) => {
      const req = indexedDB.deleteDatabase(`/pglite/${STORE_NAME}`);
      req.onsuccess = () => resolve();
      req.onerror = () => reject(req.error);
      req.onblocked = () => resolve();
    });
    await open();
    return snapshot();
  },
};

// Writes run one at a time, in arrival order. Reads (recall as you type, lists) do not wait for
// them: PGlite runs one statement or transaction at a time anyway, so a search typed during an
// ingest runs between two files and sees what is stored so far.
const READS = new Set(['open', 'recall', 'memories', 'history', 'stats']);
let writes = Promise.resolve();
self.onmessage = (event) => {
  const { id, op, args } = event.data;
  const received = performance.timeOrigin + performance.now();
  const run = async () => {
    try {
      if (!Object.hasOwn(ops, op)) throw new Error(`unknown operation ${op}`);
      postMessage({ id, ok: true, value: await ops[op](args ?? {}, received) });
    } catch (e) {
      postMessage({ id, ok: false, error: e?.message ?? String(e) });
    }
  };
  if (READS.has(op)) run();
  else writes = writes.then(run);
};
