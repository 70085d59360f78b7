// Bad input end to end through the CLI and the npm API, on an embedded store that already holds
// data: empty, huge (100 MB), binary, invalid UTF-8, late NUL bytes, deeply nested markdown, a
// 10 MB single line, recall queries made of SQL and tsquery metacharacters, Unicode edge cases
// (NUL, lone surrogates, RTL, combining marks, emoji). Each gets a clear error or is handled:
// exit 0 or 2 with a message, never an "unexpected error", a crash or a hang, and nothing stored
// before is lost (counts before and after). Big files are generated here, in a temp directory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/entry-node.js';
import { runCli, fixtures } from './helpers.js';

let tmp, store;
const cli = (args, opts) => runCli([...args, '--store', store], opts);
/** Every input tried, for the figure in docs/RELIABILITY.md. */
let tried = 0;

function stats() {
  const r = cli(['stats', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  return { chunks: s.chunks, files: s.files, memories: s.memories.active + s.memories.superseded };
}

/** The CLI handled it: no crash report, and exit 0 or 2 as expected. */
function handled(r, status, what) {
  assert.doesNotMatch(r.stderr, /unexpected error|please report|RuntimeError|panicked/, `${what}: ${r.stderr}`);
  assert.equal(r.status, status, `${what}: exit ${r.status}\n${r.stderr}`);
  tried++;
}

let baseline;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-bad-'));
  store = join(tmp, 'store');
  assert.equal(cli(['init']).status, 0);
  assert.equal(cli(['ingest', join(fixtures, 'docs')]).status, 0);
  assert.equal(cli(['remember', 'Deploys freeze on Fridays', '--key', 'deploy-freeze']).status, 0);
  assert.equal(cli(['remember', 'Deploys freeze on Thursdays now', '--key', 'deploy-freeze']).status, 0);
  baseline = stats();
  assert.ok(baseline.chunks > 0 && baseline.memories === 2);
});

after(() => {
  rmSync(tmp, { recursive: true, force: true });
  process.stderr.write(`bad-input: ${tried} bad inputs tried\n`);
});

