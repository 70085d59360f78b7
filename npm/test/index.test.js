// Entity indexing (Store#index, `memloom index`, `ingest --index`) and the LLM extractor against
// a local OpenAI-compatible server with canned replies (valid, malformed JSON, wrong schema,
// 429 then success, timeout). No test reaches the network.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, embed, offlineExtractor, llmExtractor, extractorFromEnv, staticEmbedder } from '../src/entry-node.js';
import { runCli } from './helpers.js';
import { entityKinds } from '../src/core.js';
import { entityEmbeddingText } from '../src/store/entities.js';

let tmp;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-index-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

const DOCS = [
  {
    source: 'errors.md',
    text: '# Errors\n\n## ERR_REQUIRE_ESM\n\nThrown when `require()` loads an ES module. Node.js reports it.\n\n## ERR_HTTP_HEADERS_SENT\n\nHeaders were already sent by `response.writeHead()` in Node.js.\n',
  },
  {
    source: 'crypto.md',
    text: '# Crypto\n\n## Class: X509Certificate\n\nEncapsulates an X509 certificate. Node.js reads it.\n\n## crypto.randomUUID()\n\nA random RFC 4122 UUID from Node.js.\n',
  },
];

/** Snapshot of what indexing wrote: {entities: sorted "kind:name", mentions: sorted "kind:name@source>breadcrumb|key strength"}. */
async function snapshot(store) {
  const { rows: ents } = await store.db.query(`SELECT kind || ':' || name AS e FROM memloom_entities WHERE namespace = $1 ORDER BY 1`, [store.namespace]);
  const { rows: ms } = await store.db.query(
    `SELECT e.kind || ':' || e.name || '@' || coalesce(i.key, i.source || '>' || i.breadcrumb) || ' ' || mt.strength AS m
     FROM memloom_mentions mt JOIN memloom_entities e ON e.id = mt.entity_id JOIN memloom_items i ON i.id = mt.item_id
     WHERE e.namespace = $1 ORDER BY 1`,
    [store.namespace],
  );
  return { entities: ents.map((r) => r.e), mentions: ms.map((r) => r.m) };
}

async function unindexed(store) {
  const { rows } = await store.db.query(`SELECT count(*)::int AS n FROM memloom_items i WHERE namespace = $1 AND status = 'active' AND NOT EXISTS (SELECT 1 FROM memloom_indexed x WHERE x.item_id = i.id)`, [store.namespace]);
  return rows[0].n;
}

async function load(store) {
  await store.ingest(DOCS);
  await store.remember('The billing service connects to Postgres at billing-db-1.internal:5432.', { key: 'billing-db-host' });
  await store.remember('Deploys of orders-api freeze on Fridays (JIRA-4512).', { key: 'deploy-freeze' });
}

