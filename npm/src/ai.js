// `memloom/ai`: memloom's recall and remember as Vercel AI SDK tools (`tool()` from the `ai`
// package, an optional peer dependency), for generateText / streamText / agents. Names,
// descriptions, input schemas and checks are the MCP server's (tools.js): an agent gets the same
// tools whichever door it comes through. The model reads recall as the MCP server's citable
// text (formatRecall); the tool's output is the structured Recall.
import { tool } from 'ai';
import { z } from 'zod';
import { ensureReady } from './core.js';
import { MemloomError } from './errors.js';
import { DEFAULT_LIMIT, TOOLS, formatRecall, rememberError } from './tools.js';
/** @import { Store } from './store.js' */
/** @import { Recall, Remembered, RecallOptions } from './types.js' */

/**
 * @typedef {object} MemloomToolsOptions
 * @property {Omit<RecallOptions, 'limit' | 'kinds'>} [recall] Fixed recall options (weights, arms, ...) for every call.
 */

/**
 * The AI SDK tools `{ recall, remember }` over an open store.
 * @param {Store} store
 * @param {MemloomToolsOptions} [options]
 */
export function memloomTools(store, { recall: fixed = {} } = {}) {
  return {
    recall: tool({
      title: TOOLS.recall.title,
      description: TOOLS.recall.description,
      inputSchema: z.object(TOOLS.recall.inputSchema),
      /**
       * @param {{ query: string, limit?: number, kinds?: Array<'memory' | 'chunk'> }} input
       * @returns {Promise<Recall>}
       */
      execute: async ({ query, limit, kinds }) => {
        if (query.trim() === '') throw new MemloomError('query is empty; pass the text to look for');
        const r = await store.recall(query, { ...fixed, limit: limit ?? DEFAULT_LIMIT, kinds });
        // toModelOutput (synchronous) writes the text with the core; a browser store with an
        // API embedder may not have loaded it yet.
        await ensureReady();
        return r;
      },
      /** @param {{ output: Recall }} o */
      toModelOutput: ({ output }) => ({ type: 'text', value: formatRecall(output) }),
    }),
    remember: tool({
      title: TOOLS.remember.title,
      description: TOOLS.remember.description,
      inputSchema: z.object(TOOLS.remember.inputSchema),
      /**
       * @param {{ text: string, key?: string }} input
       * @returns {Promise<Remembered>}
       */
      execute: async ({ text, key }) => {
        const invalid = rememberError(text, key);
        if (invalid) throw new MemloomError(invalid);
        return store.remember(text, { key });
      },
    }),
  };
}
