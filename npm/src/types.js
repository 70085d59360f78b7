// The public API's data shapes, as JSDoc typedefs: the package's .d.ts files are generated
// from these and from the JSDoc of the functions (scripts/build-types.sh; `tsc` over the
// entry modules). Adding a typed option is a change here (or on the function), nothing else.
// This module has no runtime content; the entries re-export its types.

// Core (WebAssembly) ------------------------------------------------------------------------------

/**
 * @typedef {object} ChunkOptions
 * @property {number} [maxBytes] Cap on a chunk's text in bytes (breadcrumb not counted); default 2000, at least 64.
 */

/**
 * @typedef {object} Chunk
 * @property {string} source The document's path relative to the ingested root, as given.
 * @property {string} breadcrumb Heading path, e.g. `Guide > Setup > Postgres`.
 * @property {number} start Byte offset of the chunk in the UTF-8 source.
 * @property {number} end Byte offset just past the chunk.
 * @property {string} text The chunk's blocks as written, without heading lines.
 * @property {string} content What is stored, embedded and searched: `breadcrumb + "\n\n" + text`.
 */

/**
 * @typedef {object} EmbedderInfo
 * @property {string} id e.g. `hash-v1`
 * @property {string} name
 * @property {number} version
 * @property {number} dims
 */

/** @typedef {'vector' | 'keyword' | 'entity'} Arm */

/**
 * @typedef {object} Ranks
 * @property {number | null} vector
 * @property {number | null} keyword
 * @property {number | null} entity
 */

/**
 * @typedef {object} Weights
 * @property {number} vector
 * @property {number} keyword
 * @property {number} entity
 */

/**
 * @typedef {object} ArmRankings Each arm's ids, best first.
 * @property {number[]} [vector]
 * @property {number[]} [keyword]
 * @property {number[]} [entity]
 */

/**
 * @typedef {object} FuseParams
 * @property {number} [k] RRF k; default 60.
 * @property {Partial<Weights>} [weights] Per-arm weights; defaults 1.0 / 2.0 / 0.5.
 */

/**
 * @typedef {object} Fused
 * @property {number} id
 * @property {number} rrfScore
 * @property {Ranks} ranks
 */

/** @typedef {'identifier' | 'error_code' | 'file' | 'flag' | 'ticket' | 'host' | 'version' | 'code' | 'name' | 'topic'} EntityKind */

/**
 * @typedef {object} Mention
 * @property {string} name Canonical name: what is stored and embedded.
 * @property {string} display The form as first written.
 * @property {EntityKind} kind
 * @property {number} strength In (0, 1].
 * @property {number} count
 */

/** @typedef {string | URL | Request | Response | BufferSource | WebAssembly.Module} WasmInput What browser `init()` loads the wasm from. */

// Embedders -----------------------------------------------------------------------------------------

/**
 * @typedef {object} Embedder
 * @property {string} id e.g. `hash-v1`, `api:text-embedding-3-small-v1`
 * @property {string} name Recorded in the store's memloom_meta with version and dims.
 * @property {number} version
 * @property {number} dims
 * @property {(texts: string[]) => Promise<Float32Array[]>} embed
 */

/** @typedef {Uint8Array | ArrayBuffer | Response | URL | string} StaticModelData Bytes of static-v1.bin, a Response carrying them, or a URL to fetch them from. */

/**
 * @typedef {object} StaticEmbedderOptions
 * @property {StaticModelData} [data] the static embedders' table; default the package's data/static-v1.bin.
 * @property {1 | 2} [version] 2 (`static-v2`, the default) or 1 (`static-v1`, for stores built with it).
 */

/**
 * @typedef {object} ApiEmbedderOptions
 * @property {string} url API base (`https://host/v1`) or the full `.../embeddings` URL.
 * @property {string} [apiKey]
 * @property {string} model
 * @property {number} dims Sent as `dimensions`; every returned vector is checked against it.
 * @property {number} [batchSize] Texts per request; default 64.
 * @property {number} [concurrency] Requests in flight at once; default 4 (vectors still in input order).
 * @property {number} [timeoutMs] Per-request timeout; default 30000 ms.
 * @property {number} [maxRetries] Retries on 429 / 5xx / network errors, with exponential backoff; default 5.
 * @property {number} [backoffMs] First backoff delay; default 500 ms (doubled each retry; Retry-After is honoured).
 * @property {typeof fetch} [fetch]
 */

/** @typedef {Record<string, string | undefined>} Env Environment variables (default `process.env`). */

// Extractors ----------------------------------------------------------------------------------------

/**
 * @typedef {object} ExtractItem
 * @property {number} id
 * @property {string} text
 * @property {string | null} breadcrumb
 */