test('index: incremental, idempotent, stale edges removed, in-place changes re-indexed', async () => {
  const store = await openStore({});
  try {
    await load(store);
    const first = await store.index();
    assert.equal(first.items, 6); // 4 chunks, 2 memories
    assert.equal(first.extractor, 'offline');
    assert.ok(first.entities > 5 && first.mentions >= first.entities, JSON.stringify(first));
    assert.equal(await unindexed(store), 0);
    const snap = await snapshot(store);
    assert.ok(snap.entities.includes('error_code:ERR_REQUIRE_ESM'), snap.entities.join(' '));
    assert.ok(snap.entities.includes('ticket:JIRA-4512'), snap.entities.join(' '));
    // A first run: every entity it mentions is new, and the store holds exactly those.
    assert.deepEqual([first.entities, first.newEntities, first.mentions], [snap.entities.length, snap.entities.length, snap.mentions.length]);

    // Nothing new: nothing done, nothing changed.
    const again = await store.index();
    assert.deepEqual([again.items, again.entities, again.newEntities, again.mentions], [0, 0, 0, 0]);
    assert.deepEqual(await snapshot(store), snap);

    // index --all of an indexed store (issue 16 reported "0 entities"): the true count of the
    // entities its items mention, none of them new, the same edges.
    const reindexed = await store.index({ all: true });
    assert.deepEqual(
      [reindexed.items, reindexed.entities, reindexed.newEntities, reindexed.mentions, reindexed.removedEntities],
      [6, snap.entities.length, 0, snap.mentions.length, 0],
      JSON.stringify(reindexed),
    );
    assert.deepEqual(await snapshot(store), snap);

    // A new version supersedes: its predecessor's edges and now-unused entities go.
    await store.remember('Deploys of orders-api freeze on Thursdays now.', { key: 'deploy-freeze' });
    const r = await store.index();
    assert.equal(r.items, 1);
    assert.ok(r.removedMentions > 0 && r.removedEntities > 0, JSON.stringify(r));
    const after = await snapshot(store);
    assert.ok(!after.entities.includes('ticket:JIRA-4512'), after.entities.join(' '));
    const hit = await store.recall('JIRA-4512', { arms: ['entity'] });
    assert.equal(hit.results.length, 0, JSON.stringify(hit.results));

    // An in-place content change (sql/0004's trigger) is re-indexed, its old edges replaced.
    await store.db.query(`UPDATE memloom_items SET content = 'Billing now uses pg-billing-2.internal:6432.' WHERE key = 'billing-db-host' AND status = 'active'`);
    assert.equal(await unindexed(store), 1);
    await store.index();
    const changed = await snapshot(store);
    assert.ok(changed.mentions.some((m) => m.includes('pg-billing-2.internal') && m.includes('@billing-db-host')), changed.mentions.join('\n'));
    assert.ok(!changed.mentions.some((m) => m.includes('billing-db-1.internal')), changed.mentions.join('\n'));

    // Deleting an item deletes its edges (foreign key cascade).
    await store.forget('billing-db-host');
    await store.index();
    assert.ok(!(await snapshot(store)).mentions.some((m) => m.includes('@billing-db-host')));

    // --all re-indexes everything and lands on the same state.
    const before = await snapshot(store);
    const again5 = await store.index({ all: true });
    assert.deepEqual([again5.items, again5.entities, again5.newEntities], [5, before.entities.length, 0], JSON.stringify(again5));
    assert.deepEqual(await snapshot(store), before);
  } finally {
    await store.close();
  }
});

test('index: an interrupted run leaves a consistent store and a re-run completes it', async () => {
  const clean = await openStore({});
  const store = await openStore({});
  try {
    await load(clean);
    await clean.index();
    await load(store);
    const offline = offlineExtractor();
    let calls = 0;
    const crashing = {
      id: 'offline',
      async extract(items, opts) {
        if (++calls === 3) throw new Error('killed');
        return offline.extract(items, opts);
      },
    };
    await assert.rejects(store.index({ extractor: crashing, batchSize: 2 }), /killed/);
    // Two batches committed, whole: their items indexed with their edges; the rest untouched.
    assert.equal(await unindexed(store), 2);
    const { rows } = await store.db.query(
      `SELECT count(*)::int AS n FROM memloom_mentions mt WHERE NOT EXISTS (SELECT 1 FROM memloom_indexed x WHERE x.item_id = mt.item_id)`,
    );
    assert.equal(rows[0].n, 0);
    const progress = [];
    const r = await store.index({ batchSize: 2, onProgress: (p) => progress.push(p) });
    assert.equal(r.items, 2);
    assert.deepEqual(progress.map((p) => [p.done, p.total]), [[2, 2]]);
    assert.deepEqual(await snapshot(store), await snapshot(clean));
  } finally {
    await store.close();
    await clean.close();
  }
});

