// The store API, by job in src/store/: open.js (openStore), store.js (the Store class, thin
// doors), migrate.js, embedder.js, ingest.js, memories.js, recall.js, entities.js (the entity
// index), stats.js, maintenance.js (what a write leaves to do), input.js (checks of what
// callers pass). All ranking happens in SQL (sql/): recall is ONE memloom_fuse call.
export { MemloomError } from './errors.js';
export { openStore, setDefaultDrivers, DEFAULT_NAMESPACE } from './store/open.js';
export { Store } from './store/store.js';
export { SCHEMA_VERSION } from './store/migrate.js';
export { EMBEDDED_HNSW_THRESHOLD, HNSW_MAX_DIMS } from './store/maintenance.js';
export { INGEST_BATCH_BYTES, INGEST_BATCH_FILES } from './store/ingest.js';
export { IMPORT_BATCH } from './store/memories.js';
export { ARMS } from './store/recall.js';
export { entityEmbeddingText } from './store/entities.js';
export { toInstant } from './store/input.js';
