// Time (docs/TIME.md) on the embedded store: validity intervals in history, recall as of an
// instant (asOf) through the one memloom_fuse call, event time (at) and since / until, and the
// CLI's --as-of / --at / --since / --until / remember --file `at`; bad instants are clear errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, MemloomError } from '../src/entry-node.js';
import { toInstant } from '../src/store/input.js';
import { runCli } from './helpers.js';

let tmp, store;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-time-'));
  store = await openStore({ dir: join(tmp, 'store') });
});
after(async () => {
  await store?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const keyed = (res, key) => res.results.filter((r) => r.key === key).map((r) => r.content);

test('history shows each version\'s interval, and asOf recalls the version valid then', async () => {
  const texts = ['Deploys freeze on Fridays.', 'Deploys freeze on Thursdays.', 'Deploys freeze on Wednesdays.'];
  for (const t of texts) {
    await store.remember(t, { key: 'deploy-freeze' });
    await sleep(5);
  }
  const h = await store.history('deploy-freeze');
  assert.deepEqual(h.map((v) => v.status), ['superseded', 'superseded', 'active']);
  assert.equal(h[0].validTo, h[1].validFrom, 'closed at the successor\'s valid_from');
  assert.equal(h[1].validTo, h[2].validFrom);
  assert.equal(h[2].validTo, null);
  assert.ok(h[0].validFrom < h[1].validFrom && h[1].validFrom < h[2].validFrom, JSON.stringify(h));
  for (const [i, v] of h.entries()) {
    // At the instant it became the belief (a string, and the same as a Date).
    assert.deepEqual(keyed(await store.recall('deploys freeze', { asOf: v.validFrom }), 'deploy-freeze'), [texts[i]]);
    assert.deepEqual(keyed(await store.recall('deploys freeze', { asOf: new Date(v.validFrom) }), 'deploy-freeze'), [texts[i]]);
    // One millisecond before it, the previous version (or nothing).
    const before = new Date(Date.parse(v.validFrom) - 1);
    assert.deepEqual(keyed(await store.recall('deploys freeze', { asOf: before }), 'deploy-freeze'), i === 0 ? [] : [texts[i - 1]]);
  }
  // Now: only the active version, with or without asOf.
  assert.deepEqual(keyed(await store.recall('deploys freeze'), 'deploy-freeze'), [texts[2]]);
  assert.deepEqual(keyed(await store.recall('deploys freeze', { asOf: new Date() }), 'deploy-freeze'), [texts[2]]);
});

test('event time: remember at, recall since / until (inclusive; a date as until is its whole day)', async () => {
  await store.remember('The storage outage hit the eu region.', { key: 'outage-eu', at: '2023-05-08T14:00Z' });
  await store.remember('The storage outage hit the us region.', { key: 'outage-us', at: new Date('2023-06-20T09:30:00Z') });
  await store.remember('The storage outage hit the ap region.', { key: 'outage-ap' });
  const keys = async (opts) => (await store.recall('storage outage region', { limit: 20, ...opts })).results.map((r) => r.key).filter((k) => k?.startsWith('outage-')).sort();
  assert.deepEqual(await keys({}), ['outage-ap', 'outage-eu', 'outage-us']);
  assert.deepEqual(await keys({ since: '2023-05-01', until: '2023-05-31' }), ['outage-eu']);
  assert.deepEqual(await keys({ since: '2023-05-08', until: '2023-05-08' }), ['outage-eu'], 'until a date includes the day');
  assert.deepEqual(await keys({ until: '2023-12-31' }), ['outage-eu', 'outage-us']);
  assert.deepEqual(await keys({ since: '2024-01-01' }), ['outage-ap'], 'no event time: when it was saved');
  const [eu] = await store.history('outage-eu');
  assert.equal(eu.eventAt, '2023-05-08T14:00:00.000Z');
  assert.equal((await store.history('outage-ap'))[0].eventAt, null);
});

test('bad instants and an empty range are MemloomErrors that say what to pass', async () => {
  for (const [opts, re] of [
    [{ asOf: 'yesterday' }, /asOf must be a Date or an ISO 8601 date or time/],
    [{ asOf: '2023-02-30' }, /asOf is not a valid date or time/],
    [{ asOf: '2026-03-01T24:00Z' }, /asOf is not a valid date or time/],
    [{ asOf: 42 }, /asOf must be a Date/],
    [{ since: new Date('nope') }, /since is not a valid date or time/],
    [{ since: '2023-06-01', until: '2023-05-01' }, /since \(2023-06-01T00:00:00.000Z\) is after until/],
  ]) {
    await assert.rejects(store.recall('outage', opts), (e) => e instanceof MemloomError && re.test(e.message), JSON.stringify(opts));
  }
  await assert.rejects(store.remember('x', { at: 'last week' }), /at \(event time\) must be a Date or an ISO 8601/);
});

// The rule is memloom-core's (instant.rs, tested there, the worker's too); this is npm's door:
// the forms the regex and Date once read differently now read as the core reads them.
test('toInstant: strings by the core rule, Dates as their instant, the core\'s error texts', () => {
  for (const [v, opts, want] of [
    ['2026-03-01T12:00+02', {}, '2026-03-01T10:00:00.000Z'],
    ['2026-03-01t12:00z', {}, '2026-03-01T12:00:00.000Z'],
    [' 2026-03-01 12:00:05.1239 ', {}, '2026-03-01T12:00:05.123Z'],
    ['2023-05-08', { endOfDay: true }, '2023-05-08T23:59:59.999Z'],
    ['1969-12-31T23:59:59.999Z', {}, '1969-12-31T23:59:59.999Z'],
    [new Date('2023-06-20T09:30:00Z'), { endOfDay: true }, '2023-06-20T09:30:00.000Z'],
  ]) {
    assert.equal(toInstant(v, 'asOf', opts), want, String(v));
  }
  assert.equal(toInstant(undefined, 'asOf'), null);
  for (const [v, msg] of [
    ['0000-01-01', 'asOf is not a valid date or time: "0000-01-01" (years 0001 to 9999 in UTC)'],
    ['2026-03-01T12:00+25:00', 'asOf is not a valid date or time: "2026-03-01T12:00+25:00" (offsets run to ±23:59)'],
    ['2026-03-01T23:59:60Z', 'asOf is not a valid date or time: "2026-03-01T23:59:60Z" (times run from 00:00:00 to 23:59:59)'],
    [new Date('nope'), 'asOf is not a valid date or time: "Invalid Date"'],
    [new Date(Date.UTC(10000, 0, 1)), 'asOf is not a valid date or time: "+010000-01-01T00:00:00.000Z" (years 0001 to 9999 in UTC)'],
    [{ at: 1 }, 'asOf must be a Date or an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00Z, not {"at":1}'],
    ['x'.repeat(50), `asOf must be a Date or an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00Z, not "${'x'.repeat(40)}..."`],
  ]) {
    assert.throws(() => toInstant(v, 'asOf'), (e) => e instanceof MemloomError && (typeof msg === 'string' ? e.message === msg : msg.test(e.message)), String(v));
  }
});

test('CLI: remember --at, remember --file with at, recall --as-of / --since / --until, history text and --json', () => {
  const s = join(tmp, 'cli-store');
  const cli = (args) => runCli([...args, '--store', s]);
  assert.equal(cli(['init']).status, 0);
  let r = cli(['remember', 'The standup is at nine.', '--key', 'standup', '--at', '2023-05-08']);
  assert.equal(r.status, 0, r.stderr);
  const file = join(tmp, 'memories.jsonl');
  writeFileSync(
    file,
    [
      { key: 'trip', seq: 1, text: 'The team trip is in Lisbon.', at: '2023-06-02T10:00Z' },
      { key: 'trip', seq: 2, text: 'The team trip moved to Porto.', at: '2023-07-15' },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n') + '\n',
  );
  r = cli(['remember', '--file', file]);
  assert.equal(r.status, 0, r.stderr);
  r = cli(['history', 'trip', '--json']);
  const h = JSON.parse(r.stdout);
  assert.deepEqual(h.map((v) => v.eventAt), ['2023-06-02T10:00:00.000Z', '2023-07-15T00:00:00.000Z']);
  assert.equal(h[0].validTo, h[1].validFrom);
  r = cli(['history', 'trip']);
  assert.match(r.stdout, /^v1 {2}superseded {2}\S+Z \.\. \S+Z {2}event 2023-06-02T10:00:00.000Z {2}The team trip is in Lisbon\.$/m);
  assert.match(r.stdout, /^v2 {2}active {6}\S+Z \.\. now\s+event 2023-07-15T00:00:00.000Z {2}The team trip moved to Porto\.$/m);
  const recallKeys = (args) => {
    const out = cli(['recall', 'team trip standup', '--json', ...args]);
    assert.equal(out.status, 0, out.stderr);
    return JSON.parse(out.stdout).results.map((x) => x.content);
  };
  assert.deepEqual(recallKeys(['--as-of', h[0].validFrom]).filter((c) => c.includes('trip')), ['The team trip is in Lisbon.']);
  assert.deepEqual(recallKeys(['--since', '2023-05-01', '--until', '2023-05-31']), ['The standup is at nine.']);
  r = cli(['recall', 'trip', '--as-of', 'soon']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--as-of must be a Date or an ISO 8601 date or time such as 2026-03-01/);
  writeFileSync(file, JSON.stringify({ key: 'k', text: 't', at: 'May 8' }) + '\n');
  r = cli(['remember', '--file', file]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /memories\.jsonl:1: "at" must be a Date or an ISO 8601/);
});
