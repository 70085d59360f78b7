// Closing an embedded store opened with PGlite's relaxedDurability (the preview's IndexedDB store):
// PGlite's close() does not wait for the copies to IndexedDB it runs in the background, so
// db-pglite.js makes the file system's close wait for them and copy once more
// (drainSyncsOnClose). A fake file system records the order; Chromium checks the real one in
// npm/preview/test (a write, then "Clear store", with no page error).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drainSyncsOnClose } from '../src/db-pglite.js';

/** A file system whose copies take `ms` and say when they start and end. */
function fakeFs(events, ms = 20) {
  let n = 0;
  return {
    syncToFs(relaxed) {
      const i = ++n;
      events.push(`copy ${i} ${relaxed ? 'background' : 'awaited'}`);
      return new Promise((resolve, reject) =>
        setTimeout(() => {
          events.push(`copy ${i} done`);
          if (i === 1) reject(new Error('the first copy failed'));
          else resolve();
        }, ms),
      );
    },
    async closeFs() {
      events.push('closed');
    },
  };
}

test('closing waits for the background copies, even one started while closing, then copies once more', async () => {
  const events = [];
  const pg = { fs: fakeFs(events) };
  drainSyncsOnClose(pg);
  // A query's background copy (not awaited by PGlite): this one fails, which must neither be an
  // unhandled rejection nor stop the close...
  const background = pg.fs.syncToFs(true);
  const closing = pg.fs.closeFs();
  // ...and the one PGlite's last message starts a few microtasks after its close began.
  await Promise.resolve();
  pg.fs.syncToFs(true);
  await closing;
  assert.equal(await background, undefined);
  assert.deepEqual(events, [
    'copy 1 background',
    'copy 2 background',
    'copy 1 done',
    'copy 2 done',
    'copy 3 awaited',
    'copy 3 done',
    'closed',
  ]);
});

test('a file system without the two methods is left as it is', () => {
  const fs = { closeFs: async () => {} };
  drainSyncsOnClose({ fs });
  assert.deepEqual(Object.keys(fs), ['closeFs']);
  drainSyncsOnClose({});
});

test('an awaited copy still reports its failure', async () => {
  const events = [];
  const pg = { fs: fakeFs(events) };
  drainSyncsOnClose(pg);
  await assert.rejects(pg.fs.syncToFs(false), /the first copy failed/);
});
