// Time through the edge worker (docs/TIME.md): POST /v1/memories with `at`, a superseding
// version, the MCP history's intervals, POST /v1/recall with `asOf` (the version valid then)
// and `since` / `until`, and bad instants as 400 invalid_time. Run by scripts/test-worker.sh
// with WORKER_URL, TOKEN_A (namespace team-a).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '../../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StreamableHTTPClientTransport } from '../../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';

const { WORKER_URL, TOKEN_A } = process.env;
if (!WORKER_URL || !TOKEN_A) throw new Error('run through scripts/test-worker.sh (WORKER_URL, TOKEN_A)');

const call = (path, body) =>
  fetch(new URL(path, WORKER_URL), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });

const clients = [];
after(async () => {
  for (const c of clients) await c.close();
});

test('worker: at, asOf, since / until and the history intervals', async () => {
  const key = `time-${process.pid}`;
  const word = `zqtime${process.pid}x`;
  let r = await call('/v1/memories', { text: `${word} the standup is at nine`, key, at: '2023-05-08' });
  assert.equal(r.status, 201, await r.clone().text());
  await new Promise((res) => setTimeout(res, 20));
  r = await call('/v1/memories', { text: `${word} the standup moved to ten`, key, at: '2023-06-20T09:00Z' });
  assert.equal(r.status, 201);

  const client = new Client({ name: 'memloom-worker-time', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', WORKER_URL), { requestInit: { headers: { Authorization: `Bearer ${TOKEN_A}` } } }));
  clients.push(client);
  const hist = await client.callTool({ name: 'history', arguments: { key } });
  assert.ok(!hist.isError);
  const [v1, v2] = hist.structuredContent.versions;
  assert.equal(v1.validTo, v2.validFrom);
  assert.equal(v2.validTo, null);
  assert.equal(v1.eventAt, '2023-05-08T00:00:00.000Z');
  assert.match(hist.content[0].text, /v1 \(id \d+, superseded, held \S+Z \.\. \S+Z, event 2023-05-08T00:00:00\.000Z\)/);

  const contents = async (body) => {
    const res = await call('/v1/recall', { query: word, kinds: ['memory'], ...body });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()).results.filter((x) => x.key === key).map((x) => x.content);
  };
  assert.deepEqual(await contents({}), [`${word} the standup moved to ten`]);
  assert.deepEqual(await contents({ asOf: v1.validFrom }), [`${word} the standup is at nine`]);
  assert.deepEqual(await contents({ asOf: v2.validFrom }), [`${word} the standup moved to ten`]);
  assert.deepEqual(await contents({ since: '2023-06-01', until: '2023-06-30' }), [`${word} the standup moved to ten`]);
  assert.deepEqual(await contents({ until: '2023-05-31' }), [], 'the May version is superseded');
  const mcp = await client.callTool({ name: 'recall', arguments: { query: word, kinds: ['memory'], asOf: v1.validFrom } });
  assert.deepEqual(mcp.structuredContent.results.filter((x) => x.key === key).map((x) => x.content), [`${word} the standup is at nine`]);

  for (const body of [{ asOf: 'yesterday' }, { since: '2023-06-01', until: '2023-05-01' }]) {
    const res = await call('/v1/recall', { query: word, ...body });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, 'invalid_time');
  }
  const bad = await call('/v1/memories', { text: 'x', at: 'May 8' });
  assert.equal(bad.status, 400);
});