/**
 * @typedef {object} ExtractedMention
 * @property {string} name
 * @property {EntityKind} kind
 * @property {number} strength
 */

/**
 * @typedef {object} Extracted One item's entities; `fallback` when the offline extractor stood in for the model.
 * @property {ExtractedMention[]} mentions
 * @property {boolean} fallback
 */

/**
 * @typedef {object} IndexWarning
 * @property {string} reason
 * @property {number} [items]
 */

/**
 * @typedef {object} Extractor Entity extraction for Store#index: the offline one, an LLM, or yours.
 * @property {string} id `offline`, or `llm:<model>`
 * @property {(items: ExtractItem[], options?: { onWarning?: (w: IndexWarning) => void }) => Promise<Extracted[]>} extract
 */

/**
 * @typedef {object} LlmExtractorOptions
 * @property {string} url API base (`https://host/v1`) or the full `.../chat/completions` URL.
 * @property {string} model
 * @property {string} [apiKey]
 * @property {number} [batchSize] Items per request; default 8.
 * @property {number} [concurrency] Requests in flight at once; default 4 (results still in item order).
 * @property {number} [timeoutMs] Per-request timeout; default 60000 ms.
 * @property {number} [maxRetries] Retries on 429 / 5xx / network errors; default 4.
 * @property {number} [backoffMs] First backoff delay; default 500 ms.
 * @property {typeof fetch} [fetch]
 */

// Store ---------------------------------------------------------------------------------------------

/**
 * @typedef {object} OpenStoreOptions Unknown keys are an error (a typo must not open another store).
 * @property {string} [dir] Embedded PGlite: a directory (Node), `idb://name` (browser); omit both `dir` and `url` for memory.
 * @property {string} [url] A PostgreSQL server with pgvector (Node only).
 * @property {string} [namespace] Default `default`.
 * @property {Embedder} [embedder] Default: the offline embedder (hash-v1, static-v1, static-v2) an existing store was built with, else hash-v1. A new store records it and sizes its vectors to its dimensions; a store refuses an embedder other than the one it was built with.
 * @property {boolean} [create] Default true: create and migrate when missing. False: error when no store exists.
 * @property {Record<string, unknown>} [pglite] Extra PGlite options for an embedded store, e.g. `{ relaxedDurability: true }`.
 * @property {string | URL} [assets] Browsers: the folder that holds PGlite's files (pglite.wasm, initdb.wasm, pglite.data, vector.tar.gz; `copyBrowserAssets` from `memloom/assets` puts them there). memloom then loads and checks them itself, and a missing one fails within seconds, named. Without it PGlite finds them next to its own module (Vite does this with no config). Ignored in Node.
 */

/**
 * @typedef {object} Document
 * @property {string} source
 * @property {string} text
 * @property {string} [root] Groups documents for replacement; default ''.
 */

/**
 * @typedef {object} BlobDocument A Blob or File (browser pickers, drag and drop; Node 20+ too), read when its turn comes.
 * @property {string} source
 * @property {Blob} file
 * @property {string} [root] Groups documents for replacement; default ''.
 */

/** @typedef {string | Document | BlobDocument} IngestInput A path (Node: a file or folder) or a document. */

/**
 * @typedef {object} IngestProgress
 * @property {number} done
 * @property {number} total
 * @property {number} chunks
 * @property {number} started
 * @property {string} source
 */

/**
 * @typedef {object} IngestWarning
 * @property {string} source
 * @property {string} [path]
 * @property {string} reason
 */

/** @typedef {{ items: number }} IndexBuild The store's active items: the rows its HNSW index will hold (superseded versions are not in it). */

/**
 * @typedef {object} IngestOptions
 * @property {number} [maxBytes] Chunk size cap (see ChunkOptions).
 * @property {number} [batchBytes] Files are written in batches, one transaction each: a batch closes at this many characters of changed files (default 1 MiB)...
 * @property {number} [batchFiles] ... or this many changed files (default 500).
 * @property {(p: IngestProgress) => void} [onProgress] Per file, in order, as its batch is written.
 * @property {(w: IngestWarning) => void} [onWarning]
 * @property {(e: IndexBuild) => void} [onIndexBuild] Embedded store: called once before it builds its HNSW indexes, when this write takes it past EMBEDDED_HNSW_THRESHOLD (20,000) active items; the build takes 15 s to a minute for 25k active items, much longer for a graph past the build memory's cap.
 */

/**
 * @typedef {object} IngestReport
 * @property {number} files
 * @property {number} added
 * @property {number} changed
 * @property {number} unchanged
 * @property {number} empty Files that yield no chunks (only headings, or blank): nothing stored, counted on every run.
 * @property {number} removed
 * @property {number} skipped
 * @property {number} chunks
 */

