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

test('an API embedder made before init checks its settings once the wasm is loaded', async () => {
  // A browser page may call apiEmbedder() before `await init()`: making it must not throw, and
  // its rules (memloom-core's) run on first use.
  const { apiEmbedder } = await import('../src/embedders.js');
  const good = apiEmbedder({ url: 'http://127.0.0.1:1/v1/', model: 'm', dims: 3 });
  const bad = apiEmbedder({ url: 'ftp://127.0.0.1/v1', model: 'm', dims: 3 });
  assert.throws(() => good.id, (e) => e.message === NOT_READY_MESSAGE);
  const { readFileSync } = await import('node:fs');
  const { initSync } = await import('../wasm/memloom_wasm.js');
  const { setReady } = await import('../src/core.js');
  initSync({ module: readFileSync(new URL('../wasm/memloom_wasm_bg.wasm', import.meta.url)) });
  setReady();
  assert.deepEqual([good.id, good.name, good.version, good.dims], ['api:m-v1', 'api:m', 1, 3]);
  assert.throws(() => bad.id, (e) => e.name === 'MemloomError' && /http:\/\/ or https:\/\//.test(e.message));
});
