// How the store's statements send vectors: as bytes, in PostgreSQL's binary form (memloom-core's
// vector_binary, through wasm), which the server reads with pgvector's vector_recv. The text
// form (`[0x1p-1,...]` in an array literal) cost PGlite a strtof per component and a scan of the
// whole literal: 0.25 s of a hash-v1 ingest of the Node docs and 0.8 s of a static-v2 one
// (docs/BENCHMARKS.md, "Vectors as bytes"). The stored vector is the embedder's bits either
// way. Both drivers send a Uint8Array parameter in binary (PGlite once told the types' OIDs:
// db.useVectorTypes, which openStore calls).
import { MemloomError } from '../errors.js';
import { vectorArrayBinary, vectorBinary } from '../core.js';
/** @import { Store } from './store.js' */

/**
 * The database's OIDs of pgvector's `vector` and `vector[]`, told to the driver and kept on the
 * store: openStore calls it once the extension exists. @param {Store} store
 */
export async function learnVectorTypes(store) {
  const { rows } = await store.db.query(`SELECT to_regtype('vector')::oid AS vector, to_regtype('vector[]')::oid AS array`);
  const types = { vector: Number(rows[0].vector), array: Number(rows[0].array) };
  if (!types.vector || !types.array) throw new MemloomError('pgvector\'s vector type is not visible to this session (CREATE EXTENSION vector, and its schema on the search_path)');
  store.db.useVectorTypes(types);
  store._vectorTypes = types;
}

/** Vectors (or null for SQL NULL) as one `vector[]` parameter. @param {Store} store @param {(Float32Array | ArrayLike<number> | null)[]} vectors */
export function vectorsParam(store, vectors) {
  if (!store._vectorTypes) throw new Error('internal: the store\'s vector types are unknown (openStore learns them)');
  return vectorArrayBinary(vectors, store._vectorTypes.vector);
}

/** One vector as a `vector` parameter. @param {Float32Array | ArrayLike<number>} vector */
export function vectorParam(vector) {
  return vectorBinary(vector);
}
