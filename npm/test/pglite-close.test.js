// Closing an embedded store opened with PGlite's relaxedDurability (the preview's IndexedDB store):
// PGlite's close() does not wait for the copies to IndexedDB it runs in the background, so
// db-pglite.js makes the file system's close wait for them and copy once more
// (drainSyncsOnClose). A fake file system records the order, and a real PGlite the copies its
// startup makes; Chromium checks IndexedDB in npm/preview/test (a write, then "Clear store", with
// no page error).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IdbFs, MemoryFS } from '@electric-sql/pglite';
import { drainSyncsOnClose, fileSystemFor, openPglite } from '../src/db-pglite.js';

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
  const pg = { fs: drainSyncsOnClose(fakeFs(events)) };
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
  assert.equal(drainSyncsOnClose(fs), fs);
  assert.deepEqual(Object.keys(fs), ['closeFs']);
  assert.equal(drainSyncsOnClose(undefined), undefined);
});

test('an awaited copy still reports its failure', async () => {
  const events = [];
  const pg = { fs: drainSyncsOnClose(fakeFs(events)) };
  await assert.rejects(pg.fs.syncToFs(false), /the first copy failed/);
});

// PGlite's own startup copies in the background (after initdb, and after its first query, both
// before waitReady resolves). Wrapped once PGlite had started, those copies were not tracked: a
// failed one was an unhandled rejection, and closing right after opening (the preview's "Clear
// store" after a reload) neither waited for one nor for the copy PGlite queued behind it, which
// then ran after the file system was closed. A real PGlite, in memory, on a file system whose
// first copy (one PGlite's startup makes) is the slowest and fails.
test('the copies PGlite makes while starting are tracked too: closing right after opening waits for them', async () => {
  const events = [];
  class SlowCopies extends MemoryFS {
    copies = 0;
    syncToFs(relaxed) {
      const i = ++this.copies;
      events.push(`copy ${i} ${relaxed ? 'background' : 'awaited'}`);
      return new Promise((resolve, reject) =>
        setTimeout(() => {
          events.push(`copy ${i} done`);
          // As IDBFS fails when PostgreSQL removed a file while the copy walked the tree.
          if (i === 1) reject(Object.assign(new Error('ENOENT'), { name: 'ErrnoError' }));
          else resolve();
        }, i === 1 ? 150 : 20),
      );
    }
    async closeFs() {
      events.push('closed');
      return super.closeFs();
    }
  }
  const unhandled = [];
  const onUnhandled = (reason) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const db = await openPglite(undefined, { relaxedDurability: true, fs: new SlowCopies() });
    events.push('opened');
    await db.close();
    // Long enough for any copy left running to end (and a failure to be reported).
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  assert.deepEqual(unhandled, []);
  assert.ok(events.indexOf('copy 1 background') < events.indexOf('opened'), `PGlite copied while starting: ${events.join(', ')}`);
  // Every copy ended before the file system closed, the last one awaited.
  const closed = events.indexOf('closed');
  assert.equal(closed, events.length - 1, events.join(', '));
  const started = events.filter((e) => /^copy \d+ (background|awaited)$/.test(e));
  assert.equal(events.filter((e) => / done$/.test(e)).length, started.length, events.join(', '));
  assert.equal(started.at(-1), `copy ${started.length} awaited`, events.join(', '));
});

test('an IndexedDB store gets a file system made by memloom (so wrapped before PGlite starts); others are left to PGlite', () => {
  const fs = fileSystemFor('idb://memloom-preview');
  assert.ok(fs instanceof IdbFs);
  assert.equal(fs.dataDir, 'memloom-preview');
  assert.equal(fileSystemFor('/tmp/store'), undefined);
  assert.equal(fileSystemFor(undefined), undefined);
});
