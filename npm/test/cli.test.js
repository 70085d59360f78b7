// The CLI end to end on an embedded (PGlite) store: init, ingest (incremental, skips),
// remember (supersede), recall --json / --batch, history, index, stats, and bad inputs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, fixtures, RESULT_KEYS } from './helpers.js';

let tmp, store, docs;
const cli = (args, opts) => runCli([...args, '--store', store], opts);

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-cli-'));
  store = join(tmp, 'store');
  docs = join(tmp, 'docs');
  cpSync(join(fixtures, 'docs'), docs, { recursive: true });
  writeFileSync(join(docs, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]));
  writeFileSync(join(docs, 'latin1.txt'), Buffer.from('caf\xe9 cr\xe8me', 'latin1'));
});

after(() => rmSync(tmp, { recursive: true, force: true }));

test('a command before init says to run init', () => {
  const r = cli(['recall', 'anything']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no memloom store at .*run `memloom init --store .*` first/);
  assert.equal(r.stdout, '');
});

test('init creates the store and is idempotent', () => {
  for (let i = 0; i < 2; i++) {
    const r = cli(['init']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /store ready at .* embedder hash-v1, 256 dims/);
  }
});

test('ingest: chunks text files, skips binary and non-UTF-8 with a warning', () => {
  const r = cli(['ingest', docs, '--json']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /warning: skipped .*logo\.png: binary/);
  assert.match(r.stderr, /warning: skipped .*latin1\.txt: not valid UTF-8/);
  const report = JSON.parse(r.stdout);
  assert.equal(report.files, 4);
  assert.equal(report.added, 4);
  assert.equal(report.skipped, 2);
  assert.ok(report.chunks >= 10, `chunks: ${report.chunks}`);
});

test('ingest --max-bytes caps each chunk; below the chunker\'s minimum it is a clear error', () => {
  const dir = join(tmp, 'maxbytes');
  mkdirSync(dir, { recursive: true });
  const para = (i) => `Paragraph ${i} about the deploy freeze and the release train, long enough to fill a line.`;
  writeFileSync(join(dir, 'big.md'), `# Big\n\n${Array.from({ length: 40 }, (_, i) => para(i)).join('\n\n')}\n`);
  const chunks = (flags) => {
    const s = join(tmp, `maxbytes-store-${flags.join('')}`);
    assert.equal(runCli(['init', '--store', s]).status, 0);
    const r = runCli(['ingest', dir, '--json', '--store', s, ...flags]);
    assert.equal(r.status, 0, r.stderr);
    const out = runCli(['recall', 'deploy freeze', '--json', '--limit', '50', '--store', s]);
    assert.equal(out.status, 0, out.stderr);
    return { n: JSON.parse(r.stdout).chunks, results: JSON.parse(out.stdout).results };
  };
  const byDefault = chunks([]);
  const small = chunks(['--max-bytes', '500']);
  assert.ok(small.n > byDefault.n, `--max-bytes 500: ${small.n} chunks, default: ${byDefault.n}`);
  for (const r of small.results) {
    const text = r.content.slice(r.content.indexOf('\n\n') + 2); // the breadcrumb is not counted
    assert.ok(Buffer.byteLength(text) <= 500, `a chunk of ${Buffer.byteLength(text)} bytes`);
  }
  // (into a new store: the files are unchanged in the others, so nothing would be chunked)
  const fresh = join(tmp, 'maxbytes-store-bad');
  assert.equal(runCli(['init', '--store', fresh]).status, 0);
  const bad = runCli(['ingest', dir, '--max-bytes', '10', '--store', fresh]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /maxBytes must be at least 64, not 10/);
  assert.doesNotMatch(bad.stderr, /unexpected error/);
});