test('bad files: skipped with a reason or chunked; nothing stored before is lost', () => {
  const dir = join(tmp, 'bad');
  mkdirSync(dir);
  writeFileSync(join(dir, 'empty.md'), '');
  writeFileSync(join(dir, 'blank.txt'), '\n\n   \n\t\n');
  writeFileSync(join(dir, 'random.bin'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)));
  writeFileSync(join(dir, 'invalid-utf8.md'), Buffer.concat([Buffer.from('# Title\n\nok then '), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from(' more\n')]));
  writeFileSync(join(dir, 'lone-surrogate.md'), Buffer.from([0x23, 0x20, 0xed, 0xa0, 0x80, 0x0a])); // CESU-8 U+D800
  // A NUL byte after the first 8 KB: PostgreSQL text cannot hold it (once failed the whole run).
  writeFileSync(join(dir, 'late-nul.md'), '# Notes\n\n' + 'word '.repeat(3000) + '\0 tail\n');
  writeFileSync(join(dir, 'nested-quotes.md'), '> '.repeat(10_000) + 'deep quote\n');
  // Indented forms grow quadratically: 1,500 levels keep them under the 10 MB cap.
  writeFileSync(join(dir, 'nested-quote-lines.md'), Array.from({ length: 1_500 }, (_, i) => '>'.repeat(i + 1) + ' q' + i).join('\n'));
  writeFileSync(join(dir, 'nested-lists.md'), Array.from({ length: 1_500 }, (_, i) => '  '.repeat(i) + '- item' + i).join('\n'));
  writeFileSync(join(dir, 'nested-list-markers.md'), '- '.repeat(10_000) + 'deep item\n');
  writeFileSync(join(dir, 'brackets.md'), '['.repeat(50_000) + 'x' + ']'.repeat(50_000) + '\n\n' + '*a **b '.repeat(20_000));
  writeFileSync(join(dir, 'html.md'), '<div>'.repeat(10_000) + 'inside' + '</div>'.repeat(10_000) + '\n<!-- ' + '-'.repeat(10_000));
  writeFileSync(join(dir, 'headings.md'), Array.from({ length: 5_000 }, (_, i) => '#'.repeat((i % 6) + 1) + ' h' + i + '\n\ntext ' + i).join('\n\n'));
  writeFileSync(join(dir, 'fence.md'), '```\n' + 'code line\n'.repeat(50_000)); // never closed
  writeFileSync(join(dir, 'unicode.md'), '# שלום עולם\n\nمرحبا بالعالم \u202Eevil\u202C e\u0301\u0301\u0301 Z\u0351\u0352\u0353 🧠🔥👩‍👩‍👧 \uFEFF\u200B\u3000全角\n');
  writeFileSync(join(dir, 'crlf-only.txt'), '\r\n'.repeat(10_000));
  const files = 16;

  const r = cli(['ingest', dir, '--json', '--index']);
  handled(r, 0, 'ingest of bad files');
  const report = JSON.parse(r.stdout);
  assert.equal(report.files + report.skipped, files, r.stderr);
  assert.match(r.stderr, /skipped .*random\.bin: binary/);
  assert.match(r.stderr, /skipped .*invalid-utf8\.md: not valid UTF-8/);
  assert.match(r.stderr, /skipped .*lone-surrogate\.md: not valid UTF-8/);
  assert.match(r.stderr, /skipped .*late-nul\.md: binary \(contains NUL bytes\)/);
  tried += files - 1;
  const s = stats();
  assert.ok(s.chunks > baseline.chunks, 'the nested files were chunked');
  assert.equal(s.memories, baseline.memories);
  // The deep content is searchable.
  const q = cli(['recall', 'deep quote', '--json', '--limit', '3']);
  handled(q, 0, 'recall after bad files');
  assert.ok(JSON.parse(q.stdout).results.some((x) => x.content.includes('deep quote')));
  // Re-ingest: nothing changes, nothing lost.
  const again = JSON.parse(cli(['ingest', dir, '--json']).stdout);
  assert.equal(again.chunks, 0);
  assert.deepEqual(stats(), s);
});

test('a 100 MB file is skipped without reading it, a 10 MB single line is chunked', { timeout: 300_000 }, () => {
  const dir = join(tmp, 'big');
  mkdirSync(dir);
  const fd = openSync(join(dir, 'huge.md'), 'w');
  const block = Buffer.from('# Section\n\n' + 'lorem ipsum dolor sit amet '.repeat(2_000) + '\n\n');
  for (let n = 0; n < 100 * 1024 * 1024; n += block.length) writeSync(fd, block);
  closeSync(fd);
  const words = ['alpha', 'max_connections', 'pg_hba.conf', 'ERR_REQUIRE_ESM', 'zeta', 'omega'];
  const line = Array.from({ length: 1_500_000 }, (_, i) => words[(i * 31) % words.length]).join(' ').slice(0, 10 * 1024 * 1024 - 2);
  writeFileSync(join(dir, 'one-line.txt'), line + '\n');
  const before = stats();

  const started = Date.now();
  const r = cli(['ingest', dir, '--json']);
  handled(r, 0, 'ingest of big files');
  tried += 1;
  assert.match(r.stderr, /skipped .*huge\.md: larger than 10485760 bytes/);
  const report = JSON.parse(r.stdout);
  assert.equal(report.skipped, 1);
  assert.equal(report.added, 1);
  // 10 MB in chunks of at most 2,000 bytes.
  assert.ok(report.chunks >= 5_000, `chunks: ${report.chunks}`);
  const s = stats();
  assert.equal(s.chunks, before.chunks + report.chunks);
  assert.equal(s.memories, baseline.memories);
  process.stderr.write(`bad-input: 10 MB single line ingested in ${((Date.now() - started) / 1000).toFixed(1)} s, ${report.chunks} chunks\n`);
  rmSync(dir, { recursive: true, force: true });
});

