// The store's checks of what a caller passes in: text PostgreSQL can hold, instants (the core's rule), sizes.
import { MemloomError } from '../errors.js';

/**
 * PostgreSQL text cannot hold U+0000 ("invalid byte sequence for encoding UTF8: 0x00"): refuse
 * it up front with a message that names the field, instead of a database error mid-write.
 */
export function checkNoNul(value, what) {
  if (value.includes('\0')) {
    throw new MemloomError(`${what} contains a NUL character (U+0000), which PostgreSQL cannot store; remove it`);
  }
}

/**
 * An instant option (`asOf`, `since`, `until`, a memory's `at`): a Date or an ISO 8601 string,
 * as the ISO string PostgreSQL gets, or null. The rule is memloom-core's (`toInstant` in
 * core.js), the edge worker's too; a browser store loads the core first (`ensureReady`).
 */
export { toInstant } from '../core.js';

/** Whether a JSON value holds U+0000 in a string or a key (jsonb refuses `\u0000`). */
export function hasNul(value) {
  if (typeof value === 'string') return value.includes('\0');
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => k.includes('\0') || hasNul(v));
}

/** An optional positive integer option, or its default. */
export function positive(value, fallback, name) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) throw new MemloomError(`${name} must be a positive integer, not ${value}`);
  return value;
}
