/** An error meant for the user: its message says what went wrong and what to do. */
export class MemloomError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'MemloomError';
  }
}
