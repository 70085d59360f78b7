#!/usr/bin/env node
// The memloom CLI (src/cli/main.js; one module per command in src/cli/commands/). A command on
// an embedded store goes to the store's warm process when it can (src/cli/warm.js); otherwise,
// and for every other command, the CLI runs it here.
import { setFlagsFromString } from 'node:v8';
import { oneShot, tryWarm, v8Flags } from '../src/cli/warm.js';

// A reader that stops early (`memloom recall ... | head`) closes the pipe: stop quietly, as
// ripgrep and git do, instead of an unhandled EPIPE stack trace (the warm and the cold path).
process.stdout.on('error', (e) => {
  if (/** @type {any} */ (e).code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

const argv = process.argv.slice(2);
// Before any WebAssembly is compiled: a one-shot command runs on V8's baseline compiler alone,
// long work tiers up only what stays hot (warm.js, oneShot and v8Flags, say why and what they
// measured).
const once = oneShot(argv);
for (const flag of v8Flags(argv)) setFlagsFromString(flag);
const warm = await tryWarm(argv);
if (typeof warm === 'number') process.exitCode = warm;
else {
  await (await import('../src/cli/main.js')).main(argv, { oneShot: once });
  // Nothing served the store: the warm process spawned meanwhile takes it now, for the commands
  // that follow (or, after a failure, is stopped).
  warm?.after(Number(process.exitCode ?? 0));
}
