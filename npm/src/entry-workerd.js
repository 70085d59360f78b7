// workerd (Cloudflare Workers) entry of `memloom`: the core (entry-core-workerd.js); a store on
// workerd is a Postgres server reached from the Rust edge worker, so openStore always rejects.
export * from './entry-core-workerd.js';

/**
 * Always rejects on workerd: a store there is a Postgres server reached from the Rust edge worker.
 * @param {import('./types.js').OpenStoreOptions} [_options]
 * @returns {Promise<never>}
 */
export async function openStore(_options) {
  throw new Error(
    'memloom: openStore is not available on workerd; query Postgres from the edge worker (crates/edge-worker) or use the Node / browser builds',
  );
}
