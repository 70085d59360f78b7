// Use before init: the core module alone (no entry module has loaded the wasm) must say what
// to do, not fail inside the generated glue; in browsers, what needs the core after a store
// opened without it loads it on demand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chunk, embed, ensureReady, explainTerms, formatRecall, fuse, NOT_READY_MESSAGE } from '../src/core.js';

test('calling the core before init throws a clear error', () => {
  for (const call of [() => embed('x'), () => chunk('a.md', '# A'), () => fuse({ vector: [1] })]) {
    assert.throws(call, (e) => e instanceof Error && e.message === NOT_READY_MESSAGE);
  }
  assert.match(NOT_READY_MESSAGE, /await init\(\)/);
});

test('the recall text and explain terms need the core too; ensureReady says what to do without a loader', async () => {
  assert.throws(() => formatRecall({ query: 'q', results: [] }), (e) => e.message === NOT_READY_MESSAGE);
  assert.throws(() => explainTerms([], { vector: 1, keyword: 2, entity: 0.5 }, 60), (e) => e.message === NOT_READY_MESSAGE);
  await assert.rejects(ensureReady(), (e) => e.message === NOT_READY_MESSAGE);
});

test("the browser entry loads the core on demand, and a failed load does not stop init(input)", async () => {
  // In Node the browser glue cannot fetch its default file: URL, so the on-demand load fails
  // (as a page whose bundler did not copy the .wasm would); init with the bytes still works.
  const { init } = await import('../src/entry-core-browser.js');
  await assert.rejects(ensureReady(), (e) => e.message.startsWith(NOT_READY_MESSAGE) && /failed/.test(e.message));
  await init(readFileSync(new URL('../wasm/memloom_wasm_bg.wasm', import.meta.url)));
  await ensureReady();
  assert.equal(formatRecall({ query: 'z', results: [] }), 'no results for "z"; try other words, an identifier, or remember the fact first');
});
