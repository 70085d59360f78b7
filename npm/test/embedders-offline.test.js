// The offline embedders chosen by name (MEMLOOM_EMBEDDER / --embedder), and a store that keeps
// the one it was built with.
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { embedderFromEnv, openStore, staticEmbedder, hashEmbedder, loadStaticModel } from '../src/entry-node.js';
import { chooseEmbedder } from '../src/core.js';
import { settingsFromEnv, DEFAULTS } from '../src/settings.js';
import { GLOBAL_OPTIONS } from '../src/cli/spec.js';
import * as generated from '../schema/embedders.js';

test('MEMLOOM_EMBEDDER picks an offline embedder; unknown names and conflicts are refused', () => {
  assert.equal(embedderFromEnv({}).id, 'hash-v1');
  assert.equal(embedderFromEnv({ MEMLOOM_EMBEDDER: 'hash-v1' }).id, 'hash-v1');
  const s = embedderFromEnv({ MEMLOOM_EMBEDDER: 'static-v1' });
  assert.deepEqual([s.id, s.name, s.version, s.dims], ['static-v1', 'static', 1, 512]);
  const s2 = embedderFromEnv({ MEMLOOM_EMBEDDER: 'static-v2' });
  assert.deepEqual([s2.id, s2.name, s2.version, s2.dims], ['static-v2', 'static', 2, 512]);
  assert.throws(() => embedderFromEnv({ MEMLOOM_EMBEDDER: 'static-v3' }), /unknown embedder "static-v3".*hash-v1, static-v1, static-v2/);
  assert.throws(
    () => embedderFromEnv({ MEMLOOM_EMBEDDER: 'static-v1', MEMLOOM_EMBED_URL: 'http://127.0.0.1:1/v1' }),
    /both the static-v1 embedder and MEMLOOM_EMBED_URL/,
  );
});

test("the settings' embedder names, default and refusal are the core's (schema/embedders.js, generated at build)", () => {
  // What the core accepts and what the settings accept must be the same set: every generated
  // name is one the core takes, the default is the core's choice when nothing is set.
  for (const name of generated.OFFLINE_EMBEDDERS) assert.equal(chooseEmbedder({ name }).offline, name);
  assert.equal(chooseEmbedder({}).offline, generated.DEFAULT_EMBEDDER);
  assert.equal(DEFAULTS['embedder.name'], generated.DEFAULT_EMBEDDER);
  assert.deepEqual(GLOBAL_OPTIONS.find((o) => o.flags.startsWith('--embedder')).choices, generated.OFFLINE_EMBEDDERS);
  // The settings refuse (before any wasm is needed) with exactly the core's text.
  for (const name of ['static-v3', 'HASH-V1', 'x y', 'a"b', 'hash_v1']) {
    const core = (() => {
      try {
        chooseEmbedder({ name });
      } catch (e) {
        return e.message;
      }
    })();
    assert.ok(core, `the core refuses ${JSON.stringify(name)}`);
    assert.throws(() => settingsFromEnv({ MEMLOOM_EMBEDDER: name }), (e) => e.message === core);
  }
});

test('a corrupted table is refused with a message that says what to use', async () => {
  await assert.rejects(loadStaticModel(new Uint8Array(100)), /static-v1 table: .*static-v1\.bin/);
});

for (const version of [1, 2]) {
  test(`static-v${version} ranks a paraphrase that shares no word above an unrelated text`, async () => {
    const [q, near, far] = await staticEmbedder({ version }).embed([
      'How do I make a uniquely named scratch folder?',
      'fs.mkdtemp creates a unique temporary directory',
      'The HTTP server closes idle keep-alive sockets after a timeout.',
    ]);
    const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
    assert.ok(dot(q, near) > dot(q, far) + 0.1, `${dot(q, near)} vs ${dot(q, far)}`);
  });
}

test('a store built with static-v2 recalls with it and refuses hash-v1 and static-v1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'memloom-static-'));
  const store = await openStore({ dir, embedder: staticEmbedder() });
  try {
    await store.ingest([
      { source: 'fs.md', text: '# fs\n\n## mkdtemp\n\nCreates a unique temporary directory.\n' },
      { source: 'http.md', text: '# http\n\n## keepAliveTimeout\n\nIdle sockets close after a timeout.\n' },
    ]);
    const { results } = await store.recall('scratch folder with a unique name', { limit: 2, arms: ['vector'] });
    assert.equal(results[0].source, 'fs.md');
    const stats = await store.stats();
    assert.deepEqual(stats.embedder, { name: 'static', version: 2, dims: 512 });
  } finally {
    await store.close();
  }
  try {
    await assert.rejects(
      openStore({ dir, embedder: hashEmbedder() }),
      /built with the static-v2 embedder .* set MEMLOOM_EMBEDDER=static-v2/,
    );
    // Same table and dimensions, other weights: never mixed either.
    await assert.rejects(
      openStore({ dir, embedder: staticEmbedder({ version: 1 }) }),
      /built with the static-v2 embedder \(512 dimensions\) but this run embeds with static-v1 \(512 dimensions\)/,
    );
    // Opened without an embedder, the store embeds with the one it was built with.
    const again = await openStore({ dir });
    try {
      assert.equal(again.embedder.id, 'static-v2');
      const { results } = await again.recall('scratch folder with a unique name', { limit: 2, arms: ['vector'] });
      assert.equal(results[0].source, 'fs.md');
    } finally {
      await again.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