test('index: progress counts every unindexed item, in full batches and in a last short one', async () => {
  const store = await openStore({});
  try {
    await store.ingest(DOCS);
    for (let i = 0; i < 3; i++) await store.remember(`Service svc-${i} listens on port 80${i}0.`, { key: `svc-${i}` });
    const want = await unindexed(store);
    assert.ok(want > 4, `${want} items`);
    const progress = [];
    await store.index({ batchSize: 2, onProgress: (p) => progress.push([p.done, p.total]) });
    assert.deepEqual(progress.at(-1), [want, want]);
    assert.ok(progress.every(([, total]) => total === want), JSON.stringify(progress));
    // A run shorter than one batch: its total is that batch (no count of the namespace).
    await store.remember('Service svc-9 listens on port 8090.', { key: 'svc-9' });
    const small = [];
    await store.index({ batchSize: 2, onProgress: (p) => small.push([p.done, p.total]) });
    assert.deepEqual(small, [[1, 1]]);
    // Nothing to do: no progress at all.
    const none = [];
    const r = await store.index({ batchSize: 2, onProgress: (p) => none.push(p) });
    assert.deepEqual([r.items, none.length], [0, 0]);
  } finally {
    await store.close();
  }
});

test('entity arm: similarity, strength and rarity rank items; vague queries get no entity votes', async () => {
  const store = await openStore({});
  try {
    const docs = [];
    for (let i = 0; i < 12; i++) docs.push({ source: `page${i}.md`, text: `# Page ${i}\n\n## Section ${i}\n\nNode.js runs \`worker${i}.js\` here.\n` });
    docs.push({ source: 'tls.md', text: '# TLS\n\n## X509Certificate\n\nLoads `X509Certificate` objects.\n' });
    docs.push({ source: 'misc.md', text: '# Misc\n\n## Other\n\nSometimes a `X509Certificate` appears here too.\n' });
    await store.ingest(docs);
    await store.index();
    // The item whose heading names the entity outranks one that mentions it in passing.
    const r = await store.recall('X509Certificate', { arms: ['entity'] });
    assert.deepEqual(r.results.map((h) => h.source), ['tls.md', 'misc.md']);
    for (const q of ['what did we decide about the office party', 'how do i submit travel expenses']) {
      const v = await store.recall(q, { arms: ['entity'] });
      assert.equal(v.results.length, 0, `${q}: ${JSON.stringify(v.results.map((h) => h.source))}`);
    }
    // Two entities equally near the query: the one every page mentions (strength 1) weighs
    // less than the one a single page mentions (strength 0.5): ln(1 + 14/12) < 0.5 ln(1 + 14/1).
    const q = `[${Array.from(embed('zebra quagga')).join(',')}]`;
    const { rows: ids } = await store.db.query(`SELECT id, source FROM memloom_items ORDER BY id`);
    const { rows: ents } = await store.db.query(
      `INSERT INTO memloom_entities (namespace, name, kind, embedding) VALUES ('default', 'common', 'name', $1::vector), ('default', 'rare', 'name', $1::vector) RETURNING id, name`,
      [q],
    );
    const common = ents.find((e) => e.name === 'common').id;
    const rare = ents.find((e) => e.name === 'rare').id;
    const pages = ids.filter((r) => r.source.startsWith('page'));
    const tls = ids.find((r) => r.source === 'tls.md').id;
    for (const p of pages) await store.db.query('INSERT INTO memloom_mentions VALUES ($1, $2, 1.0)', [common, p.id]);
    await store.db.query('INSERT INTO memloom_mentions VALUES ($1, $2, 0.5)', [rare, tls]);
    const { rows: arm } = await store.db.query(`SELECT id FROM memloom_entity_arm($1::vector, 'default', 50, 0.6, NULL)`, [q]);
    assert.equal(Number(arm[0].id), Number(tls));
    assert.equal(arm.length, 13);
  } finally {
    await store.close();
  }
});

