// Pins the public API of `memloom` as TypeScript users see it (the generated .d.ts files).
// Every line must compile; every `@ts-expect-error` line must NOT compile (tsc fails on an
// unused `@ts-expect-error`), so a type that grows too loose fails this test as surely as one
// that drifts from the runtime. Run by npm/test/types.test.js (`tsc -p test/types`).
import {
  init,
  chunk,
  embed,
  embedBatch,
  fuse,
  embedderInfo,
  extractEntities,
  hashEmbedder,
  staticEmbedder,
  apiEmbedder,
  embedderFromEnv,
  offlineExtractor,
  llmExtractor,
  extractorFromEnv,
  openStore,
  Store,
  MemloomError,
  ARMS,
  DEFAULT_NAMESPACE,
  IMPORT_BATCH,
  type Chunk,
  type Embedder,
  type Extractor,
  type IndexReport,
  type Recall,
  type RecallResult,
  type OpenStoreOptions,
  type StoreStats,
  type Arm,
} from 'memloom';
import * as core from 'memloom/core';

/** Compiles only when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_ok?: T): void {}

// Core -------------------------------------------------------------------------------------------
await init();
const chunks: Chunk[] = chunk('guide.md', '# Guide\n\ntext', { maxBytes: 500 });
assertType<Equal<(typeof chunks)[number]['breadcrumb'], string>>();
// @ts-expect-error chunk needs the source and the text
chunk('only text');
// @ts-expect-error maxBytes is a number
chunk('a.md', 'x', { maxBytes: '500' });
const v: Float32Array = embed('hello');
const vs: Float32Array[] = embedBatch(['a', 'b']);
// @ts-expect-error embedBatch takes an array
embedBatch('a');
const fused = fuse({ vector: [1, 2], keyword: [2] }, { k: 60, weights: { keyword: 2 } });
assertType<Equal<(typeof fused)[number]['ranks']['entity'], number | null>>();
// @ts-expect-error arms are lists of ids
fuse({ vector: ['a'] });
assertType<Equal<ReturnType<typeof embedderInfo>['dims'], number>>();
const mentions = extractEntities('ERR_REQUIRE_ESM in pg_hba.conf');
// @ts-expect-error a mention's kind is one of the EntityKind names
const wrongKind: (typeof mentions)[number]['kind'] = 'person';
void [v, vs, wrongKind];

// memloom/core: the same core functions, and no store at all.
assertType<Equal<typeof core.chunk, typeof chunk>>();
assertType<Equal<typeof core.embed, typeof embed>>();
// @ts-expect-error the core entry has no store
core.openStore;

// Embedders and extractors (today's drift: the extractors were exported but untyped) -------------
const embedders: Embedder[] = [hashEmbedder(), staticEmbedder(), staticEmbedder({ data: new Uint8Array(4) }), embedderFromEnv({})];
apiEmbedder({ url: 'http://127.0.0.1:1/v1', model: 'm', dims: 8, batchSize: 4 });
// @ts-expect-error dims is required
apiEmbedder({ url: 'http://127.0.0.1:1/v1', model: 'm' });
const extractors: Extractor[] = [offlineExtractor(), llmExtractor({ url: 'http://127.0.0.1:1/v1', model: 'm', batchSize: 4 }), extractorFromEnv({})];
// @ts-expect-error llmExtractor needs url and model
llmExtractor({ url: 'http://127.0.0.1:1/v1' });
// @ts-expect-error llmExtractor's batchSize is a number
llmExtractor({ url: 'u', model: 'm', batchSize: 'big' });
// @ts-expect-error offlineExtractor takes no options
offlineExtractor({ model: 'm' });
assertType<Equal<Awaited<ReturnType<Extractor['extract']>>[number]['fallback'], boolean>>();
void [embedders, extractors];

// Store ------------------------------------------------------------------------------------------
const options: OpenStoreOptions = { dir: '/tmp/x', namespace: 'team', embedder: hashEmbedder(), create: false, pglite: { relaxedDurability: true } };
const store: Store = await openStore(options);
await openStore();
await openStore({ url: 'postgres://127.0.0.1/x' });
// @ts-expect-error unknown option (a typo for dir): the runtime refuses it too
await openStore({ directory: 'x' });
// @ts-expect-error namespace is a string
await openStore({ namespace: 1 });

const ns: string = store.namespace;
const kind: 'embedded' | 'server' = store.kind;
const ingested = await store.ingest(['docs/', { source: 'a.md', text: '# A' }, { source: 'b.md', file: new Blob(['# B']) }], {
  onProgress: (p) => void p.done,
});
assertType<Equal<typeof ingested.empty, number>>();
// @ts-expect-error a document needs text or file
await store.ingest({ source: 'a.md' });
const r = await store.remember('Deploys freeze on Fridays', { key: 'deploy-freeze', metadata: { by: 'ops' } });
assertType<Equal<typeof r.key, string | null>>();
// @ts-expect-error remember takes text first
await store.remember({ text: 'x' });
await store.rememberMany([{ text: 'a', key: 'k' }, { text: 'b' }]);
const imported = await store.importMemories([{ text: 'a', key: 'k', seq: 1 }], { batchSize: 10 });
assertType<Equal<typeof imported.batches, number>>();
await store.forget('deploy-freeze');
await store.forget({ id: 3 });
const all = await store.forget({ all: true, namespace: 'team' });
assertType<Equal<typeof all.statistics, number | undefined>>();
// @ts-expect-error forget's all must be true
await store.forget({ all: false, namespace: 'team' });
const versions = await store.history('deploy-freeze');
assertType<Equal<(typeof versions)[number]['status'], 'active' | 'superseded'>>();
await store.memories({ limit: 5 });

const recall: Recall = await store.recall('when can we deploy', {
  limit: 5,
  kinds: ['memory'],
  weights: { keyword: 2 },
  arms: ['vector', 'keyword'],
  candidates: 20,
  keywordFloor: 0.3,
  explain: true,
});
const hit: RecallResult = recall.results[0]!;
assertType<Equal<typeof hit.ranks.vector, number | null>>();
assertType<Equal<typeof hit.kind, 'memory' | 'chunk'>>();
const term = hit.explain?.terms.keyword?.term;
assertType<Equal<typeof term, number | undefined>>();
// @ts-expect-error arms are vector, keyword, entity
await store.recall('q', { arms: ['bm25'] });
// @ts-expect-error kinds are memory, chunk
await store.recall('q', { kinds: ['doc'] });

// index(): today's drifts: `all` was rejected by the types, and the result had 3 of its fields.
const indexed: IndexReport = await store.index({ all: true, extractor: offlineExtractor(), batchSize: 100, onProgress: (p) => void p.total });
assertType<
  Equal<
    keyof IndexReport,
    'items' | 'entities' | 'newEntities' | 'mentions' | 'fallbacks' | 'removedMentions' | 'removedEntities' | 'extractor' | 'seconds'
  >
>();
assertType<Equal<typeof indexed.extractor, string>>();
// @ts-expect-error all is a boolean
await store.index({ all: 'yes' });

const stats: StoreStats = await store.stats();
assertType<Equal<typeof stats.backend, 'embedded' | 'server'>>();
await store.maintainVectorIndex({ force: true });
await store.close();

const arms: readonly Arm[] = ARMS;
const n: number = IMPORT_BATCH;
const d: string = DEFAULT_NAMESPACE;
const e: Error = new MemloomError('x');
void [ns, kind, arms, n, d, e];

// Adapters ---------------------------------------------------------------------------------------
import { MemloomRetriever, type MemloomRetrieverMetadata } from 'memloom/langchain';
import { memloomTools } from 'memloom/ai';
import { BaseRetriever } from '@langchain/core/retrievers';

const retriever: BaseRetriever = new MemloomRetriever({ store, recall: { limit: 3, kinds: ['chunk'] } });
const docs = await new MemloomRetriever({ store }).invoke('q');
assertType<Equal<(typeof docs)[number]['metadata'], MemloomRetrieverMetadata>>();
assertType<Equal<MemloomRetrieverMetadata['rrfScore'], number>>();
// @ts-expect-error the retriever needs a store
new MemloomRetriever({});
// @ts-expect-error recall options are RecallOptions
new MemloomRetriever({ store, recall: { limit: 'three' } });
const tools = memloomTools(store, { recall: { arms: ['keyword'] } });
void tools.recall.execute;
void tools.remember.description;
// @ts-expect-error memloomTools needs a store
memloomTools();
void retriever;