// Queries made of what a query builder would choke on. Each must come back as JSON results.
const NASTY_QUERIES = [
  "'", "''", "'; DROP TABLE memloom_items; --", "\" OR 1=1 --", 'a & b', 'a | b', '!a', '!!!', '&&&', '|||',
  'max:*', 'max_conn:*', ':*', 'a <-> b', '<->', '<2>', 'a <-> <-> b', '(', ')', '()', '(a | b) & !c',
  '\\', '\\\\', 'back\\slash\\', "E'\\x00'", '$1', '$$', '%', '_%_', '*', '?', ';', '--', '/* c */',
  '\'a\' & \'b\'', 'pg_hba.conf & ', '& max_connections', 'ERR_REQUIRE_ESM:A', 'a:ABCD', "O'Reilly's",
  'שלום עולם', 'مرحبا', '\u202Eevil\u202C', 'e\u0301\u0301', 'Z\u0351\u0352\u0353', '🧠🔥', '👩‍👩‍👧',
  'x\uFEFFy', '\u200B', '全角　スペース', 'x\ud800y', '\udc00', 'tab\there', 'new\nline', '\u0001\u001f',
  'a'.repeat(5_000), 'a & '.repeat(500), '<-> '.repeat(500), "'".repeat(1000), '\\'.repeat(1000),
];

test('recall: SQL and tsquery metacharacters and Unicode edge cases come back as results', () => {
  const before = stats();
  const batch = join(tmp, 'queries.jsonl');
  writeFileSync(batch, NASTY_QUERIES.map((query, id) => JSON.stringify({ id, query })).join('\n') + '\n');
  const r = cli(['recall', '--batch', batch, '--json', '--limit', '5']);
  handled(r, 0, 'recall --batch of nasty queries');
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, NASTY_QUERIES.length);
  for (const l of lines) assert.ok(Array.isArray(l.results), JSON.stringify(l));
  tried += NASTY_QUERIES.length - 1;
  // A few through argv too (the shell-free path of a single query).
  for (const q of ["'; DROP TABLE memloom_items; --", 'a <-> b', 'max:*', '\\', '🧠🔥']) {
    const one = cli(['recall', q, '--json']);
    handled(one, 0, `recall ${q}`);
    assert.equal(JSON.parse(one.stdout).query, q);
  }
  // Queries that are only white space (JS trim: U+FEFF, U+3000 too) are refused clearly.
  for (const q of ['\uFEFF', '\u3000', ' \t\n ']) {
    writeFileSync(batch, JSON.stringify({ id: 1, query: q }) + '\n');
    const e = cli(['recall', '--batch', batch, '--json']);
    handled(e, 2, `recall ${JSON.stringify(q)}`);
    assert.match(e.stderr, /"query" must be a non-empty string/);
  }
  // The identifier still matches itself among metacharacters.
  const id = lines[NASTY_QUERIES.indexOf('& max_connections')];
  assert.ok(id.results.length > 0);
  assert.deepEqual(stats(), before);
});