/**
 * @typedef {Date | string} Instant An instant: a Date or an ISO 8601 string (`2026-03-01`,
 * `2026-03-01T12:00Z`; no offset = UTC). docs/TIME.md.
 */

/**
 * @typedef {object} RememberOptions
 * @property {string} [key] A stable name: a new memory with the same key supersedes the active one.
 * @property {Record<string, unknown>} [metadata]
 * @property {Instant} [at] When the event the memory describes happened (its event time), distinct from when it is saved.
 * @property {(e: IndexBuild) => void} [onIndexBuild] As IngestOptions.onIndexBuild: the remember that takes an embedded store past EMBEDDED_HNSW_THRESHOLD, or the first write after an index of every version (built before schema 33), builds the index first.
 */

/**
 * @typedef {object} MemoryRecord
 * @property {string} text
 * @property {string | null} [key]
 * @property {Record<string, unknown>} [metadata]
 * @property {Instant | null} [at] The event time.
 */

/**
 * @typedef {object} Remembered
 * @property {number} id
 * @property {string | null} key
 * @property {number} version
 */

/**
 * @typedef {object} ImportRecord A memory for Store#importMemories (a line of `memloom remember --file`).
 * @property {string} text
 * @property {string | null} [key]
 * @property {number} [seq] Orders a key's versions; defaults to 0.
 * @property {Record<string, unknown>} [metadata]
 * @property {Instant | null} [at] The event time (JSONL field `at`).
 */

/**
 * @typedef {object} ImportReport What Store#importMemories read, wrote (new versions among them: superseding) and skipped.
 * @property {number} read
 * @property {number} written
 * @property {number} skipped
 * @property {number} superseding
 */

/**
 * @typedef {object} ImportOptions
 * @property {number} [batchSize] Records per batch; default IMPORT_BATCH (500).
 * @property {(b: ImportReport & { batch: number, size: number }) => void} [onBatch] After each commit.
 * @property {(e: IndexBuild) => void} [onIndexBuild] As IngestOptions.onIndexBuild.
 */

/** @typedef {{ type: 'header' | 'entity' | 'item' | 'end', [field: string]: unknown }} DumpLine A line of a dump (docs/EXPORT.md). */

/**
 * @typedef {object} ExportReport What Store#exportDump wrote.
 * @property {string} exportId
 * @property {string[]} namespaces
 * @property {number} entities
 * @property {number} items
 * @property {number} lines Lines written, header and end line included.
 */

/**
 * @typedef {object} DumpImportReport What Store#importDump read and wrote.
 * @property {string} exportId
 * @property {number} lines The last line read.
 * @property {string[]} namespaces
 * @property {number} entities
 * @property {number} items
 * @property {number} mentions
 * @property {number} skipped Lines a previous run of the same dump had committed.
 * @property {number} batches
 * @property {boolean} reembedded True when the dump's embedder differs from the store's: every vector was recomputed.
 * @property {boolean} complete The end line was read and its counts match.
 */

/**
 * @typedef {object} DumpImportOptions
 * @property {string} [namespace] Import every line into this namespace instead of the line's own.
 * @property {number} [batchSize] Lines per transaction (500).
 * @property {(r: DumpImportReport & { line: number }) => void} [onBatch] After each commit.
 * @property {(n: number) => string} [where] How an error names line n (e.g. "dump.jsonl:12").
 * @property {string} [source] What the lines are, in messages ("dump", "mem0 export").
 */

/** @typedef {string | { key: string } | { id: number } | { all: true, namespace: string }} ForgetTarget */

/**
 * @typedef {object} ForgetReport
 * @property {number} deleted Items removed.
 * @property {number} mentions
 * @property {number} entities
 * @property {number} [statistics] Statistics rows (only for `{ all: true, namespace }`).
 */

/**
 * @typedef {object} MemoryVersion
 * @property {number} id
 * @property {string} key
 * @property {number} version
 * @property {'active' | 'superseded'} status
 * @property {string} content
 * @property {string} createdAt ISO 8601.
 * @property {string} validFrom When this version became the belief (ISO, milliseconds: as `asOf` it recalls this version).
 * @property {string | null} validTo When its successor replaced it; null while active.
 * @property {string | null} eventAt The event time given to remember (`at`), or null.
 */

/**
 * @typedef {object} ActiveMemory
 * @property {number} id
 * @property {string | null} key
 * @property {number} version
 * @property {string} content
 * @property {string} createdAt ISO 8601.
 * @property {string} validFrom When this version became the belief (ISO, milliseconds: as `asOf` it recalls this version).
 * @property {string | null} validTo When its successor replaced it; null while active.
 * @property {string | null} eventAt The event time given to remember (`at`), or null.
 */

