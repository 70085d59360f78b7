// The adapters end to end against the real libraries (devDependencies) on a real embedded store
// (PGlite in memory, the fixture docs ingested, a memory saved): memloom/langchain's retriever
// through LangChain's own invoke() and a runnable chain; memloom/ai's tools through the AI SDK's
// own tool loop (generateText with the SDK's mock language model: tool calls are parsed,
// validated against the tools' schemas and executed by the SDK; no network).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Document } from '@langchain/core/documents';
import { RunnableLambda } from '@langchain/core/runnables';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { openStore } from '../src/entry-node.js';
import { MemloomRetriever } from '../src/langchain.js';
import { memloomTools } from '../src/ai.js';
import { formatRecall } from '../src/tools.js';
import { fixtures } from './helpers.js';

let store;

before(async () => {
  store = await openStore({});
  await store.ingest(`${fixtures}/docs`);
  await store.remember('Deploys freeze on Fridays at 15:00 UTC', { key: 'deploy-freeze' });
  await store.index();
});

after(async () => {
  await store?.close();
});

test('langchain: MemloomRetriever.invoke returns Documents with source, breadcrumb, key, rrfScore and ranks', async () => {
  const retriever = new MemloomRetriever({ store, recall: { limit: 3 } });
  const docs = await retriever.invoke('max_connections');
  const expected = await store.recall('max_connections', { limit: 3 });
  assert.equal(docs.length, expected.results.length);
  assert.ok(docs.length > 0);
  for (const [i, d] of docs.entries()) {
    const h = expected.results[i];
    assert.ok(d instanceof Document);
    assert.equal(d.pageContent, h.content);
    assert.equal(d.id, String(h.id));
    assert.deepEqual(d.metadata, {
      id: h.id,
      kind: h.kind,
      source: h.source,
      breadcrumb: h.breadcrumb,
      key: h.key,
      rrfScore: h.rrfScore,
      similarity: h.similarity,
      ranks: h.ranks,
    });
  }
  assert.equal(docs[0].metadata.source, 'postgres.md');
  assert.equal(docs[0].metadata.breadcrumb, 'PostgreSQL operations > Connection limits');
  assert.equal(docs[0].metadata.ranks.keyword, 1);

  const memory = await new MemloomRetriever({ store, recall: { kinds: ['memory'], limit: 1 } }).invoke('when is the deploy freeze');
  assert.equal(memory[0].metadata.key, 'deploy-freeze');
  assert.equal(memory[0].metadata.kind, 'memory');
});

test('langchain: the retriever composes in a runnable chain', async () => {
  const chain = new MemloomRetriever({ store, recall: { limit: 2 } }).pipe(
    RunnableLambda.from((docs) => docs.map((d) => `${d.metadata.source ?? d.metadata.key}: ${d.metadata.rrfScore.toFixed(4)}`).join('\n')),
  );
  const out = await chain.invoke('pg_hba.conf');
  assert.match(out, /^postgres\.md: 0\.\d{4}/);
});

/** A mock model that makes the given tool calls, one step each, then answers. */
function scriptedModel(calls) {
  const prompts = [];
  let step = 0;
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const call = calls[step++];
      if (!call) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      return {
        content: [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: call.name, input: JSON.stringify(call.input) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

test('ai: recall and remember run through the AI SDK tool loop on the store', async () => {
  const { model, prompts } = scriptedModel([
    { name: 'remember', input: { text: 'The staging database is db-staging-2', key: 'staging-db' } },
    { name: 'recall', input: { query: 'staging database', limit: 2, kinds: ['memory'] } },
  ]);
  const result = await generateText({ model, tools: memloomTools(store), stopWhen: stepCountIs(5), prompt: 'Save and look up the staging db' });
  assert.equal(result.text, 'done');
  const [rememberStep, recallStep] = result.steps;
  const saved = rememberStep.toolResults[0];
  assert.equal(saved.toolName, 'remember');
  assert.deepEqual(Object.keys(saved.output).sort(), ['id', 'key', 'version']);
  assert.equal(saved.output.key, 'staging-db');
  assert.equal((await store.history('staging-db'))[0].content, 'The staging database is db-staging-2');

  const recalled = recallStep.toolResults[0];
  assert.equal(recalled.toolName, 'recall');
  assert.equal(recalled.output.results[0].key, 'staging-db');
  assert.ok(recalled.output.results.length <= 2);
  // The model read the MCP server's citable text, not raw JSON.
  const part = prompts[2]
    .filter((m) => m.role === 'tool')
    .flatMap((m) => m.content)
    .find((c) => c.type === 'tool-result' && c.toolName === 'recall');
  assert.deepEqual(part.output, { type: 'text', value: formatRecall(recalled.output) });
  assert.match(part.output.value, /\[1\] memory "staging-db" \(id \d+\)/);
});

test('ai: invalid input is refused by the schema or the checks, and the model is told why', async () => {
  const { model, prompts } = scriptedModel([
    { name: 'recall', input: { query: 'x', limit: 500 } },
    { name: 'remember', input: { text: '   ' } },
  ]);
  const result = await generateText({ model, tools: memloomTools(store), stopWhen: stepCountIs(5), prompt: 'try' });
  const errors = result.steps.flatMap((s) => s.content.filter((c) => c.type === 'tool-error'));
  assert.equal(errors.length, 2, JSON.stringify(result.steps.map((s) => s.content)));
  assert.match(String(errors[0].error), /limit|50/);
  assert.match(String(errors[1].error?.message ?? errors[1].error), /text is empty; pass the memory's text/);
  assert.equal(prompts.length, 3, 'the loop went on after each error');
});
