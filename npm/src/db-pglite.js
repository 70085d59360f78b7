// Embedded Postgres: PGlite + pgvector. A directory in Node, `idb://name` in a browser, or
// memory when `dir` is undefined. The extensions are passed on every open (PGlite needs it).
//
// In a browser PGlite fetches four files (PGLITE_ASSETS) from next to its own module, wherever
// the bundler put it. With `assets` (openStore({ assets: URL })) memloom fetches and checks them
// itself first, from that folder, and hands them to PGlite: a missing or wrong file fails within
// ASSET_TIMEOUT_MS, naming it, instead of leaving PGlite waiting forever. Without `assets`
// pgvector's bundle is still checked first (checkVectorBundle), in Node too.
import { IdbFs, PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { MemloomError } from './errors.js';

/** The files a browser store needs next to the bundle (memloom/assets copies them). */
export const PGLITE_ASSETS = ['pglite.wasm', 'initdb.wasm', 'pglite.data', 'vector.tar.gz'];
/** How long one asset may take to answer before openStore gives up on it. */
export const ASSET_TIMEOUT_MS = 10_000;
/**
 * The embedded store's shared buffers (PostgreSQL's and PGlite's default is 128MB). In a wasm
 * process the buffer pool is memory the process keeps once touched, and PGlite touches it as a
 * store grows: at 64MB a `remember --file` of 100k lines peaked at 471 MB RSS instead of 550,
 * and recall over the Node docs store (63 MB of relations) read no block more and ran as fast
 * (docs/BENCHMARKS.md "The embedded store's buffer pool"). A miss costs a read from the store's
 * files (the OS page cache in Node, memory in a browser), not a disk seek.
 */
export const EMBEDDED_SHARED_BUFFERS = '64MB';

/**
 * PGlite's start parameters for a process that opens the store for one short command and exits
 * (the CLI's cold recall, remember, forget, stats, history and init: cli/warm.js oneShot).
 * PostgreSQL sets up its whole buffer pool as it starts, about 0.7 ms a megabyte here, and such
 * a process reads each page it needs about once: 16MB made a cold `recall` of the Node docs
 * store 548 ms against 581 (`remember` 567 / 608, `stats` 499 / 528; 5 runs each, the same
 * results).
 */
export function oneShotStartParams() {
  return [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];
}

/**
 * @param {string | undefined} dir
 * @param {Record<string, unknown>} [options] Extra PGlite options.
 * @param {{ assets?: string | URL }} [more]
 */
export async function openPglite(dir, options = {}, { assets } = {}) {
  /** @type {any} */
  // PGlite's own start parameters (it runs single-user PostgreSQL with them), plus the buffer
  // pool's size; startParams given in options replace both, as they replace PGlite's.
  let opts = {
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
    ...options,
    extensions: { vector },
  };
  if (assets !== undefined) opts = { ...opts, ...(await loadAssets(assets)) };
  else await checkVectorBundle();
  // The file system is made and wrapped before PGlite starts: PGlite's startup already starts
  // background copies (after initdb, and after its first query), so wrapping it once started
  // missed them (drainSyncsOnClose).
  if (opts.relaxedDurability) {
    const fs = opts.fs ?? fileSystemFor(dir);
    if (fs !== undefined) opts = { ...opts, fs: drainSyncsOnClose(fs) };
  }
  const pg = dir === undefined ? new PGlite(opts) : new PGlite(dir, opts);
  await started(pg);
  // Both drivers answer a query with one shape, { rows, rowCount } (db-pg.js too): PGlite says
  // affectedRows where pg says rowCount, which is how a count once read 0 on one of them.
  // Vectors travel as bytes (store/vectors.js): PGlite sends a parameter in binary only when its
  // serializer returns bytes, and pgvector's types have no serializer of their own (their OIDs
  // are the database's: useVectorTypes, once the extension exists).
  let queryOptions;
  const wrap = (c) => ({
    query: async (sql, params) => {
      const r = await c.query(sql, params, queryOptions);
      return { rows: r.rows, rowCount: r.affectedRows || r.rows.length };
    },
    exec: (sql) => c.exec(sql),
  });
  const bytesOrText = (x) => (x instanceof Uint8Array ? x : x.toString());
  return {
    kind: 'embedded',
    ...wrap(pg),
    /** @param {{ vector: number, array: number }} oids */
    useVectorTypes: ({ vector, array }) => {
      queryOptions = { serializers: { [vector]: bytesOrText, [array]: bytesOrText } };
    },
    transaction: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    close: () => pg.close(),
  };
}

/**
 * The file system PGlite would make itself for `dir`, when it is one that copies in the
 * background: IndexedDB (`idb://name`, the browser store). A directory in Node and memory copy
 * nothing (undefined: PGlite makes them).
 * @param {string | undefined} dir
 */
export function fileSystemFor(dir) {
  return dir?.startsWith('idb://') ? new IdbFs(dir.slice('idb://'.length)) : undefined;
}

/**
 * With `relaxedDurability` PGlite copies each change to IndexedDB in the background without
 * awaiting it, and its close() (PGlite 0.5.14, ours, and 0.5.17, the newest) neither waits for
 * that copy nor for the one its own last message starts: the copy then runs on a closed file
 * system, throws inside PGlite (an uncaught "ErrnoError", or "Cannot read properties of
 * undefined (reading 'FS')" once the module is gone) and the last writes may never reach
 * IndexedDB. Upstream's fix is electric-sql/pglite#1063, not released. Until then: every copy
 * the file system starts is tracked, and closing the file system first waits until none is
 * running and none is queued (a macrotask lets a queued one start), then copies once more,
 * awaited. A background copy
 * that fails is not rethrown where nothing awaits it (it was an uncaught "ErrnoError" in the
 * page): the next copy, or the one at close, copies the whole tree again.
 *
 * Wrap the file system before PGlite starts (openPglite passes it as PGlite's `fs`): PGlite's
 * startup makes background copies of its own (after initdb, and after its first query, both
 * before waitReady). Wrapped after the start, those were not tracked: a failure was uncaught,
 * and a store closed right after it opened (the preview's "Clear store" after a reload) did not
 * wait for them, nor for the copies PGlite queued behind them (one lock runs its copies one at
 * a time), which then ran after the close.
 * @param {any} fs a PGlite file system (`syncToFs` copies, `closeFs` closes), started or not
 * @returns {any} the same file system
 */
export function drainSyncsOnClose(fs) {
  if (typeof fs?.syncToFs !== 'function' || typeof fs?.closeFs !== 'function') return fs;
  const sync = fs.syncToFs.bind(fs);
  const closeFs = fs.closeFs.bind(fs);
  let running = Promise.resolve();
  fs.syncToFs = (relaxed, ...rest) => {
    const copy = sync(relaxed, ...rest);
    running = copy.catch(() => {});
    // A background copy nobody awaits: its failure (a file PostgreSQL removed while the copy
    // walked the tree, ENOENT) would be an unhandled rejection. The next copy starts from the
    // whole tree again, and the one at close is awaited and reports its failure to the caller.
    return relaxed ? running : copy;
  };
  fs.closeFs = async () => {
    for (;;) {
      const seen = running;
      await seen;
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (running === seen) break;
    }
    await sync(false);
    return closeFs();
  };
  return fs;
}

/**
 * Waits for PGlite to start. In a browser a file PGlite could not load (a 404 for its wasm)
 * surfaces only as an unhandled rejection inside PGlite, and waitReady never settles: such a
 * rejection while starting fails the open instead, naming the files the page failed to load
 * (resource timing).
 */
async function started(pg) {
  if (typeof globalThis.addEventListener !== 'function' || typeof performance?.getEntriesByType !== 'function') {
    await pg.waitReady;
    return;
  }
  let onRejection;
  const failed = new Promise((_, reject) => {
    onRejection = (event) => {
      if (/WebAssembly|wasm|fetch|bundle|HTTP/i.test(String(event.reason?.message ?? event.reason))) reject(event.reason);
    };
    globalThis.addEventListener('unhandledrejection', onRejection);
  });
  try {
    await Promise.race([pg.waitReady, failed]);
  } catch (e) {
    throw startupError(e);
  } finally {
    globalThis.removeEventListener('unhandledrejection', onRejection);
  }
}

function startupError(e) {
  const missing = performance
    .getEntriesByType('resource')
    .filter((r) => r.responseStatus >= 400 && /\.(wasm|data|gz)(\?|#|$)/.test(r.name))
    .map((r) => `${r.name} (HTTP ${r.responseStatus})`);
  const files = PGLITE_ASSETS.join(', ');
  if (missing.length > 0) {
    return new MemloomError(
      `PGlite could not load ${missing.join(', ')}; serve PGlite's files (${files}) where the bundle expects them, or copy them next to it with copyBrowserAssets (memloom/assets) and pass openStore({ assets })`,
    );
  }
  return new MemloomError(`PGlite did not start: ${e?.message ?? e}; check that its files (${files}) are served with the bundle, or pass openStore({ assets }) to have memloom check them`);
}

/**
 * Checks pgvector's extension bundle (vector.tar.gz, next to @electric-sql/pglite-pgvector's
 * module, wherever the bundler put it) before PGlite starts. PGlite only logs a bundle it cannot
 * load and starts without the extension, so a missing one used to surface as `extension "vector"
 * is not available` when the schema was installed, about 25 s later in Chromium. (Node's entry
 * also calls it before filling a new store from the template, which takes seconds.)
 */
export async function checkVectorBundle() {
  const { bundlePath } = await vector.setup(undefined, {});
  const url = new URL(String(bundlePath), globalThis.location?.href);
  if (url.protocol === 'file:') {
    // Node (a browser never has a file: URL here): PGlite reads it from disk.
    const [{ existsSync }, { fileURLToPath }] = await Promise.all([import('node:fs'), import('node:url')]);
    const path = fileURLToPath(url);
    if (!existsSync(path)) {
      throw new MemloomError(`pgvector's vector.tar.gz is missing: ${path} does not exist; reinstall @electric-sql/pglite-pgvector (npm install memloom, or rm -rf node_modules && npm install)`);
    }
    return;
  }
  const fix = `serve PGlite's files (${PGLITE_ASSETS.join(', ')}) where the bundle expects them, or copy them next to it with copyBrowserAssets (memloom/assets) and pass openStore({ assets })`;
  let res;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(ASSET_TIMEOUT_MS) });
  } catch (e) {
    const why = e?.name === 'TimeoutError' ? `no answer within ${ASSET_TIMEOUT_MS / 1000} s` : (e?.message ?? String(e));
    throw new MemloomError(`cannot load pgvector's vector.tar.gz from ${url}: ${why}; ${fix}`);
  }
  if (!res.ok) throw new MemloomError(`pgvector's vector.tar.gz is missing: ${url} answered HTTP ${res.status}; ${fix}`);
  // PGlite fetches it again (from the cache, usually): only its presence is checked here.
  await res.body?.cancel();
}