/** memloom_entity_arm's rows for vector literal v: as it runs, and as the full scan of every entity. */
async function entityArmBothWays(store, v) {
  // sql/0019, 0030, 0039, 0041: without the HNSW index the arm reads only the entities that can
  // reach the gate (memloom_entities_support: pairs of non-zero positions, memloom_gate_pairs).
  // Without that index (a store of dense vectors) it scans every entity, ties by id as well:
  // dropped inside a rolled-back transaction, it gives the reference, same store, same query
  // (a dense store has none: there both are that scan).
  const arm = `SELECT id, score FROM memloom_entity_arm($1::vector, 'default', 10, 0.6, NULL)`;
  const { rows: fast } = await store.db.query(arm, [v]);
  let full;
  const rollback = new Error('rollback');
  await store.db
    .transaction(async (tx) => {
      await tx.query('DROP INDEX IF EXISTS memloom_entities_support');
      ({ rows: full } = await tx.query(arm, [v]));
      throw rollback;
    })
    .catch((e) => {
      if (e !== rollback) throw e;
    });
  return { fast, full };
}

test('entity arm without the HNSW index: the same items as the full scan of every entity', async () => {
  const store = await openStore({});
  try {
    await store.ingest(fileURLToPath(new URL('../../tests/fixtures/nodejs', import.meta.url)));
    await store.index();
    const queries = ['punycode.toASCII', 'querystring.parse', 'encode a domain name', 'parse a URL query string', 'escape', 'ucs2 decode', 'Punycode'];
    let voted = 0;
    for (const q of queries) {
      const { fast, full } = await entityArmBothWays(store, `[${Array.from(embed(q)).join(',')}]`);
      assert.deepEqual(fast, full, q);
      if (fast.length > 0) voted++;
    }
    assert.ok(voted >= 3, `the entity arm voted on ${voted} of ${queries.length} queries`);
  } finally {
    await store.close();
  }
});

test('ANALYZE gathers nothing on the non-zero-dimension index, also after memloom_init_store re-typed its column', async () => {
  // sql/0026: gathering statistics on memloom_entities_support's expression evaluated
  // it (memloom_vector_pairs since sql/0039) for every sampled entity (most of ANALYZE
  // memloom_entities). The entity arm's rows are the full scan's either way (the test above);
  // its plan on the Node docs stays a bitmap scan of the index (docs/BENCHMARKS.md, "ANALYZE of
  // the entities").
  const store = await openStore({});
  try {
    await store.ingest(fileURLToPath(new URL('../../tests/fixtures/nodejs', import.meta.url)));
    await store.index(); // memloom_analyze_if_grown ANALYZEs the tables the run grew
    await store.db.query('ANALYZE memloom_entities');
    const { rows: stats } = await store.db.query(`SELECT count(*)::int AS n FROM pg_statistic WHERE starelid = 'memloom_entities_support'::regclass`);
    assert.equal(stats[0].n, 0);
    const { rows: analyzed } = await store.db.query(`SELECT count(*)::int AS n FROM pg_statistic WHERE starelid = 'memloom_entities'::regclass`);
    assert.ok(analyzed[0].n > 0, 'the table itself is analyzed');
  } finally {
    await store.close();
  }
});

test('a dense store (static-v2) has no non-zero-dimension index: its entity arm scans exactly, a hash-v1 store keeps it', async () => {
  // sql/0022: static and API vectors are dense, so every entity shares a dimension with every
  // query and the index (0019) would select them all; memloom_init_store drops it for them.
  const fixtures = fileURLToPath(new URL('../../tests/fixtures/nodejs', import.meta.url));
  const hash = await openStore({});
  try {
    const { rows } = await hash.db.query(`SELECT to_regclass('memloom_entities_support') IS NOT NULL AS has`);
    assert.equal(rows[0].has, true);
  } finally {
    await hash.close();
  }
  const e = staticEmbedder();
  const store = await openStore({ embedder: e });
  try {
    const { rows } = await store.db.query(`SELECT to_regclass('memloom_entities_support') IS NOT NULL AS has`);
    assert.equal(rows[0].has, false);
    await store.ingest(fixtures);
    await store.index();
    let voted = 0;
    for (const q of ['punycode.toASCII', 'querystring.parse', 'Punycode', 'ucs2 decode']) {
      const [v] = await e.embed([q]);
      const { fast, full } = await entityArmBothWays(store, `[${Array.from(v).join(',')}]`);
      assert.deepEqual(fast, full, q);
      if (fast.length > 0) voted++;
    }
    assert.ok(voted >= 2, `the entity arm voted on ${voted} of 4 queries`);
  } finally {
    await store.close();
  }
});