test('ingest is incremental: unchanged skipped, changed replaced, deleted removed', () => {
  let r = cli(['ingest', docs, '--json']);
  assert.equal(r.status, 0, r.stderr);
  let rep = JSON.parse(r.stdout);
  assert.deepEqual([rep.added, rep.changed, rep.unchanged, rep.removed, rep.chunks], [0, 0, 4, 0, 0]);

  appendFileSync(join(docs, 'postgres.md'), '\n## Backups\n\nNightly base backups go to the `pgbackrest` repository.\n');
  unlinkSync(join(docs, 'notes.txt'));
  r = cli(['ingest', docs, '--json']);
  assert.equal(r.status, 0, r.stderr);
  rep = JSON.parse(r.stdout);
  assert.deepEqual([rep.added, rep.changed, rep.unchanged, rep.removed], [0, 1, 2, 1]);

  const hit = JSON.parse(cli(['recall', 'pgbackrest', '--json', '--limit', '1']).stdout).results[0];
  assert.equal(hit.source, 'postgres.md');
  assert.equal(hit.breadcrumb, 'PostgreSQL operations > Backups');
  const gone = JSON.parse(cli(['recall', 'vault payments key rotation', '--json']).stdout).results;
  assert.ok(!gone.some((h) => h.source === 'notes.txt'), 'chunks of a deleted file are gone');
});

test('ingest: a file of only a heading is reported empty on every run, not new (issue 15)', () => {
  const dir = join(tmp, 'headings-only');
  mkdirSync(dir);
  writeFileSync(join(dir, 'title.md'), '# Only a title\n');
  writeFileSync(join(dir, 'body.md'), '# Title\n\nA body line.\n');
  let r = cli(['ingest', dir, '--json']);
  assert.equal(r.status, 0, r.stderr);
  let rep = JSON.parse(r.stdout);
  assert.deepEqual([rep.added, rep.empty, rep.unchanged], [1, 1, 0], r.stdout);
  r = cli(['ingest', dir, '--json']);
  assert.equal(r.status, 0, r.stderr);
  rep = JSON.parse(r.stdout);
  assert.deepEqual([rep.added, rep.changed, rep.empty, rep.unchanged, rep.chunks], [0, 0, 1, 1, 0], r.stdout);
  assert.match(r.stderr, /0 new, 0 changed, 1 unchanged, 0 removed, 0 skipped, 1 empty \(no text to index: only headings or blank\)/);
  // Leave the store as it was for the tests below: the file with a body is pruned.
  unlinkSync(join(dir, 'body.md'));
  rep = JSON.parse(cli(['ingest', dir, '--json']).stdout);
  assert.deepEqual([rep.removed, rep.empty], [1, 1]);
  rmSync(dir, { recursive: true, force: true });
});

test('ingest of a missing path fails with exit 2 and names it', () => {
  const r = cli(['ingest', join(tmp, 'nope')]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /cannot read .*nope: no such file or directory/);
});

test('remember, supersede, history', () => {
  let r = cli(['remember', 'Deploys are frozen on Fridays after 15:00.', '--key', 'deploy-freeze']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /remembered deploy-freeze version 1/);
  r = cli(['remember', '--file', join(fixtures, 'memories.jsonl')]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /remembered 4 memories/);
  r = cli(['history', 'orders-replicas', '--json']);
  const h = JSON.parse(r.stdout);
  assert.deepEqual(
    h.map((v) => [v.version, v.status]),
    [
      [1, 'superseded'],
      [2, 'active'],
    ],
  );
  assert.match(h[1].content, /5 replicas/);
  // The same text again is not a new version.
  r = cli(['history', 'deploy-freeze', '--json']);
  assert.equal(JSON.parse(r.stdout).length, 1);
});

test('forget prints the true count: every version of a key, then nothing', () => {
  let r = cli(['remember', 'Rotate the staging keys monthly.', '--key', 'key-rotation']);
  assert.equal(r.status, 0, r.stderr);
  r = cli(['remember', 'Rotate the staging keys weekly.', '--key', 'key-rotation']);
  assert.equal(r.status, 0, r.stderr);
  r = cli(['forget', '--key', 'key-rotation']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'forgot 2 items');
  r = cli(['forget', '--key', 'key-rotation']);
  assert.equal(r.stdout.trim(), 'forgot 0 items');
  r = cli(['recall', 'staging keys rotation', '--json']);
  assert.ok(!JSON.parse(r.stdout).results.some((x) => /staging keys/.test(x.content)), 'forgotten memory recalled');
});

