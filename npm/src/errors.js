/** An error meant for the user: its message says what went wrong and what to do. */
export class MemloomError extends Error {
  /**
   * @param {string} message What went wrong and what to do.
   * @param {ErrorOptions} [options] `{ cause }`
   */
  constructor(message, options) {
    super(message, options);
    this.name = 'MemloomError';
  }
}

/** Attempts of one write transaction in all (as memloom-sql's WRITE_ATTEMPTS). */
export const WRITE_ATTEMPTS = 3;

/** A lost race that running the transaction again can win: 40001 (serialization failure) or 40P01 (deadlock). */
export function isTransient(e) {
  return e?.code === '40001' || e?.code === '40P01';
}