test('entity arm without the HNSW index: of the entities tied at the 10th place, those with the smallest ids', async () => {
  // 12 entities tied at similarity 0.95 (anchored: within 0.10 of the nearest, 1.0), read after
  // entities that share no dimension with the query: which tied ones a top-10 sort by distance
  // alone keeps depends on what it read before them. The arm orders by (distance, id), on the
  // entities that can pass the gate as on all of them (sql/0041): the exact entity and the
  // first nine tied ones, whatever the scan read first.
  const store = await openStore({});
  try {
    const vec = (pairs) => {
      const a = new Array(256).fill(0);
      for (const [i, x] of pairs) a[i] = x;
      return `[${a.join(',')}]`;
    };
    const q = vec([[0, 1]]);
    const ents = [];
    for (let k = 0; k < 10; k++) ents.push([`far ${k}`, vec([[10 + k, 1]])]);
    for (let k = 0; k < 12; k++) ents.push([`tie ${k}`, vec([[0, 0.95], [1, Math.sqrt(1 - 0.95 * 0.95)]])]);
    ents.push(['exact', q]);
    const { rows: items } = await store.db.query(
      `INSERT INTO memloom_items (namespace, kind, source, content, embedding)
       SELECT 'default', 'chunk', 'f' || g || '.md', 'text ' || g, $1::vector FROM generate_series(1, ${ents.length}) g RETURNING id`,
      [vec([[5, 1]])],
    );
    for (const [i, [name, v]] of ents.entries()) {
      const { rows } = await store.db.query(`INSERT INTO memloom_entities (namespace, name, kind, embedding) VALUES ('default', $1, 'name', $2::vector) RETURNING id`, [name, v]);
      await store.db.query('INSERT INTO memloom_mentions (entity_id, item_id, strength) VALUES ($1, $2, 1.0)', [rows[0].id, items[i].id]);
    }
    // Tie 0 to tie 4 move to the end of the heap (an update writes a new row version there): a
    // scan now reads tie 5 to tie 11 first, and a sort by distance alone keeps those.
    await store.db.query(`UPDATE memloom_entities SET kind = kind WHERE name IN ('tie 0', 'tie 1', 'tie 2', 'tie 3', 'tie 4')`);
    const { fast, full } = await entityArmBothWays(store, q);
    assert.equal(full.length, 10);
    assert.deepEqual(fast, full);
    // Entity i mentions item i: the exact one (the last) and tie 0 to tie 8.
    const want = [22, ...Array.from({ length: 9 }, (_, k) => 10 + k)].map((i) => Number(items[i].id)).sort((a, b) => a - b);
    assert.deepEqual(fast.map((r) => Number(r.id)).sort((a, b) => a - b), want);
  } finally {
    await store.close();
  }
});

// The LLM extractor --------------------------------------------------------------------------------

/** A local chat-completions server: each request is answered by the next canned behaviour. */
async function chatServer(behaviours) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const parsed = JSON.parse(body);
      requests.push({ url: req.url, auth: req.headers.authorization, body: parsed });
      const b = behaviours.length > 1 ? behaviours.shift() : behaviours[0];
      b(res, parsed);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, requests, close: () => new Promise((r) => server.close(r)) };
}

const reply = (content) => (res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
};
/** A valid reply naming, for every item, the entities `fn(text)` gives. */
const answer = (fn) => (res, body) => {
  const { items } = JSON.parse(body.messages[1].content);
  reply(JSON.stringify({ items: items.map((it) => ({ id: it.id, entities: fn(it.text) })) }))(res);
};
const status = (code, headers = {}) => (res) => {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end('{"error":{"message":"slow down"}}');
};
const hang = () => () => {};