test('a NUL character: a clear error (PostgreSQL text cannot hold one), nothing written', () => {
  const before = stats();
  const jsonl = join(tmp, 'nul.jsonl');
  writeFileSync(jsonl, JSON.stringify({ key: 'ok-first', text: 'fine' }) + '\n' + JSON.stringify({ key: 'nul', text: 'a\u0000b' }) + '\n');
  let r = cli(['remember', '--file', jsonl]);
  handled(r, 2, 'remember --file with a NUL');
  assert.match(r.stderr, /memory 2's text contains a NUL character \(U\+0000\), which PostgreSQL cannot store/);
  writeFileSync(jsonl, JSON.stringify({ key: 'k\u0000', text: 'x' }) + '\n');
  r = cli(['remember', '--file', jsonl]);
  handled(r, 2, 'remember --file with a NUL key');
  assert.match(r.stderr, /key contains a NUL character/);
  const batch = join(tmp, 'nul-query.jsonl');
  writeFileSync(batch, JSON.stringify({ id: 1, query: 'a\u0000b' }) + '\n');
  r = cli(['recall', '--batch', batch, '--json']);
  handled(r, 2, 'recall with a NUL');
  assert.match(r.stderr, /the query contains a NUL character/);
  assert.deepEqual(stats(), before);
});

test('malformed JSONL: the line is named, nothing written', () => {
  const before = stats();
  const cases = ['{"key": "a", "text": "ok"}\n{not json', '[1,2]', '"just a string"', '{"text": 42}', '{"text": "   "}', '{"key": "", "text": "x"}', '{"text": "x", "seq": "soon"}', '\uFEFF{"text": "bom"}'];
  for (const c of cases) {
    const f = join(tmp, 'bad.jsonl');
    writeFileSync(f, c + '\n');
    const r = cli(['remember', '--file', f]);
    handled(r, 2, `remember --file ${c}`);
    assert.match(r.stderr, /bad\.jsonl:\d+: /);
  }
  assert.deepEqual(stats(), before);
});

test('Unicode memories round-trip: RTL, combining marks, emoji, lone surrogates', () => {
  const texts = {
    rtl: 'שלום עולם: the deploy key lives in \u202Evault\u202C',
    combining: 'Cafe\u0301 Z\u0351\u0352\u0353algo e\u0301\u0301\u0301',
    emoji: 'Release mascot 🧠🔥 and family 👩‍👩‍👧 emoji',
    cjk: '全角　スペース入りのメモ',
  };
  for (const [key, text] of Object.entries(texts)) {
    const r = cli(['remember', text, '--key', `u-${key}`]);
    handled(r, 0, `remember ${key}`);
    const h = cli(['history', `u-${key}`, '--json']);
    assert.equal(JSON.parse(h.stdout)[0].content, text, key);
  }
  // hash-v1 and the english tsvector see no words in emoji: found by the words beside them.
  const r = cli(['recall', 'release mascot 🧠🔥', '--json', '--kinds', 'memory']);
  handled(r, 0, 'recall emoji');
  assert.equal(JSON.parse(r.stdout).results[0].key, 'u-emoji');
  handled(cli(['recall', 'שלום עולם', '--json']), 0, 'recall RTL');
  // A lone surrogate (valid JSON, not valid Unicode) is stored as U+FFFD, not an error.
  const f = join(tmp, 'surrogate.jsonl');
  writeFileSync(f, '{"key": "u-lone", "text": "before \\ud800 after"}\n');
  handled(cli(['remember', '--file', f]), 0, 'remember a lone surrogate');
  assert.equal(JSON.parse(cli(['history', 'u-lone', '--json']).stdout)[0].content, 'before \uFFFD after');
});

test('npm API: bad arguments are MemloomErrors, documents with NUL are skipped', async () => {
  const s = await openStore({ dir: store, create: false });
  try {
    const before = await s.stats();
    const bad = [
      () => s.recall(''),
      () => s.recall('   '),
      () => s.recall(42),
      () => s.recall('x', { limit: 0 }),
      () => s.recall('x', { limit: 1.5 }),
      () => s.recall('x', { arms: ['bogus'] }),
      () => s.recall('x', { kinds: ["chunk'; --"] }),
      () => s.recall('a\u0000b'),
      () => s.remember(''),
      () => s.remember(null),
      () => s.remember('x', { key: '' }),
      () => s.remember('x', { key: 7 }),
      () => s.remember('a\u0000b'),
      () => s.remember('x', { metadata: { note: 'a\u0000b' } }),
      () => s.history('k\u0000'),
      () => s.forget('k\u0000'),
      () => s.forget({}),
      () => s.ingest([{ source: 'n\u0000.md', text: 'x' }]),
      () => s.ingest([{ nope: true }]),
      () => s.ingest(42),
      () => s.memories({ limit: -1 }),
    ];
    for (const [i, f] of bad.entries()) {
      await assert.rejects(f, (e) => e.name === 'MemloomError' && e.message.length > 10, `case ${i}`);
      tried++;
    }
    const rep = await s.ingest([{ source: 'nul.md', text: '# a\n\nx\u0000y' }, { source: 'ok.md', text: '# ok\n\nfine' }]);
    assert.equal(rep.skipped, 1);
    assert.equal(rep.added, 1);
    tried++;
    const after = await s.stats();
    assert.equal(after.chunks, before.chunks + 1);
    assert.deepEqual(after.memories, before.memories);
  } finally {
    await s.close();
  }
});
