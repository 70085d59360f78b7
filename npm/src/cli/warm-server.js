// The warm process of one embedded store (cli/warm.js starts it; protocol: warm-node.js). It
// opens the store once, holds its lock like any process that has it open, listens on the
// store's Unix domain socket (DIR/daemon.sock, mode 0600; never TCP) and runs the CLI commands
// it is sent one at a time, through the same command code as the cold path (main.js run) with
// its output collected (output.js setSink): the same stdout, stderr and exit code. It exits after
// daemon.idleSeconds without a command, on `memloom daemon stop`, on SIGTERM, when its directory
// is removed, and when any process asks it to release the store (entry-node.js). A command for another store, namespace,
// embedder setting or package version is not run: the CLI stops this process and starts one
// that matches.
//   node src/cli/warm-server.js '{"dir": "/abs/.memloom", "namespace": "ns", "embedder": "hash-v1"}'
// stdout: one line, "ready PID" or "fail WHY", then nothing (the CLI closes the pipe).
import { chmodSync, existsSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { DEFAULT_NAMESPACE } from '../store.js';
import { section } from '../settings.js';
import { sleep, socketPath } from '../warm-node.js';
import { Context } from './context.js';
import { VERSION, run } from './main.js';
import { setSink } from './output.js';
import { PKG_DIR } from './warm.js';

/** A command this process does not serve (another store, namespace or embedder). */
class NotThisStore extends Error {}

/**
 * What must match between the store this process holds and a command's: the target, the
 * namespace and every embedder setting (the API key included).
 * @param {Context} ctx
 */
function fingerprint(ctx) {
  const t = ctx.target;
  return JSON.stringify([t.dir ?? null, t.url ?? null, ctx.g.namespace ?? DEFAULT_NAMESPACE, section(ctx.settings, 'embedder'), ctx.settings.apiKeyFallback ?? null]);
}

process.stdout.on('error', () => {});
/** @param {string} s */
const say = (s) => {
  try {
    process.stdout.write(s + '\n');
  } catch {}
};

const init = JSON.parse(process.argv[2] ?? '{}');
const pid = process.pid;
const sockPath = socketPath(init.dir);
const startedAt = new Date().toISOString();
/** @type {import('../store.js').Store} */
let store;
/** @type {() => Promise<void>} */
let closeStore;
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
// Commands close the store they used (Context#withStore): here that is a no-op, and the
// process closes it when it exits.
closeStore = store.close.bind(store);
store.close = async () => {};

class WarmContext extends Context {
  async open() {
    if (fingerprint(this) !== fp) throw new NotThisStore();
    return store;
  }
}

let requests = 0;
let lastUsedAt = startedAt;
let exiting = false;
let chain = Promise.resolve();
/** @type {ReturnType<typeof setTimeout> | undefined} */
let idleTimer;
/** @type {Set<(v: object) => void>} */
const pending = new Set();

function armIdle() {
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => void shutdown(), idleSeconds * 1000);
}

const status = () => ({ pid, version: VERSION, dir: init.dir, socket: sockPath, startedAt, lastUsedAt, requests, idleSeconds, exiting });

/** @param {Record<string, string>} next */
function setEnv(next) {
  for (const k of Object.keys(process.env)) if (!(k in next)) delete process.env[k];
  Object.assign(process.env, next);
}

/** Runs one CLI command as the cold path would, its output collected. @param {any} req */
async function runCommand(req) {
  const ownEnv = { ...process.env };
  const ownCwd = process.cwd();
  let out = '';
  let err = '';
  try {
    setEnv(req.env);
    process.chdir(req.cwd);
    setSink({ out: (s) => void (out += s), err: (s) => void (err += s) });
    const code = await run(req.argv, { context: (g) => new WarmContext(g), rethrow: (e) => e instanceof NotThisStore });
    return { code, out, err };
  } finally {
    setSink(null);
    setEnv(ownEnv);
    process.chdir(ownCwd);
  }
}

/** @param {any} msg @param {(v: object) => void} reply */
function handle(msg, reply) {
  if (msg?.op === 'hello') return reply(status());
  if (msg?.op === 'stop') {
    reply({ stopping: true, pid });
    return void shutdown();
  }
  if (msg?.op !== 'run') return reply({ error: 'unknown op' });
  if (exiting) return reply({ retry: 'exiting', pid });
  if (msg.version !== VERSION || msg.pkg !== PKG_DIR) return reply({ retry: 'version', pid });
  clearTimeout(idleTimer);
  chain = chain.then(async () => {
    if (exiting) return reply({ retry: 'exiting', pid });
    reply({ accepted: true });
    let broken = false;
    try {
      const r = await runCommand(msg);
      broken = r.err.includes('memloom: unexpected error');
      reply(r);
    } catch (e) {
      if (e instanceof NotThisStore) reply({ retry: 'mismatch', pid });
      else {
        broken = true;
        reply({ code: 2, out: '', err: `memloom: unexpected error in the warm process: ${/** @type {any} */ (e)?.stack ?? e}\n(please report it with the command you ran)\n` });
      }
    } finally {
      requests++;
      lastUsedAt = new Date().toISOString();
      // After an unexpected error the store may be in a bad state: the next command starts afresh.
      if (broken) void shutdown();
      else if (!exiting) armIdle();
    }
  });
}

const server = createServer((sock) => {
  let buf = '';
  let answered = false;
  /** @param {object} v */
  const reply = (v) => {
    if (answered) return;
    const last = !('accepted' in v);
    if (last) {
      answered = true;
      pending.delete(reply);
    }
    try {
      if (last) sock.end(JSON.stringify(v) + '\n');
      else sock.write(JSON.stringify(v) + '\n');
    } catch {}
  };
  pending.add(reply);
  sock.setEncoding('utf8');
  sock.on('data', (d) => {
    buf += d;
    const nl = buf.indexOf('\n');
    if (nl < 0 || answered) return;
    let msg;
    try {
      msg = JSON.parse(buf.slice(0, nl));
    } catch {
      return reply({ error: 'not JSON' });
    }
    buf = '';
    handle(msg, reply);
  });
  sock.on('error', () => {});
  sock.on('close', () => pending.delete(reply));
});

let ino = 0;
async function shutdown() {
  if (exiting) return;
  exiting = true;
  clearTimeout(idleTimer);
  await chain; // the command running finishes; queued ones are told to retry
  try {
    await closeStore();
  } catch {}
  for (const reply of pending) reply({ retry: 'exiting', pid });
  server.close();
  try {
    if (statSync(sockPath).ino === ino) unlinkSync(sockPath); // not a newer process's socket
  } catch {}
  process.exit(0);
}

for (const sig of /** @type {const} */ (['SIGTERM', 'SIGINT', 'SIGHUP'])) process.on(sig, () => void shutdown());

// This process holds the store's lock, so a socket file left here is stale (its process is gone).
try {
  unlinkSync(sockPath);
} catch {}
server.on('error', async (e) => {
  say(`fail cannot listen on ${sockPath}: ${e.message}`);
  await closeStore().catch(() => {});
  process.exit(1);
});
server.listen(sockPath, () => {
  try {
    chmodSync(sockPath, 0o600);
    ino = statSync(sockPath).ino;
  } catch {}
  for (const m of /** @type {const} */ (['log', 'info', 'warn', 'error', 'debug'])) console[m] = () => {};
  armIdle();
  // A store directory removed under it (rm -rf): nothing left to serve.
  setInterval(() => {
    if (!existsSync(join(init.dir, 'PG_VERSION'))) void shutdown();
  }, 5000).unref();
  say(`ready ${pid}`);
});