const ITEMS = [
  { id: 1, text: 'Set `UV_THREADPOOL_SIZE` for the resize worker.', breadcrumb: 'Ops > Threads' },
  { id: 2, text: 'The Falcon team owns payments-webhook.', breadcrumb: null },
  { id: 3, text: 'ERR_REQUIRE_ESM is thrown by require().', breadcrumb: 'Errors' },
];
const named = (text) =>
  text.includes('Falcon')
    ? [{ name: 'Team Falcon', kind: 'name', aliases: ['Falcon'] }, { name: 'payments-webhook', kind: 'identifier', aliases: [] }]
    : text.includes('UV_')
      ? [{ name: 'UV_THREADPOOL_SIZE', kind: 'identifier', aliases: ['libuv threadpool size'] }]
      : [{ name: 'ERR_REQUIRE_ESM', kind: 'error_code', aliases: [] }];

test('llm extractor: request shape, batching, canonical names, aliases', async () => {
  const srv = await chatServer([answer(named)]);
  try {
    const ex = llmExtractor({ url: srv.url, apiKey: 'sk-test', model: 'tiny', batchSize: 2 });
    assert.equal(ex.id, 'llm:tiny');
    const out = await ex.extract(ITEMS);
    assert.equal(srv.requests.length, 2, 'three items in batches of two');
    const req = srv.requests[0];
    assert.equal(req.url, '/v1/chat/completions');
    assert.equal(req.auth, 'Bearer sk-test');
    assert.equal(req.body.model, 'tiny');
    assert.equal(req.body.response_format.type, 'json_schema');
    const entitySchema = req.body.response_format.json_schema.schema.properties.items.items.properties.entities.items;
    assert.deepEqual(entitySchema.required, ['name', 'kind', 'aliases']);
    // The kinds are the core's one list (EntityKind::ALL through the wasm), in the schema and the prompt.
    const kinds = entityKinds().map((k) => k.kind);
    assert.deepEqual(entitySchema.properties.kind.enum, kinds);
    assert.ok(req.body.messages[0].content.includes(`kind is one of: ${kinds.join(', ')} (`));
    assert.match(req.body.messages[1].content, /Ops > Threads\\n\\nSet `UV_THREADPOOL_SIZE`/);
    assert.deepEqual(out.map((o) => o.fallback), [false, false, false]);
    const names = out.map((o) => o.mentions.map((m) => `${m.kind}:${m.name}`).sort());
    assert.deepEqual(names[0], ['identifier:UV_THREADPOOL_SIZE', 'identifier:libuv threadpool size']);
    assert.deepEqual(names[1], ['identifier:payments-webhook', 'name:falcon', 'name:team falcon']);
    assert.deepEqual(names[2], ['error_code:ERR_REQUIRE_ESM']);
    for (const o of out) for (const m of o.mentions) assert.ok(m.strength > 0 && m.strength <= 1);
  } finally {
    await srv.close();
  }
});

test('llm extractor: malformed and wrong-schema replies fall back to the offline extractor per item', async () => {
  const offline = await offlineExtractor().extract(ITEMS);
  const cases = {
    'not JSON': [reply('{"items": [ {"id": "0", "entities": [')],
    'fenced but wrong schema': [reply('```json\n{"entities_list": []}\n```')],
    'body not JSON': [(res) => res.end('<html>oops</html>')],
    'bad entity in one item': [
      (res, body) =>
        reply(JSON.stringify({ items: [{ id: '0', entities: [{ name: 'UV_THREADPOOL_SIZE', kind: 'identifier', aliases: [] }] }, { id: '1', entities: [{ kind: 'name' }] }, { id: '2', entities: 'none' }] }))(res, body),
    ],
  };
  for (const [label, behaviours] of Object.entries(cases)) {
    const srv = await chatServer(behaviours);
    try {
      const warnings = [];
      const out = await llmExtractor({ url: srv.url, model: 'tiny', batchSize: 3 }).extract(ITEMS, { onWarning: (w) => warnings.push(w) });
      assert.ok(warnings.length > 0, label);
      if (label === 'bad entity in one item') {
        assert.deepEqual(out.map((o) => o.fallback), [false, true, true], label);
        assert.match(warnings.map((w) => w.reason).join('\n'), /item 2: entity 1 has no "name" string/);
      } else {
        assert.deepEqual(out.map((o) => o.fallback), [true, true, true], label);
        assert.match(warnings[0].reason, /fall back to the offline extractor/, label);
      }
      for (const [i, o] of out.entries()) if (o.fallback) assert.deepEqual(o.mentions, offline[i].mentions, label);
    } finally {
      await srv.close();
    }
  }
});

