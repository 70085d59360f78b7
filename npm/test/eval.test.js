// memloom eval: the metrics (score.py's and score_locomo.py's, reimplemented in src/eval.js) on
// hand-computed cases, then the command end to end on the fixture docs and memories.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectSet, isRelevant, round, scoreDocumentQuery, scoreDocuments, scoreMemories } from '../src/eval.js';
import { runCli, fixtures } from './helpers.js';

const chunk = (source, breadcrumb, content = '') => ({ kind: 'chunk', source, breadcrumb, key: null, content });
const memory = (key, content = '') => ({ kind: 'memory', source: null, breadcrumb: null, key, content });

test('relevance: file name and the last breadcrumb segment, normalised; memories by key', () => {
  const label = { source: 'postgres.md', heading: 'Client  `authentication`' };
  assert.ok(isRelevant(chunk('/srv/docs/postgres.md', 'PostgreSQL operations > Client Authentication'), label));
  assert.ok(!isRelevant(chunk('/srv/docs/postgres.md', 'Client authentication > Other'), label), 'only the last segment counts');
  assert.ok(!isRelevant(chunk('/srv/docs/mysql.md', 'Client authentication'), label));
  assert.ok(!isRelevant(memory('postgres.md'), label));
  assert.ok(isRelevant(memory('db-owner'), { memory_key: 'db-owner' }));
  assert.ok(!isRelevant(chunk('db-owner', 'db-owner'), { memory_key: 'db-owner' }));
});

test('document metrics of one query, by hand', () => {
  const q = { id: 1, query: 'x', relevant: [{ source: 'a.md', heading: 'A' }, { source: 'b.md', heading: 'B' }], stale: ['old text', ' '] };
  // ranks: 1 miss, 2 hit a, 3 miss (holds the stale text), 4 a again (counted once), 5 hit b
  const results = [chunk('z.md', 'Z'), chunk('a.md', 'T > A'), memory('k', 'has old text in it'), chunk('a.md', 'A'), chunk('b.md', 'B')];
  const s = scoreDocumentQuery(q, results, 10);
  const dcg = 1 / Math.log2(3) + 1 / Math.log2(6);
  const ideal = 1 + 1 / Math.log2(3);
  assert.deepEqual(s, { s1: 0, s5: 1, mrr: 0.5, ndcg: dcg / ideal, recall: 1, stale: 1 });
  // k = 3: b is past the cut, the stale text still within it
  assert.deepEqual(scoreDocumentQuery(q, results, 3), { s1: 0, s5: 1, mrr: 0.5, ndcg: 1 / Math.log2(3) / ideal, recall: 0.5, stale: 1 });
  assert.deepEqual(scoreDocumentQuery(q, [], 10), { s1: 0, s5: 0, mrr: 0, ndcg: 0, recall: 0, stale: 0 });
});

test('document table: per type and all, negatives unscored, missing queries counted, rounded as Python', () => {
  const queries = [
    { id: 'a', type: 'identifier', query: 'a', relevant: [{ source: 'a.md', heading: 'A' }] },
    { id: 'b', type: 'identifier', query: 'b', relevant: [{ source: 'b.md', heading: 'B' }] },
    { id: 'c', type: 'memory', query: 'c', relevant: [{ memory_key: 'c' }] },
    { id: 'n', type: 'negative', query: 'n', relevant: [] },
    { id: 'gone', type: 'memory', query: 'g', relevant: [{ memory_key: 'g' }] },
  ];
  const got = new Map([
    ['a', [chunk('a.md', 'A')]],
    ['b', [chunk('x.md', 'X'), chunk('x.md', 'Y'), chunk('b.md', 'B')]],
    ['c', [memory('c')]],
    ['n', [chunk('a.md', 'A')]],
  ]);
  const t = scoreDocuments(queries, got);
  assert.deepEqual(Object.keys(t), ['identifier', 'memory', 'all', 'missing_queries']);
  assert.deepEqual(t.identifier, { s1: 0.5, s5: 1, mrr: round((1 + 1 / 3) / 2, 3), ndcg: round((1 + 0.5) / 2, 3), recall: 1, n: 2, stale_leaks: 0 });
  assert.deepEqual(t.memory, { s1: 0.5, s5: 0.5, mrr: 0.5, ndcg: 0.5, recall: 0.5, n: 2, stale_leaks: 0 });
  assert.equal(t.all.mrr, round((1 + 1 / 3 + 1 + 0) / 4, 3));
  assert.equal(t.all.mrr, 0.583);
  assert.equal(t.missing_queries, 1);
  assert.equal(round(0.0625, 3), 0.062, 'an exact tie goes to the even neighbour, as Python');
  assert.equal(round(0.6255, 3), 0.625, 'not a tie in binary: the nearest');
});

