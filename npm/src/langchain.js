// `memloom/langchain`: a LangChain.js retriever (`BaseRetriever` from @langchain/core, an
// optional peer dependency) over an open store. One recall per query (ONE memloom_fuse call);
// each result becomes a Document whose pageContent is what was stored (a chunk: breadcrumb +
// text) and whose metadata says where it came from and why it ranked: id, kind, source,
// breadcrumb, key, rrfScore, similarity and each arm's rank.
import { BaseRetriever } from '@langchain/core/retrievers';
import { Document } from '@langchain/core/documents';
/** @import { Store } from './store.js' */
/** @import { RecallOptions, RecallResult } from './types.js' */

/**
 * @typedef {object} MemloomRetrieverMetadata
 * @property {number} id
 * @property {'memory' | 'chunk'} kind
 * @property {string | null} source
 * @property {string | null} breadcrumb
 * @property {string | null} key
 * @property {number} rrfScore
 * @property {number} similarity
 * @property {RecallResult['ranks']} ranks
 */

/**
 * @typedef {object} MemloomRetrieverInput
 * @property {Store} store An open store (openStore).
 * @property {RecallOptions} [recall] Recall options for every query (limit, kinds, weights, arms, ...).
 * @property {string[]} [tags]
 * @property {Record<string, unknown>} [metadata]
 * @property {boolean} [verbose]
 */

/** @extends {BaseRetriever<MemloomRetrieverMetadata>} */
export class MemloomRetriever extends BaseRetriever {
  /** @type {string[]} */
  lc_namespace = ['memloom', 'retrievers'];

  static lc_name() {
    return 'MemloomRetriever';
  }

  /** @param {MemloomRetrieverInput} fields */
  constructor({ store, recall = {}, ...fields }) {
    super(fields);
    /** @type {Store} */
    this.store = store;
    /** @type {RecallOptions} */
    this.recallOptions = recall;
  }

  /**
   * @param {string} query
   * @returns {Promise<Document<MemloomRetrieverMetadata>[]>}
   */
  async _getRelevantDocuments(query) {
    const { results } = await this.store.recall(query, this.recallOptions);
    return results.map(
      (h) =>
        new Document({
          id: String(h.id),
          pageContent: h.content,
          metadata: {
            id: h.id,
            kind: h.kind,
            source: h.source,
            breadcrumb: h.breadcrumb,
            key: h.key,
            rrfScore: h.rrfScore,
            similarity: h.similarity,
            ranks: h.ranks,
          },
        }),
    );
  }
}
