// The warm process of one embedded store (cli/warm.js starts it; protocol: warm-node.js). It
// opens the store once, holds its lock like any process that has it open, and serves the CLI
// commands sent to the store's warm socket (warm-socket.js, which `memloom mcp` serves too). It
// exits after daemon.idleSeconds without a command, on `memloom daemon stop`, on SIGTERM, when
// its directory is removed, and when any process asks it to release the store (entry-node.js).
// A command for another store, namespace, embedder setting or package version is not run: the
// CLI stops this process and starts one that matches.
//   node src/cli/warm-server.js '{"dir": "/abs/.memloom", "namespace": "ns", "embedder": "hash-v1"}'
// stdout: one line, "ready PID" or "fail WHY", then nothing (the CLI closes the pipe). With
// "after": PID and "spawnLock" (a CLI running the store's first command, warm.js Handoff), it
// loads its modules meanwhile and opens the store once that CLI has exited and handed it the
// spawn lock; otherwise it exits.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { releaseSpawnLock, sleep, socketPath, waitExit } from '../warm-node.js';
import { Context } from './context.js';
import { fingerprint, serveWarmSocket } from './warm-socket.js';

process.stdout.on('error', () => {});
// Before PGlite's WebAssembly is compiled (the store opens below). V8 moves a WebAssembly
// function to its optimizing tier once it has run a budget of code; at the default budget the
// store's open and first queries already send hundreds of PGlite's functions there, compiled on
// background threads that a 2-core machine's start cannot spare (ten times the budget: open 0.49
// instead of 0.56 s). A thousand times: the warm-up recall below takes 90-97 instead of 180-215
// ms on the Node docs store, and the functions a long run keeps hot still tier up: after about
// 1,200 memloom_fuse calls in one process a recall's p50 is 7% above ten times the budget's
// (9.7-10.0 against 9.0-9.1 ms), about 1% of a warm CLI call's wall time.
setFlagsFromString('--wasm-tiering-budget=1800000000');
const init = JSON.parse(process.argv[2] ?? '{}');
if (init.after) {
  // Spawned by a CLI that runs the store's first command itself: the store is that CLI's until
  // it exits, and this process's to open only if the CLI then handed it the spawn lock (after
  // a failure or a crash it did not: nothing starts). Polled often: the wait is on the path of
  // a command that comes right after the first.
  await waitExit(init.after, Infinity, 5);
  let holder;
  try {
    holder = Number.parseInt(readFileSync(init.spawnLock, 'utf8'), 10);
  } catch {}
  if (holder !== process.pid) process.exit(0);
}
/** The outcome, "ready PID" or "fail WHY": on stdout for a CLI that waits (daemon start); a
 * CLI that handed its spawn lock over (warm.js, Handoff) left it to this process to release.
 * @param {string} s */
const say = (s) => {
  try {
    process.stdout.write(s + '\n');
  } catch {}
  if (init.spawnLock) releaseSpawnLock(init.spawnLock);
};

/** @type {import('../store.js').Store} */
let store;
let fp = '';
let idleSeconds = 0;
try {
  const ctx = new Context({ store: init.dir, namespace: init.namespace, embedder: init.embedder, quiet: true });
  idleSeconds = Number(ctx.settings.values['daemon.idleSeconds']);
  if (!idleSeconds) {
    say('fail disabled (daemon.idleSeconds is 0)');
    process.exit(0);
  }
  fp = fingerprint(ctx);
  // A process that is closing the store (another warm process stopping) releases it soon.
  for (let attempt = 0; ; attempt++) {
    try {
      store = await ctx.open();
      break;
    } catch (e) {
      if (attempt >= 10 || !/in use by pid/.test(String(/** @type {any} */ (e)?.message))) throw e;
      await sleep(100);
    }
  }
} catch (e) {
  say(`fail ${String(/** @type {any} */ (e)?.message ?? e).split('\n')[0]}`);
  process.exit(1);
}

/** @type {Awaited<ReturnType<typeof serveWarmSocket>> | undefined} */
let socket;
let exiting = false;
async function shutdown() {
  if (exiting) return;
  exiting = true;
  await socket?.close(); // the command running finishes; queued ones are told to retry
  try {
    await store.close();
  } catch {}
  process.exit(0);
}

for (const sig of /** @type {const} */ (['SIGTERM', 'SIGINT', 'SIGHUP'])) process.on(sig, () => void shutdown());

try {
  socket = await serveWarmSocket({ dir: init.dir, store, fingerprint: fp, owner: 'warm', idleSeconds, onIdle: shutdown, onStop: shutdown, onBroken: shutdown });
} catch (e) {
  say(`fail cannot listen on ${socketPath(init.dir)}: ${/** @type {any} */ (e)?.message ?? e}`);
  await store.close().catch(() => {});
  process.exit(1);
}
for (const m of /** @type {const} */ (['log', 'info', 'warn', 'error', 'debug'])) console[m] = () => {};
// A store directory removed under it (rm -rf): nothing left to serve.
setInterval(() => {
  if (!existsSync(join(init.dir, 'PG_VERSION'))) void shutdown();
}, 5000).unref();
say(`ready ${process.pid}`);

// The first recall's compile and planning (Store#_warmUp), once the socket is open: a command
// sent meanwhile waits for it on the store's one connection and then runs warm, and one that
// comes later finds it done.
void store._warmUp();
