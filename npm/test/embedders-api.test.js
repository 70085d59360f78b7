// The API embedder's door in the npm package: apiEmbedder / embedderFromEnv reach memloom-core's
// rules (embed/api.rs, embed/choose.rs: tested there, shared with the edge worker) and do the HTTP
// here. A fetch stand-in answers, so nothing leaves the process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiEmbedder, embedderFromEnv, MemloomError } from '../src/entry-node.js';

/** A fetch that records each call and answers with `answer(request body)`. */
function fakeFetch(answer) {
  const calls = [];
  const fetch = async (url, init) => {
    const body = JSON.parse(init.body);
    calls.push({ url, body, auth: init.headers.authorization });
    const { status = 200, json, text } = answer(body);
    return new Response(text ?? JSON.stringify(json), { status, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, calls };
}

const unit = (dims, i) => Array.from({ length: dims }, (_, j) => (j === i % dims ? 1 : 0));

test('settings are checked when the embedder is made, as MemloomErrors that say what to set', () => {
  const make = (o) => () => apiEmbedder({ url: 'https://api.example.com/v1', model: 'm', dims: 8, ...o });
  const refused = (o, re) => assert.throws(make(o), (e) => e instanceof MemloomError && re.test(e.message), JSON.stringify(o));
  refused({ model: undefined }, /^the embeddings API needs url, model and dims .*; set MEMLOOM_EMBED_MODEL/);
  refused({ url: '' }, /set MEMLOOM_EMBED_URL/);
  refused({ dims: 1.5 }, /dims must be a whole number from 1 to 16000, not 1\.5/);
  refused({ dims: 16001 }, /from 1 to 16000, not 16001/);
  refused({ dims: 0 }, /not 0/);
  refused({ dims: '8' }, /embedding dims must be a number, not "8"/);
  refused({ url: 'api.example.com/v1' }, /must start with http:\/\/ or https:\/\//);
  const e = apiEmbedder({ url: 'https://api.example.com/v1', model: 'text-embedding-3-small', dims: 1536 });
  assert.deepEqual([e.id, e.name, e.version, e.dims], ['api:text-embedding-3-small-v1', 'api:text-embedding-3-small', 1, 1536]);
});

test('a batch goes to the endpoint as one request and comes back in input order', async () => {
  const { fetch, calls } = fakeFetch(({ input, dimensions }) => ({
    // Answered in reverse: the index decides where each vector goes.
    json: { data: input.map((_, index) => ({ index, embedding: unit(dimensions, index) })).reverse() },
  }));
  for (const [url, endpoint] of [
    ['http://127.0.0.1:9/v1', 'http://127.0.0.1:9/v1/embeddings'],
    ['http://127.0.0.1:9/v1/embeddings/', 'http://127.0.0.1:9/v1/embeddings'],
  ]) {
    const e = apiEmbedder({ url, model: 'm', dims: 4, apiKey: 'sk-x', fetch, batchSize: 2 });
    const vectors = await e.embed(['a', 'b', 'c']);
    assert.deepEqual(vectors.map((v) => [...v]), [unit(4, 0), unit(4, 1), unit(4, 0)]);
    assert.ok(vectors.every((v) => v instanceof Float32Array));
    assert.deepEqual(calls.splice(0).map((c) => [c.url, c.auth, c.body]), [
      [endpoint, 'Bearer sk-x', { model: 'm', input: ['a', 'b'], dimensions: 4, encoding_format: 'float' }],
      [endpoint, 'Bearer sk-x', { model: 'm', input: ['c'], dimensions: 4, encoding_format: 'float' }],
    ]);
  }
});

test('answers that do not fit are refused saying what to fix', async () => {
  const cases = [
    [{ json: { data: [{ index: 0, embedding: unit(3, 0) }] } }, /returned 3 dimensions, expected 4; set MEMLOOM_EMBED_DIMS to the model's size/],
    [{ json: { data: [] } }, /returned no embeddings for 1 inputs/],
    [{ json: { data: [{ index: 5, embedding: unit(4, 0) }] } }, /returned index 5 for 1 inputs/],
    [{ text: '<html>busy</html>' }, /did not answer an embeddings response/],
  ];
  for (const [answer, re] of cases) {
    const { fetch } = fakeFetch(() => answer);
    const e = apiEmbedder({ url: 'http://127.0.0.1:9/v1', model: 'm', dims: 4, fetch, maxRetries: 0 });
    await assert.rejects(e.embed(['x']), (err) => err instanceof MemloomError && re.test(err.message), String(re));
  }
});

test('MEMLOOM_EMBED_URL selects the API embedder by the same rule as the worker', () => {
  const env = { MEMLOOM_EMBED_URL: 'http://127.0.0.1:9/v1', MEMLOOM_EMBED_MODEL: 'm', MEMLOOM_EMBED_DIMS: '8' };
  assert.equal(embedderFromEnv(env).id, 'api:m-v1');
  assert.throws(() => embedderFromEnv({ ...env, MEMLOOM_EMBED_MODEL: '' }), /set MEMLOOM_EMBED_MODEL/);
  assert.throws(() => embedderFromEnv({ ...env, MEMLOOM_EMBED_DIMS: '20000' }), /from 1 to 16000/);
});

test('requests run up to `concurrency` at once, the vectors in input order; a failure stops new requests and is raised once none is in flight', async () => {
  // Each request answers after a delay that does not follow its order.
  let inFlight = 0;
  let most = 0;
  const started = [];
  const fetch = async (url, init) => {
    const { input, dimensions } = JSON.parse(init.body);
    started.push(input[0]);
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise((r) => setTimeout(r, 5 + ((Number(input[0]) * 7) % 11)));
    inFlight--;
    if (input[0] === 'fail') return new Response('{"error":"bad model"}', { status: 400 });
    const data = input.map((t, index) => ({ index, embedding: unit(dimensions, Number(t)) }));
    return new Response(JSON.stringify({ data }), { status: 200 });
  };
  const texts = Array.from({ length: 20 }, (_, i) => String(i));
  for (const [concurrency, expected] of [[1, 1], [3, 3], [undefined, 4]]) {
    most = 0;
    const e = apiEmbedder({ url: 'http://127.0.0.1:9/v1', model: 'm', dims: 32, fetch, batchSize: 2, ...(concurrency ? { concurrency } : {}) });
    const vectors = await e.embed(texts);
    assert.deepEqual(vectors.map((v) => [...v]), texts.map((t) => unit(32, Number(t))));
    assert.equal(most, expected);
  }
  // The fourth request fails (400, not retried): the requests after it never start, and none is
  // in flight when the error comes.
  started.length = 0;
  const e = apiEmbedder({ url: 'http://127.0.0.1:9/v1', model: 'm', dims: 32, fetch, batchSize: 1, concurrency: 2 });
  const input = ['0', '1', '2', 'fail', '4', '5', '6', '7', '8', '9'];
  await assert.rejects(e.embed(input), (err) => err instanceof MemloomError && /answered 400/.test(err.message) && inFlight === 0);
  assert.ok(started.length <= 5, `started ${started.join(',')}`);
  assert.throws(() => apiEmbedder({ url: 'http://127.0.0.1:9/v1', model: 'm', dims: 8, concurrency: 0 }), /concurrency .* not 0; set MEMLOOM_EMBED_CONCURRENCY/);
});
