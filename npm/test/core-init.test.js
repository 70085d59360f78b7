// Use before init: the core module alone (no entry module has loaded the wasm) must say what
// to do, not fail inside the generated glue; in browsers, what needs the core after a store
// opened without it loads it on demand. The tests run in file order: the first ones before
// the wasm is loaded, the browser entry's test loads it, the last ones after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chunk, embed, ensureReady, explainTerms, formatRecall, fuse, NOT_READY_MESSAGE, toInstant } from '../src/core.js';
import { apiEmbedder } from '../src/embedders.js';

test('calling the core before init throws a clear error', () => {
  for (const call of [() => embed('x'), () => chunk('a.md', '# A'), () => fuse({ vector: [1] })]) {
    assert.throws(call, (e) => e instanceof Error && e.message === NOT_READY_MESSAGE);
  }
  assert.match(NOT_READY_MESSAGE, /await init\(\)/);
});

test('the recall text and explain terms need the core too; ensureReady says what to do without a loader', async () => {
  assert.throws(() => formatRecall({ query: 'q', results: [] }), (e) => e.message === NOT_READY_MESSAGE);
  assert.throws(() => explainTerms([], { vector: 1, keyword: 2, entity: 0.5 }, 60), (e) => e.message === NOT_READY_MESSAGE);
  // So does the instant rule (a browser store's recall and remember await ensureReady first).
  assert.throws(() => toInstant('2026-03-01', 'asOf'), (e) => e.message === NOT_READY_MESSAGE);
  assert.equal(toInstant(null, 'asOf'), null);
  await assert.rejects(ensureReady(), (e) => e.message === NOT_READY_MESSAGE);
});

// A browser page may call apiEmbedder() before `await init()`: making it must not throw, and
// its rules (memloom-core's) run on first use.
const early = {};
test('an API embedder can be made before init; its settings need the core', () => {
  early.good = apiEmbedder({ url: 'http://127.0.0.1:1/v1/', model: 'm', dims: 3 });
  early.bad = apiEmbedder({ url: 'ftp://127.0.0.1/v1', model: 'm', dims: 3 });
  assert.throws(() => early.good.id, (e) => e.message === NOT_READY_MESSAGE);
});

test("the browser entry loads the core on demand, and a failed load does not stop init(input)", async () => {
  // In Node the browser glue cannot fetch its default file: URL, so the on-demand load fails
  // (as a page whose bundler did not copy the .wasm would); init with the bytes still works.
  const { init } = await import('../src/entry-core-browser.js');
  await assert.rejects(ensureReady(), (e) => e.message.startsWith(NOT_READY_MESSAGE) && /failed/.test(e.message));
  await init(readFileSync(new URL('../wasm/memloom_wasm_bg.wasm', import.meta.url)));
  await ensureReady();
  assert.equal(formatRecall({ query: 'z', results: [] }), 'no results for "z"; try other words, an identifier, or remember the fact first');
  assert.equal(toInstant('2023-05-08', 'until', { endOfDay: true }), '2023-05-08T23:59:59.999Z');
});

test('an API embedder made before init checks its settings once the wasm is loaded', () => {
  assert.deepEqual([early.good.id, early.good.name, early.good.version, early.good.dims], ['api:m-v1', 'api:m', 1, 3]);
  assert.throws(() => early.bad.id, (e) => e.name === 'MemloomError' && /http:\/\/ or https:\/\//.test(e.message));
});
