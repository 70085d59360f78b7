// Requests to a remote API (embeddings, entity extraction) with a few in flight at once: such an
// API answers in network and queue time, so one request at a time left a long ingest or index
// run waiting on each round trip in turn.
import { MemloomError } from './errors.js';

/**
 * `run(job, i)` for every job, at most `limit` at once, started in order; the results in the
 * jobs' order. The first failure stops new jobs, and is raised once none is in flight, so
 * nothing keeps running after the caller sees the error.
 * @template J, R
 * @param {J[]} jobs
 * @param {number} limit
 * @param {(job: J, i: number) => Promise<R>} run
 * @returns {Promise<R[]>}
 */
export async function inFlight(jobs, limit, run) {
  const results = new Array(jobs.length);
  let next = 0;
  let failed = null;
  const worker = async () => {
    while (!failed && next < jobs.length) {
      const i = next++;
      try {
        results[i] = await run(jobs[i], i);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  if (failed) throw failed.error;
  return results;
}

/**
 * A `concurrency` option checked: a whole number from 1.
 * @param {unknown} value
 * @param {string} what who takes it, for the message: "the embeddings API"
 * @param {string} env the environment variable that sets it
 * @returns {number}
 */
export function concurrencyOption(value, what, env) {
  if (!Number.isInteger(value) || /** @type {number} */ (value) < 1) {
    throw new MemloomError(`${what}'s concurrency is the requests in flight at once, a whole number from 1, not ${JSON.stringify(value)}; set ${env}`);
  }
  return /** @type {number} */ (value);
}