/**
 * @typedef {object} RecallOptions
 * @property {number} [limit] Default 10.
 * @property {Array<'memory' | 'chunk'>} [kinds]
 * @property {Partial<Weights>} [weights]
 * @property {number} [k] RRF k; default 60.
 * @property {number} [candidates] Candidates per arm; default 10, whatever the limit.
 * @property {number} [keywordFloor] The keyword arm votes only for items scoring at least this fraction (0 to 1) of its best; default 0.3.
 * @property {Arm[]} [arms] Arms that run and vote; the others do not run and their ranks read null. Default all.
 * @property {boolean} [explain] Adds `explain` to each result (each arm's rank, weight and RRF term) and to the response (embedder, k, weights, times).
 * @property {Instant} [asOf] Recall as of this instant: the memory versions valid then, the chunks ingested by then. Default now.
 * @property {Instant} [since] Only items whose event time (a memory's `at`, else when it was saved) is at or after this.
 * @property {Instant} [until] Only items whose event time is at or before this (a date alone: the end of that day).
 */

/**
 * @typedef {object} ArmTerm
 * @property {number} rank
 * @property {number} weight
 * @property {number} term
 */

/**
 * A hit's fusion terms (with `explain: true`): they add up to its `rrfScore`.
 * @typedef {object} Explain
 * @property {number} k
 * @property {Record<Arm, ArmTerm | null>} terms null where the arm did not vote.
 */

/**
 * The response's `explain` (with `explain: true`): the fusion settings used and the times.
 * @typedef {object} RecallExplain
 * @property {string} embedder The query's embedder, e.g. `hash-v1`.
 * @property {number} k
 * @property {Weights} weights The weights in effect (the request's over the defaults).
 * @property {number} embedMs
 * @property {number} queryMs
 * @property {number} [connectMs] The edge worker only: opening its connection.
 * @property {string} [vectorArm] `memloom recall --json --explain` only: what the vector arm can match.
 */

/**
 * @typedef {object} RecallResult
 * @property {number} id
 * @property {'memory' | 'chunk'} kind
 * @property {string | null} source
 * @property {string | null} breadcrumb
 * @property {string | null} key
 * @property {string} content
 * @property {number} rrfScore
 * @property {number} similarity
 * @property {Ranks} ranks
 * @property {Explain} [explain] With `explain: true`.
 */

/**
 * The recall response: schema/recall-response.json in the repository is its one definition
 * (npm/test/contracts.test.js validates the store's, the CLI's and the MCP server's against it).
 * @typedef {object} Recall
 * @property {string} query
 * @property {RecallResult[]} results
 * @property {number} tookMs
 * @property {RecallExplain} [explain] With `explain: true`.
 */

/**
 * @typedef {object} IndexProgress
 * @property {number} done
 * @property {number} total
 * @property {number} started
 * @property {number} entities
 * @property {number} newEntities
 * @property {number} mentions
 * @property {number} fallbacks
 */

/**
 * @typedef {object} IndexOptions
 * @property {Extractor} [extractor] Default the offline extractor.
 * @property {boolean} [all] Re-index every item, not only the unindexed ones.
 * @property {number} [batchSize] Items per transaction; default 500.
 * @property {(p: IndexProgress) => void} [onProgress]
 * @property {(w: IndexWarning) => void} [onWarning]
 */

/**
 * @typedef {object} IndexReport
 * @property {number} items Items indexed.
 * @property {number} entities Distinct entities the indexed items mention.
 * @property {number} newEntities Of those, the ones this run created.
 * @property {number} mentions Edges written.
 * @property {number} fallbacks Items the offline extractor indexed because the model's reply could not be used.
 * @property {number} removedMentions Stale edges removed (superseded items).
 * @property {number} removedEntities Entities nothing mentions any more, removed.
 * @property {string} extractor The extractor's id.
 * @property {number} seconds
 */

/**
 * @typedef {object} StoredEmbedder
 * @property {string} name
 * @property {number} version
 * @property {number} dims
 */

/**
 * @typedef {object} StoreStats
 * @property {string} location
 * @property {'embedded' | 'server'} backend
 * @property {string} namespace
 * @property {StoredEmbedder | null} embedder
 * @property {number} schemaVersion
 * @property {number} files
 * @property {number} chunks
 * @property {{ active: number, superseded: number, keys: number }} memories
 * @property {number} entities
 * @property {number} unindexed
 * @property {string} vectorIndex
 */

export {};
