// Use before init: the core module alone (no entry module has loaded the wasm) must say what
// to do, not fail inside the generated glue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chunk, embed, fuse, NOT_READY_MESSAGE } from '../src/core.js';

test('calling the core before init throws a clear error', () => {
  for (const call of [() => embed('x'), () => chunk('a.md', '# A'), () => fuse({ vector: [1] })]) {
    assert.throws(call, (e) => e instanceof Error && e.message === NOT_READY_MESSAGE);
  }
  assert.match(NOT_READY_MESSAGE, /await init\(\)/);
});
