// The store's checks of what a caller passes in: text PostgreSQL can hold, instants, sizes.
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
 * An instant option (`asOf`, `since`, `until`, a memory's `at`): a Date or an ISO 8601 string
 * (`2026-03-01`, `2026-03-01T12:00Z`, with seconds and an offset). Returns the ISO string
 * PostgreSQL gets, in milliseconds (the stored precision, docs/TIME.md), or null for null /
 * undefined. A date alone means midnight UTC; with `endOfDay` (until) the last millisecond of
 * that day, so `until: '2023-05-08'` includes the 8th.
 */
export function toInstant(value, what, { endOfDay = false } = {}) {
  if (value == null) return null;
  let d;
  if (value instanceof Date) d = value;
  else if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/i.test(value.trim())) {
    const v = value.trim();
    const dateOnly = v.length === 10;
    // The calendar and the clock, checked here: Date rolls 2023-02-30 over to March 2.
    const [y, mo, day] = [+v.slice(0, 4), +v.slice(5, 7), +v.slice(8, 10)];
    const [h, mi, sec] = dateOnly ? [0, 0, 0] : [+v.slice(11, 13), +v.slice(14, 16), v[16] === ':' ? +v.slice(17, 19) : 0];
    if (mo < 1 || mo > 12 || day < 1 || day > new Date(Date.UTC(y, mo, 0)).getUTCDate() || h > 23 || mi > 59 || sec > 59) {
      throw new MemloomError(`${what} is not a valid date or time: ${JSON.stringify(value)}`);
    }
    // A time without an offset is taken as UTC, as a date alone is (never the machine's zone).
    d = new Date(dateOnly || /(Z|[+-]\d{2}(:?\d{2})?)$/i.test(v) ? v : `${v}Z`);
    if (dateOnly && endOfDay && !Number.isNaN(d.getTime())) d = new Date(d.getTime() + 86_400_000 - 1);
  } else {
    throw new MemloomError(`${what} must be a Date or an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00Z, not ${JSON.stringify(value)}`);
  }
  if (Number.isNaN(d.getTime())) throw new MemloomError(`${what} is not a valid date or time: ${JSON.stringify(String(value))}`);
  return d.toISOString();
}

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
