// A request body trickled slowly is refused after a bounded time (issue 15: a body trickled
// over 5.6 s was accepted): 408 body_timeout with a JSON error once api::BODY_TIMEOUT_MS
// (5 s, crates/edge-worker/src/api.rs) have passed, on /v1/recall, /v1/memories and /mcp; the
// same body sent in pieces within the deadline is answered as usual. Run by
// scripts/test-worker.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';

const { WORKER_URL, TOKEN_A } = process.env;
if (!WORKER_URL || !TOKEN_A) throw new Error('run through scripts/test-worker.sh');

const DEADLINE_MS = 5_000; // api::BODY_TIMEOUT_MS

/** POSTs `json` in `pieces` pieces, `gapMs` apart, no Content-Length (chunked). */
async function trickle(route, json, { pieces, gapMs }) {
  const bytes = new TextEncoder().encode(json);
  const size = Math.ceil(bytes.length / pieces);
  let sent = 0;
  let stop = false;
  const body = new ReadableStream({
    async pull(c) {
      if (stop || sent >= bytes.length) return c.close();
      if (sent > 0) await new Promise((r) => setTimeout(r, gapMs));
      if (stop) return c.close();
      c.enqueue(bytes.slice(sent, sent + size));
      sent += size;
    },
  });
  const started = Date.now();
  const res = await fetch(`${WORKER_URL}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
    duplex: 'half',
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  stop = true;
  return { status: res.status, text, ms: Date.now() - started };
}

const BODIES = {
  '/v1/recall': JSON.stringify({ query: 'how do we rotate the payments key', limit: 3 }),
  '/v1/memories': JSON.stringify({ key: 'body-deadline', text: 'A memory sent in slow pieces' }),
  '/mcp': JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall', arguments: { query: 'payments key' } } }),
};

test('a body trickled past the deadline gets 408 body_timeout, soon after the deadline', { timeout: 180_000 }, async () => {
  for (const [route, json] of Object.entries(BODIES)) {
    // 16 pieces 1 s apart: 15 s to send the whole body. The answer must come well before the
    // end (the deadline counts from the worker's first read, so allow for a loaded machine).
    const r = await trickle(route, json, { pieces: 16, gapMs: 1_000 });
    assert.equal(r.status, 408, `${route}: ${r.status} ${r.text}`);
    const err = JSON.parse(r.text).error;
    assert.equal(err.code, 'body_timeout', r.text);
    assert.match(err.message, /did not arrive within 5000 ms; send the whole body at once/);
    assert.ok(r.ms >= DEADLINE_MS - 200 && r.ms < DEADLINE_MS + 6_000, `${route}: answered after ${r.ms} ms`);
    process.stderr.write(`body-deadline: ${route} trickled over 15 s: 408 after ${r.ms} ms\n`);
  }
});

test('a body sent in pieces within the deadline is answered as usual', { timeout: 60_000 }, async () => {
  const expected = { '/v1/recall': 200, '/v1/memories': 201, '/mcp': 200 };
  for (const [route, json] of Object.entries(BODIES)) {
    // 5 pieces 300 ms apart: 1.2 s.
    const r = await trickle(route, json, { pieces: 5, gapMs: 300 });
    assert.equal(r.status, expected[route], `${route}: ${r.status} ${r.text}`);
    if (route === '/mcp') assert.notEqual(JSON.parse(r.text).result.isError, true, r.text);
  }
});
