// Progress on stderr: a one-line bar on a TTY (counts and rate); piped (logs, CI), a plain line
// every `everyFiles` files or items, or every `everyMs` when they come slowly; nothing with --quiet.
import { err } from './output.js';

/**
 * @typedef {{ done: number, total: number, chunks?: number, started: number, tick?: boolean }} Tick
 * @typedef {{ update(t: Tick): void, clear(): void, done(): void }} Progress
 */

/**
 * @param {string} unit  "files", "items", "memories", "queries"
 * @param {{ quiet?: boolean, everyFiles?: number, everyMs?: number, everyBatches?: number, label?: string }} o
 *   everyBatches: count ticks (`tick: true`, one per committed batch) instead of items; label: a
 *   prefix ("eval fused")
 * @returns {Progress}
 */
export function progressBar(unit, { quiet = false, everyFiles = 100, everyMs = 2000, everyBatches = 0, label = '' } = {}) {
  const prefix = label ? `${label}: ` : '';
  const tty = process.stderr.isTTY && !process.env.CI;
  let last = 0;
  let lastPlain = Date.now();
  let lastDone = 0;
  let ticks = 0;
  let shown = false;
  return {
    update({ done, total, chunks, started, tick = false }) {
      if (quiet) return;
      const now = Date.now();
      const rate = done / Math.max((now - started) / 1000, 0.001);
      if (!tty) {
        if (done >= total || done === lastDone) return;
        const due =
          everyBatches > 0
            ? tick && ++ticks % everyBatches === 0
            : done - lastDone >= everyFiles || now - lastPlain >= everyMs;
        if (!due) return;
        lastPlain = now;
        lastDone = done;
        const extra = chunks === undefined ? '' : `, ${chunks} chunks`;
        err(`memloom: ${prefix}${done}/${total} ${unit} (${Math.floor((100 * done) / Math.max(total, 1))}%)${extra}, ${rateText(rate)} ${unit}/s`);
        return;
      }
      if (done < total && now - last < 100) return;
      last = now;
      const width = 28;
      const filled = total ? Math.round((done / total) * width) : 0;
      const extra = chunks === undefined ? '' : `  ${chunks} chunks`;
      process.stderr.write(`\r${prefix}[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${unit}${extra}  ${rateText(rate)} ${unit}/s\x1b[K`);
      shown = true;
    },
    clear() {
      if (shown) process.stderr.write('\r\x1b[K');
    },
    done() {
      if (shown) process.stderr.write('\n');
      shown = false;
    },
  };
}

/**
 * A rate as progress shows it: whole numbers from 10 a second, else one decimal, and two below
 * 0.1 (an embeddings API can take minutes a file: "0 files/s" read as stalled).
 * @param {number} rate
 */
export function rateText(rate) {
  if (rate >= 10) return rate.toFixed(0);
  if (rate >= 0.1) return rate.toFixed(1);
  return rate.toFixed(2);
}

/**
 * What a write says before the embedded store builds its HNSW indexes: the one step of a long
 * import that advances no counter (15 s to a minute for 25k active items, much longer past the
 * build memory's cap: docs/BENCHMARKS.md "Bulk remember"), which looked like a hang.
 * @param {import('../types.js').IndexBuild} e
 */
export function indexBuildLine({ items }) {
  return `the store holds ${items} active items now: building its vector index over them (once; minutes on a large store, longer when its graph outgrows memory)`;
}