test('llm extractor: 429 then success is retried; a timeout falls back; a refused key stops', async () => {
  let srv = await chatServer([status(429, { 'retry-after': '0' }), status(503), answer(named)]);
  try {
    const out = await llmExtractor({ url: srv.url, model: 'tiny', batchSize: 8, backoffMs: 5 }).extract(ITEMS);
    assert.equal(srv.requests.length, 3);
    assert.deepEqual(out.map((o) => o.fallback), [false, false, false]);
  } finally {
    await srv.close();
  }
  srv = await chatServer([hang()]);
  try {
    const warnings = [];
    const started = Date.now();
    const out = await llmExtractor({ url: srv.url, model: 'tiny', timeoutMs: 150, maxRetries: 1, backoffMs: 5 }).extract(ITEMS, {
      onWarning: (w) => warnings.push(w),
    });
    assert.ok(Date.now() - started < 5000);
    assert.equal(srv.requests.length, 2);
    assert.deepEqual(out.map((o) => o.fallback), [true, true, true]);
    assert.match(warnings[0].reason, /did not answer within 150 ms \(gave up after 2 attempts\)/);
  } finally {
    srv.close();
  }
  srv = await chatServer([status(401)]);
  try {
    await assert.rejects(llmExtractor({ url: srv.url, model: 'tiny' }).extract(ITEMS), /refused the key \(401\); set MEMLOOM_EXTRACT_KEY/);
  } finally {
    await srv.close();
  }
  assert.equal(extractorFromEnv({}).id, 'offline');
  assert.equal(extractorFromEnv({ MEMLOOM_EXTRACT_URL: 'http://127.0.0.1:9/v1', MEMLOOM_EXTRACT_MODEL: 'm' }).id, 'llm:m');
  assert.throws(() => extractorFromEnv({ MEMLOOM_EXTRACT_URL: 'http://127.0.0.1:9/v1' }), /needs url and model/);
});

test('llm extractor: up to `concurrency` requests at once, results and warnings in item order', async () => {
  // One item per request; the replies come back out of order, and one of them is malformed.
  let inFlight = 0;
  let most = 0;
  const behaviour = (res, body) => {
    const { items } = JSON.parse(body.messages[1].content);
    const text = items[0].text;
    inFlight++;
    most = Math.max(most, inFlight);
    const n = Number(/item (\d+)/.exec(text)[1]);
    setTimeout(() => {
      inFlight--;
      if (n === 4) return reply('{"items": [')(res);
      reply(JSON.stringify({ items: [{ id: '0', entities: [{ name: `thing_${n}`, kind: 'identifier', aliases: [] }] }] }))(res);
    }, 5 + ((n * 7) % 11));
  };
  const srv = await chatServer([behaviour]);
  try {
    const items = Array.from({ length: 9 }, (_, i) => ({ id: 100 + i, text: `Note about item ${i}.`, breadcrumb: null }));
    const warnings = [];
    const out = await llmExtractor({ url: srv.url, model: 'tiny', batchSize: 1, concurrency: 3 }).extract(items, { onWarning: (w) => warnings.push(w.items) });
    assert.equal(most, 3);
    assert.deepEqual(out.map((o) => o.fallback), items.map((_, i) => i === 4));
    assert.deepEqual(out.map((o, i) => (i === 4 ? null : o.mentions.map((m) => m.name))), items.map((_, i) => (i === 4 ? null : [`thing_${i}`])));
    assert.deepEqual(warnings, [[104]]);
  } finally {
    await srv.close();
  }
  assert.throws(() => llmExtractor({ url: srv.url, model: 'tiny', concurrency: 1.5 }), /concurrency .* not 1\.5; set MEMLOOM_EXTRACT_CONCURRENCY/);
});