test('recall --json follows the contract and never returns a superseded memory', () => {
  const r = cli(['recall', 'how many replicas does the orders service run', '--json', '--limit', '5']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(out), ['query', 'results', 'tookMs']);
  assert.ok(out.results.length > 0 && out.results.length <= 5);
  for (const hit of out.results) {
    assert.deepEqual(Object.keys(hit), RESULT_KEYS);
    assert.deepEqual(Object.keys(hit.ranks), ['vector', 'keyword', 'entity']);
    assert.ok(!hit.content.includes('runs 3 replicas'), 'superseded memory leaked');
  }
  const mem = out.results.find((h) => h.kind === 'memory');
  assert.equal(mem?.key, 'orders-replicas');
  assert.match(mem.content, /5 replicas/);
});

test('an exact identifier ranks its section first, keyword arm voting', () => {
  const out = JSON.parse(cli(['recall', 'pg_hba.conf', '--json']).stdout);
  assert.equal(out.results[0].breadcrumb, 'PostgreSQL operations > Client authentication');
  assert.equal(out.results[0].ranks.keyword, 1);
});

test('--arms restricts the voting arms; --explain adds the terms', () => {
  const out = JSON.parse(cli(['recall', 'rolling restart', '--json', '--arms', 'keyword', '--explain']).stdout);
  assert.ok(out.results.length > 0);
  let tail = false;
  for (const h of out.results) {
    assert.equal(h.ranks.vector, null);
    assert.equal(h.ranks.entity, null);
    if (h.ranks.keyword === null) {
      // Past the voted items (sql/0010): unscored matches of the arm that ran, after every voter.
      tail = true;
      assert.equal(h.rrfScore, 0);
      assert.equal(h.explain.terms.keyword, null);
      continue;
    }
    assert.ok(!tail, 'a voted result after an unscored one');
    assert.ok(h.ranks.keyword >= 1);
    assert.equal(h.explain.terms.keyword.term, 2 / (60 + h.ranks.keyword));
  }
  assert.ok(out.results[0].ranks.keyword >= 1);
  const text = cli(['recall', 'rolling restart', '--explain', '--limit', '2']);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /^1\. deploy\.md — Deploying the orders service > Rolling restart/m);
  assert.match(text.stdout, /rrf = .*keyword 2\/\(60\+1\)/);
});

test('index extracts entities and the entity arm votes', () => {
  const r = cli(['index']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /indexed \d+ items: \d+ entities \(\d+ new\), \d+ mentions/);
  const out = JSON.parse(cli(['recall', 'ETIMEDOUT', '--json']).stdout);
  assert.ok(out.results.some((h) => h.ranks.entity !== null), JSON.stringify(out.results.map((h) => h.ranks)));
  const s = JSON.parse(cli(['stats', '--json']).stdout);
  assert.equal(s.unindexed, 0);
  assert.ok(s.entities > 0);
  assert.equal(s.files, 3);
  assert.deepEqual(s.memories, { active: 3, superseded: 1, keys: 3 });
});

test('recall --batch writes one JSONL line per query', () => {
  const r = cli(['recall', '--batch', join(fixtures, 'queries.jsonl'), '--json', '--limit', '3']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((l) => l.id),
    ['q1', 'q2', 'q3', 'q4'],
  );
  for (const l of lines) {
    assert.deepEqual(Object.keys(l), ['id', 'results']);
    for (const hit of l.results) assert.deepEqual(Object.keys(hit), RESULT_KEYS);
  }
  assert.match(r.stderr, /recall latency p50/);
});

test('bad JSONL lines are reported with their line number, nothing written', () => {
  const bad = join(tmp, 'bad.jsonl');
  writeFileSync(bad, '{"id": "a", "query": "x"}\n\n{"id": "b", "query": \n');
  let r = cli(['recall', '--batch', bad, '--json']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /bad\.jsonl:3: not valid JSON/);
  assert.equal(r.stdout, '');
  writeFileSync(bad, '{"key": "k", "seq": 1, "text": "ok"}\n{"key": "k", "seq": 2}\n');
  r = cli(['remember', '--file', bad]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /bad\.jsonl:2: "text" must be a non-empty string/);
  assert.equal(cli(['history', 'k']).status, 2, 'nothing from the bad file was saved');
});