test('memory table: R@k, Hit@k, MRR; k past the longest list is n/a; adversarial and macro aggregates', () => {
  const queries = [
    { id: 1, type: 'single-hop', query: 'q', relevant: [{ memory_key: 'a' }] },
    { id: 2, type: 'multi-hop', query: 'q', relevant: [{ memory_key: 'a' }, { memory_key: 'b' }] },
    { id: 3, type: 'adversarial', query: 'q', relevant: [{ memory_key: 'c' }] },
    { id: 4, type: 'single-hop', query: 'q', relevant: [] },
  ];
  const filler = (n) => Array.from({ length: n }, (_, i) => memory(`f${i}`));
  const got = new Map([
    ['1', [...filler(5), memory('a'), ...filler(4)]], // rank 6
    ['2', [memory('b'), chunk('a', 'a'), ...filler(8)]], // b at 1; a chunk never matches a key
    ['3', filler(10)],
  ]);
  const s = scoreMemories(queries, got);
  assert.deepEqual(s.metrics, ['R@5', 'R@10', 'Hit@5', 'Hit@10', 'MRR']);
  assert.deepEqual(s.k_not_available, [20]);
  assert.equal(s.skipped_no_evidence, 1);
  assert.equal(s.missing_queries, 1);
  assert.equal(s.max_results, 10);
  assert.deepEqual(s.table['single-hop'], { 'R@5': 0, 'R@10': 1, 'Hit@5': 0, 'Hit@10': 1, MRR: round(1 / 6, 4), n: 1 });
  assert.deepEqual(s.table['multi-hop'], { 'R@5': 0.5, 'R@10': 0.5, 'Hit@5': 1, 'Hit@10': 1, MRR: 1, n: 1 });
  assert.equal(s.table.all.n, 3);
  assert.equal(s.table.all.MRR, round((1 / 6 + 1 + 0) / 3, 4));
  assert.equal(s.table['all-no-adv'].MRR, round((1 / 6 + 1) / 2, 4));
  assert.equal(s.table.macro.n, 3);
  assert.equal(s.table['macro-no-adv']['R@10'], 0.75);
  assert.equal(detectSet(queries), 'memories');
  assert.equal(detectSet([{ id: 1, query: 'q', relevant: [{ source: 'a.md', heading: 'A' }] }, ...queries]), 'documents');
});

let tmp, store;
const cli = (args) => runCli([...args, '--store', store]);

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-eval-'));
  store = join(tmp, 'store');
  assert.equal(cli(['init']).status, 0);
  assert.equal(cli(['ingest', join(fixtures, 'docs')]).status, 0);
  assert.equal(cli(['remember', '--file', join(fixtures, 'memories.jsonl')]).status, 0);
  assert.equal(cli(['index']).status, 0);
});
after(() => rmSync(tmp, { recursive: true, force: true }));

test('eval on the fixture docs: the same figures as scoring recall --batch, fused and per arm', () => {
  const queries = join(fixtures, 'eval-docs.jsonl');
  const r = cli(['eval', queries, '--arms', 'fused,keyword,vector+entity', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual([out.set, out.queries, out.limit, Object.keys(out.runs)], ['documents', 6, 10, ['fused', 'keyword', 'vector+entity']]);
  const fused = out.runs.fused;
  assert.deepEqual(Object.keys(fused), ['identifier', 'memory', 'paraphrase', 'all', 'missing_queries']);
  // An identifier is found first by the keyword arm alone, and fused.
  assert.equal(out.runs.keyword.identifier.s1, 1);
  assert.equal(fused.identifier.s1, 1);
  assert.equal(fused.memory.stale_leaks, 0, 'a superseded version never comes back');
  // Each run scores what recall --batch returns for the same arms.
  const lines = (arms) => {
    const rr = cli(['recall', '--batch', queries, '--json', '--limit', '10', ...(arms ? ['--arms', arms] : [])]);
    assert.equal(rr.status, 0, rr.stderr);
    return new Map(rr.stdout.trim().split('\n').map((l) => JSON.parse(l)).map((x) => [String(x.id), x.results]));
  };
  const qs = readFileSync(queries, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  assert.deepEqual(fused, scoreDocuments(qs, lines()));
  assert.deepEqual(out.runs['vector+entity'], scoreDocuments(qs, lines('vector,entity')));
  // The text table names the run and every type.
  const text = cli(['eval', queries, '--quiet']);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /^fused\ntype +n +S@1 +S@5 +MRR +nDCG@10 +R@10 +stale\n/);
  assert.match(text.stdout, /\nall +5 /);
  assert.equal(text.stderr, '', '--quiet: nothing on stderr');
});

test('eval of a memory set: R@k, Hit@k, MRR by type', () => {
  const r = cli(['eval', join(fixtures, 'eval-memories.jsonl'), '--json', '--kinds', 'memory']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual([out.set, out.limit], ['memories', 20]);
  const s = out.runs.fused;
  assert.deepEqual(s.metrics, ['R@5', 'Hit@5', 'MRR'], 'the store holds 3 active memories: k 10 and 20 are n/a');
  assert.deepEqual(s.k_not_available, [10, 20]);
  assert.deepEqual(Object.keys(s.table), ['adversarial', 'multi-hop', 'single-hop', 'all', 'all-no-adv', 'macro', 'macro-no-adv']);
  assert.equal(s.table.all['R@5'], 1, 'three memories, all within the top 5');
  const text = cli(['eval', join(fixtures, 'eval-memories.jsonl'), '--kinds', 'memory']);
  assert.match(text.stdout, /^fused\ntype +n +R@5 +Hit@5 +MRR\n/);
});

test('eval: bad input says what to fix', () => {
  const bad = join(tmp, 'bad.jsonl');
  for (const [content, args, re] of [
    ['{"id": 1, "query": "x", "relevant": [{"file": "a.md"}]}\n', [], /bad\.jsonl:1: each "relevant" label is \{"source"/],
    ['{"id": 1, "query": "x"}\n', [], /no query has "relevant" labels/],
    ['{"id": 1, "query": "x", "relevant": [{"memory_key": "k"}]}\n', ['--arms', 'fused,graph'], /"graph" is not an arm/],
    ['{"id": 1, "query": "x", "relevant": [{"memory_key": "k"}]}\n', ['--set', 'books'], /argument 'books' is invalid.*documents, memories/],
  ]) {
    writeFileSync(bad, content);
    const r = cli(['eval', bad, ...args]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, re);
  }
});