test('cli: ingest --index with the LLM extractor configured, progress and fallbacks on stderr', async () => {
  const docs = join(tmp, 'docs');
  mkdirSync(docs);
  for (let i = 0; i < 3; i++) writeFileSync(join(docs, `n${i}.md`), `# Note ${i}\n\nThe Falcon team owns payments-webhook-${i}.\n`);
  // First request malformed (its items fall back), later ones answered.
  const srv = await chatServer([reply('not json at all'), answer(named)]);
  const store = join(tmp, 'cli-store');
  const env = { MEMLOOM_EXTRACT_URL: srv.url, MEMLOOM_EXTRACT_MODEL: 'tiny', MEMLOOM_EXTRACT_BATCH: '2' };
  try {
    let r = await runCli(['init', '--store', store], { async: true });
    assert.equal(r.status, 0, r.stderr);
    r = await runCli(['ingest', docs, '--index', '--json', '--store', store], { env, async: true });
    assert.equal(r.status, 0, r.stderr);
    const rep = JSON.parse(r.stdout);
    assert.equal(rep.index.items, 3);
    assert.equal(rep.index.fallbacks, 2);
    assert.match(r.stderr, /warning: LLM reply is not valid JSON .*2 item\(s\) fall back to the offline extractor/);
    assert.match(r.stderr, /indexed 3 items: \d+ entities \(\d+ new\), \d+ mentions in [\d.]+ s \(\d+ items\/s, llm:tiny extractor\); 2 items fell back/);
    r = await runCli(['recall', 'Team Falcon', '--arms', 'entity', '--json', '--store', store], { async: true });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).results[0]?.source, 'n2.md');
    // Nothing left: a re-run indexes nothing; --all --offline re-indexes without the model.
    const before = srv.requests.length;
    r = await runCli(['index', '--all', '--offline', '--json', '--store', store], { env: { ...env, MEMLOOM_PROGRESS_MS: '1' }, async: true });
    assert.equal(r.status, 0, r.stderr);
    const all = JSON.parse(r.stdout);
    assert.equal(all.items, 3);
    assert.ok(all.entities > 0, JSON.stringify(all));
    assert.match(r.stderr, new RegExp(`indexed 3 items: ${all.entities} entities \\(${all.newEntities} new\\)`));
    assert.equal(srv.requests.length, before);
    assert.match(r.stderr, /offline extractor/);
  } finally {
    await srv.close();
  }
});

test('entity kinds: one list, the core\'s; the public EntityKind type and the embedding text follow it', async () => {
  const kinds = entityKinds();
  assert.deepEqual(kinds.map((k) => k.kind), ['identifier', 'error_code', 'file', 'flag', 'ticket', 'host', 'version', 'code', 'name', 'topic']);
  assert.equal(kinds.find((k) => k.kind === 'error_code').words, 'error code');
  // The type declaration (types/src/types.d.ts, generated from src/types.js by tsc) names the same kinds.
  const { readFileSync } = await import('node:fs');
  const dts = readFileSync(new URL('../types/src/types.d.ts', import.meta.url), 'utf8');
  const union = /export type EntityKind = ([^;]+);/.exec(dts)?.[1];
  assert.ok(union, 'EntityKind in types/src/types.d.ts');
  assert.deepEqual(union.split('|').map((s) => s.trim().replace(/^'|'$/g, '')), kinds.map((k) => k.kind), 'edit EntityKind in src/types.js to the core\'s kinds');
  const api = { name: 'api:m' };
  assert.equal(entityEmbeddingText('ERR_REQUIRE_ESM', 'error_code', api), 'ERR_REQUIRE_ESM (error code)');
  assert.equal(entityEmbeddingText('fs.readFile', 'identifier', api), 'fs.readFile (identifier)');
  assert.equal(entityEmbeddingText('ERR_REQUIRE_ESM', 'error_code', { name: 'hash' }), 'ERR_REQUIRE_ESM');
});
