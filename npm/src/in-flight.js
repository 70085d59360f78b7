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

/**
 * Writes that run one at a time behind the work that prepares the next: `start(write)` waits
 * for the write before it (raising its error), then starts `write` without waiting for it. A
 * server store writes in its own process, so the caller reads, chunks and embeds the next
 * batch meanwhile (PGlite writes on the caller's thread: there a started write ends before
 * the caller goes on, as if awaited). Writes commit in order and nothing else uses the
 * connection meanwhile, as long as the caller queries only after `settle()`.
 */
export function writeBehind() {
  /** @type {Promise<{ error: unknown } | null> | null} */
  let pending = null;
  const settle = async () => {
    const failed = await pending;
    pending = null;
    if (failed) throw failed.error;
  };
  return {
    /** @param {() => Promise<unknown>} write */
    async start(write) {
      await settle();
      pending = write().then(
        () => null,
        (error) => ({ error }),
      );
    },
    /** Waits for the write in flight, raising its error. */
    settle,
    /** Waits for the write in flight without raising: before another error is raised. */
    async drain() {
      await pending;
      pending = null;
    },
  };
}
