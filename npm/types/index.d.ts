// Hand-written types for the `memloom` package (the same for the node, browser and workerd
// entries; `openStore` on workerd always rejects).

/** Loads the WebAssembly core. Node and workerd load it at import; browsers must await this. */
export function init(input?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<void>;

// Core (WebAssembly) -------------------------------------------------------------------------------

export interface ChunkOptions {
  /** Cap on a chunk's text in bytes (breadcrumb not counted); default 2000, at least 64. */
  maxBytes?: number;
}

export interface Chunk {
  /** The document's path relative to the ingested root, as given. */
  source: string;
  /** Heading path, e.g. `Guide > Setup > Postgres`. */
  breadcrumb: string;
  /** Byte range of the chunk in the UTF-8 source. */
  start: number;
  end: number;
  /** The chunk's blocks as written, without heading lines. */
  text: string;
  /** What is stored, embedded and searched: `breadcrumb + "\n\n" + text`. */
  content: string;
}

/** Chunks a document: markdown when `source` ends in .md/.markdown/.mdx, plain text otherwise. */
export function chunk(source: string, text: string, options?: ChunkOptions): Chunk[];

/** hash-v1 embedding of one text: 256 components, unit length, bit-identical everywhere. */
export function embed(text: string): Float32Array;

/** hash-v1 embeddings of many texts, in order. */
export function embedBatch(texts: string[]): Float32Array[];

export interface EmbedderInfo {
  /** `hash-v1` */
  id: string;
  name: string;
  version: number;
  dims: number;
}

/** The built-in embedder's identity. */
export function embedderInfo(): EmbedderInfo;

export type Arm = 'vector' | 'keyword' | 'entity';

export interface Ranks {
  vector: number | null;
  keyword: number | null;
  entity: number | null;
}

export interface Weights {
  vector: number;
  keyword: number;
  entity: number;
}

export interface ArmRankings {
  vector?: number[];
  keyword?: number[];
  entity?: number[];
}

export interface FuseParams {
  /** RRF k; default 60. */
  k?: number;
  /** Per-arm weights; defaults 1.0 / 2.0 / 0.5. */
  weights?: Partial<Weights>;
}

export interface Fused {
  id: number;
  rrfScore: number;
  ranks: Ranks;
}

/** Weighted reciprocal-rank fusion: `sum of w_arm / (k + rank_arm)`, best first, ties by id. */
export function fuse(arms: ArmRankings, params?: FuseParams): Fused[];

export type EntityKind =
  | 'identifier'
  | 'error_code'
  | 'file'
  | 'flag'
  | 'ticket'
  | 'host'
  | 'version'
  | 'code'
  | 'name'
  | 'topic';

export interface Mention {
  /** Canonical name: what is stored and embedded. */
  name: string;
  /** The form as first written. */
  display: string;
  kind: EntityKind;
  /** In (0, 1]. */
  strength: number;
  count: number;
}

/** Entities a text mentions (offline extractor), strongest first. */
export function extractEntities(text: string, breadcrumb?: string): Mention[];

// Embedders ----------------------------------------------------------------------------------------

export interface Embedder {
  /** e.g. `hash-v1`, `api:text-embedding-3-small-v1` */
  id: string;
  /** Recorded in the store's memloom_meta with version and dims. */
  name: string;
  version: number;
  dims: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

export function hashEmbedder(): Embedder;

/** Bytes of static-v1.bin, a Response carrying them, or a URL to fetch them from. */
export type StaticModelData = Uint8Array | ArrayBuffer | Response | URL | string;

/**
 * `static-v1` (512 dimensions, offline): a static model distilled from all-MiniLM-L6-v2 joined
 * with hash-v1's features. Its table loads on first embed: `data`, or by default the package's
 * data/static-v1.bin (Node: from disk; browsers: fetched next to the package's modules).
 */
export function staticEmbedder(options?: { data?: StaticModelData }): Embedder;

/** Loads static-v1's table (see staticEmbedder); resolves at once when already loaded. */
export function loadStaticModel(data?: StaticModelData): Promise<void>;

/** static-v1 embeddings of many texts (after loadStaticModel): 512 components each. */
export function embedStaticBatch(texts: string[]): Float32Array[];

/** The BERT WordPiece ids static-v1 sums for a text (after loadStaticModel). */
export function tokenizeStatic(text: string): Uint32Array;

/** static-v1's identity: `{id: 'static-v1', name: 'static', version: 1, dims: 512}`. */
export function staticEmbedderInfo(): EmbedderInfo;

export interface ApiEmbedderOptions {
  /** API base (`https://host/v1`) or the full `.../embeddings` URL. */
  url: string;
  apiKey?: string;
  model: string;
  /** Sent as `dimensions`; every returned vector is checked against it. */
  dims: number;
  /** Texts per request; default 64. */
  batchSize?: number;
  /** Per-request timeout; default 30000 ms. */
  timeoutMs?: number;
  /** Retries on 429 / 5xx / network errors, with exponential backoff; default 5. */
  maxRetries?: number;
  /** First backoff delay; default 500 ms (doubled each retry; Retry-After is honoured). */
  backoffMs?: number;
  fetch?: typeof fetch;
}

/** An OpenAI-compatible `/v1/embeddings` endpoint. */
export function apiEmbedder(options: ApiEmbedderOptions): Embedder;

/**
 * Node only: MEMLOOM_EMBEDDER (hash-v1 or static-v1), or MEMLOOM_EMBED_URL / _KEY / _MODEL /
 * _DIMS for an embeddings API, or hash-v1 when none is set.
 */
export function embedderFromEnv(env?: Record<string, string | undefined>): Embedder;

// Store --------------------------------------------------------------------------------------------

export class MemloomError extends Error {}

export const ARMS: readonly Arm[];
export const DEFAULT_NAMESPACE: string;
/** The embedded store searches vectors exactly below this many active items, then builds HNSW. */
export const EMBEDDED_HNSW_THRESHOLD: number;
/** Records per importMemories batch (500): one embed call and one transaction each. */
export const IMPORT_BATCH: number;

export interface OpenStoreOptions {
  /** Embedded PGlite: a directory (Node), `idb://name` (browser); omit both for memory. */
  dir?: string;
  /** A PostgreSQL server with pgvector (Node only). */
  url?: string;
  /** Default `default`. */
  namespace?: string;
  /**
   * Default hash-v1. A new store records it and sizes its vectors to its dimensions
   * (memloom_init_store); a store refuses an embedder other than the one it was built with.
   */
  embedder?: Embedder;
  /** Default true: create and migrate when missing. False: error when no store exists. */
  create?: boolean;
  /** Extra PGlite options for an embedded store, e.g. `{ relaxedDurability: true }`. */
  pglite?: Record<string, unknown>;
}

export function openStore(options?: OpenStoreOptions): Promise<Store>;

export interface Document {
  source: string;
  text: string;
  /** Groups documents for replacement; default ''. */
  root?: string;
}

/** A Blob or File (browser pickers, drag and drop; Node 20+ too), read when its turn comes. */
export interface BlobDocument {
  source: string;
  file: Blob;
  /** Groups documents for replacement; default ''. */
  root?: string;
}

export interface IngestOptions {
  maxBytes?: number;
  /** Files are written in batches, one transaction each: a batch closes at this many characters of changed files (default 1 MiB)... */
  batchBytes?: number;
  /** ... or this many changed files (default 500). Progress is reported per file as its batch is written. */
  batchFiles?: number;
  onProgress?: (p: { done: number; total: number; chunks: number; started: number; source: string }) => void;
  onWarning?: (w: { source: string; path?: string; reason: string }) => void;
}

export interface IngestReport {
  files: number;
  added: number;
  changed: number;
  unchanged: number;
  /** Files that yield no chunks (only headings, or blank): nothing stored, counted on every run. */
  empty: number;
  removed: number;
  skipped: number;
  chunks: number;
}

export interface Remembered {
  id: number;
  key: string | null;
  version: number;
}

export interface MemoryVersion {
  id: number;
  key: string;
  version: number;
  status: 'active' | 'superseded';
  content: string;
  createdAt: string;
}

export interface RecallOptions {
  /** Default 10. */
  limit?: number;
  kinds?: Array<'memory' | 'chunk'>;
  weights?: Partial<Weights>;
  k?: number;
  /** Candidates per arm; default 10, whatever the limit (the first n results never depend on it). */
  candidates?: number;
  /** The keyword arm votes only for items scoring at least this fraction (0 to 1) of its best; default 0.3. */
  keywordFloor?: number;
  /** Arms that run and vote; the others do not run and their ranks read null. Default all. */
  arms?: Arm[];
  /** Adds `explain` to each result: each arm's rank, weight and RRF term. */
  explain?: boolean;
}

export interface RecallResult {
  id: number;
  kind: 'memory' | 'chunk';
  source: string | null;
  breadcrumb: string | null;
  key: string | null;
  content: string;
  rrfScore: number;
  similarity: number;
  ranks: Ranks;
  explain?: {
    k: number;
    terms: Record<Arm, { rank: number; weight: number; term: number } | null>;
  };
}

export interface Recall {
  query: string;
  results: RecallResult[];
  tookMs: number;
}

export interface StoreStats {
  location: string;
  backend: 'embedded' | 'server';
  namespace: string;
  embedder: { name: string; version: number; dims: number } | null;
  schemaVersion: number;
  files: number;
  chunks: number;
  memories: { active: number; superseded: number; keys: number };
  entities: number;
  unindexed: number;
  vectorIndex: string;
}

export class Store {
  readonly namespace: string;
  readonly kind: 'embedded' | 'server';
  /**
   * Paths (Node: files and folders) or documents (text or Blob/File). Incremental by content
   * hash; binary, non-UTF-8 and files over 10 MB are skipped with a warning.
   */
  ingest(inputs: string | Document | BlobDocument | Array<string | Document | BlobDocument>, options?: IngestOptions): Promise<IngestReport>;
  remember(text: string, options?: { key?: string; metadata?: Record<string, unknown> }): Promise<Remembered>;
  /** In order, one transaction; a later record of a key supersedes an earlier one. */
  rememberMany(records: Array<{ text: string; key?: string | null; metadata?: Record<string, unknown> }>): Promise<Remembered[]>;
  /**
   * Streams memories in batches of `batchSize` (IMPORT_BATCH), each batch one transaction.
   * A keyed record stores its `seq` in its metadata; one whose seq is at or below its key's
   * greatest stored seq, or whose text is the key's active text, is skipped, so a re-run
   * resumes with one version per (key, seq). Records of one key must come in increasing seq.
   */
  importMemories(
    records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>,
    options?: { batchSize?: number; onBatch?: (b: ImportReport & { batch: number; size: number }) => void },
  ): Promise<ImportReport & { batches: number }>;
  /** A key's every version or one item (memloom_forget); the counts removed. */
  forget(target: string | { key: string } | { id: number }): Promise<{ deleted: number; mentions: number; entities: number }>;
  /** The whole namespace (it must be this store's), in one transaction (memloom_forget_namespace). */
  forget(target: { all: true; namespace: string }): Promise<{ deleted: number; mentions: number; entities: number; statistics: number }>;
  history(key: string): Promise<MemoryVersion[]>;
  /** Active memories, newest first (default limit 100). */
  memories(options?: { limit?: number }): Promise<Array<{ id: number; key: string | null; version: number; content: string; createdAt: string }>>;
  /** ONE memloom_fuse call. */
  recall(query: string, options?: RecallOptions): Promise<Recall>;
  /** Entity extraction over items not indexed yet (feeds the entity arm). */
  index(options?: { onProgress?: (p: { done: number; total: number; started: number }) => void }): Promise<{ items: number; /** Distinct entities the indexed items mention. */ entities: number; /** Of those, the ones this run created. */ newEntities: number; mentions: number }>;
  stats(): Promise<StoreStats>;
  /** Builds the HNSW index when due (embedded: at EMBEDDED_HNSW_THRESHOLD items) or when forced. */
  maintainVectorIndex(options?: { force?: boolean }): Promise<boolean>;
  storedEmbedder(): Promise<{ name: string; version: number; dims: number } | null>;
  /**
   * static-v1 on a server: loads its token table into the database for the edge worker (done
   * at init); returns the token rows loaded, 0 when there was nothing to do.
   */
  loadStaticTable(options?: { ifMissing?: boolean }): Promise<number>;
  close(): Promise<void>;
}

/** A memory for Store#importMemories (a line of `memloom remember --file`). */
export interface ImportRecord {
  text: string;
  key?: string | null;
  /** Orders a key's versions; defaults to 0. */
  seq?: number;
  metadata?: Record<string, unknown>;
}

/** What Store#importMemories read, wrote (new versions among them: superseding) and skipped. */
export interface ImportReport {
  read: number;
  written: number;
  skipped: number;
  superseding: number;
}