test('usage errors exit 2 with a hint', () => {
  for (const [args, re] of [
    [['recall', 'x', '--arms', 'vector,graph'], /--arms takes a comma-separated subset of vector,keyword,entity/],
    [['recall', 'x', '--limit', '0'], /--limit takes a positive integer/],
    [['recall', '--batch', 'q.jsonl'], /add --json/],
    [['frobnicate'], /unknown command "frobnicate"/],
    [['recall', 'x', '--bogus'], /Unknown option '--bogus'/],
    [['remember', '--file', join(tmp, 'missing.jsonl')], /cannot read .*missing\.jsonl/],
    [['history', 'no-such-key'], /no memory with key "no-such-key"/],
  ]) {
    const r = cli(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
});

test('a store built with hash-v1 refuses another embedder, saying how to fix it', async () => {
  // A local OpenAI-compatible endpoint (no network): 384-d vectors (a new store takes the
  // embedder's dimensions at init); first answer is a 429.
  let calls = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      calls++;
      if (calls === 1) {
        res.writeHead(429, { 'retry-after': '0' }).end('slow down');
        return;
      }
      const { input } = JSON.parse(body);
      const data = input.map((_, index) => ({ index, embedding: Array.from({ length: 384 }, (_, i) => (i === index % 384 ? 1 : 0)) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const env = {
    MEMLOOM_EMBED_URL: `http://127.0.0.1:${server.address().port}/v1`,
    MEMLOOM_EMBED_MODEL: 'test-embed',
    MEMLOOM_EMBED_DIMS: '384',
  };
  try {
    const r = await runCli(['recall', 'replicas', '--store', store], { env, async: true });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /built with the hash-v1 embedder .* this run embeds with api:test-embed-v1 .*unset MEMLOOM_EMBED_URL/);

    // A new store adopts the API embedder at init; the 429 is retried.
    const apiStore = join(tmp, 'api-store');
    assert.equal((await runCli(['init', '--store', apiStore], { env, async: true })).status, 0);
    const ing = await runCli(['ingest', join(docs, 'deploy.md'), '--store', apiStore], { env, async: true });
    assert.equal(ing.status, 0, ing.stderr);
    assert.ok(calls >= 2, 'the 429 was retried');
    const rec = await runCli(['recall', 'rolling restart', '--json', '--store', apiStore], { env, async: true });
    assert.equal(rec.status, 0, rec.stderr);
    assert.ok(JSON.parse(rec.stdout).results.length > 0, 'recall works on a 384-d store');
    const back = runCli(['recall', 'x', '--store', apiStore]);
    assert.equal(back.status, 2);
    assert.match(back.stderr, /built with the api:test-embed-v1 embedder .*MEMLOOM_EMBED_MODEL=test-embed/);
  } finally {
    server.close();
  }
});

test('a store made with init --embedder static-v2 embeds with it on every later command that names none', () => {
  const s = join(tmp, 'static-store');
  assert.equal(runCli(['init', '--embedder', 'static-v2', '--store', s]).status, 0);
  const rem = runCli(['remember', 'Deploys freeze on Fridays at 18:00', '--key', 'deploy-freeze', '--store', s]);
  assert.equal(rem.status, 0, rem.stderr);
  const named = runCli(['recall', 'when do deploys freeze', '--json', '--store', s], { env: { MEMLOOM_EMBEDDER: 'static-v2' } });
  const unnamed = runCli(['recall', 'when do deploys freeze', '--json', '--store', s]);
  assert.equal(unnamed.status, 0, unnamed.stderr);
  const top = (r) => JSON.parse(r.stdout).results.map((h) => [h.key, h.similarity]);
  assert.deepEqual(top(unnamed), top(named), 'the same query vector as with static-v2 named');
  assert.equal(JSON.parse(runCli(['stats', '--json', '--store', s]).stdout).embedder.name, 'static');
  // Naming another embedder is still refused, with the way out.
  const other = runCli(['recall', 'deploys', '--embedder', 'hash-v1', '--store', s]);
  assert.equal(other.status, 2);
  assert.match(other.stderr, /built with the static-v2 embedder .* or name no embedder/);
});
