// Argument checks shared by the commands: every failure is a UsageError (exit 2) naming the flag.
import { MemloomError } from '../errors.js';

/** A wrong command line: exit 2 with a message naming the flag and what it takes. */
export class UsageError extends MemloomError {}

/**
 * @param {string} s
 * @param {string} flag
 */
export function positiveInt(s, flag) {
  const n = Number(s);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} takes a positive integer, not "${s}"`);
  return n;
}

/** @param {string} s */
export function splitList(s) {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}