/**
 * Fetches and checks PGlite's files from the folder `base` (resolved against the page), as
 * PGlite options: the two wasm modules compiled, the data bundle, pgvector's bundle URL.
 */
async function loadAssets(base) {
  const folder = new URL(String(base), globalThis.location?.href);
  if (!folder.pathname.endsWith('/')) folder.pathname += '/';
  const fetchAsset = async (name) => {
    const url = new URL(name, folder);
    const fix = `copy it there (copyBrowserAssets(outDir) from 'memloom/assets' copies every file a browser store needs), or pass openStore({ assets }) the folder that holds it`;
    let res;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(ASSET_TIMEOUT_MS) });
    } catch (e) {
      const why = e?.name === 'TimeoutError' ? `no answer within ${ASSET_TIMEOUT_MS / 1000} s` : (e?.message ?? String(e));
      throw new MemloomError(`cannot load PGlite's ${name} from ${url}: ${why}; ${fix}`);
    }
    if (!res.ok) throw new MemloomError(`PGlite's ${name} is missing: ${url} answered HTTP ${res.status}; ${fix}`);
    return { url, res };
  };
  const [pglite, initdb, data, ext] = await Promise.all(PGLITE_ASSETS.map(fetchAsset));
  const compile = async ({ url, res }, name) => {
    try {
      return await WebAssembly.compile(await res.arrayBuffer());
    } catch (e) {
      throw new MemloomError(`${url} is not PGlite's ${name} (${e?.message ?? e}); is the server answering with another file, such as a page?`);
    }
  };
  const [pgliteWasmModule, initdbWasmModule, fsBundle] = await Promise.all([
    compile(pglite, 'pglite.wasm'),
    compile(initdb, 'initdb.wasm'),
    data.res.blob(),
  ]);
  await ext.res.body?.cancel();
  const bundlePath = ext.url;
  return {
    pgliteWasmModule,
    initdbWasmModule,
    fsBundle,
    extensions: { vector: { ...vector, setup: async (pg, emscriptenOpts) => ({ ...(await vector.setup(pg, emscriptenOpts)), bundlePath }) } },
  };
}
