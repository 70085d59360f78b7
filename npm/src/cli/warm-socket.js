// The server side of an embedded store's warm socket (protocol: warm-node.js): the CLI commands
// sent to DIR/daemon.sock (mode 0600; never TCP) run one at a time against a store this process
// already holds open, through the same command code as the cold path (main.js run) with their
// output collected (output.js setSink): the same stdout, stderr and exit code. Two kinds of
// process serve it, so that a store keeps one PGlite owner whichever of them holds it:
// - the warm process (warm-server.js, owner 'warm'), which a CLI starts and which stops when
//   asked (`memloom daemon stop`, another opener of the store) or after daemon.idleSeconds;
// - `memloom mcp` (commands/mcp.js, owner 'mcp'), which serves its MCP client and, beside it,
//   the CLI's commands on its store (issue 19, item 3). It stops only when its client goes, so
//   it refuses `stop`, and any other opener of the store meets the store's lock as before.
// A command for another store, namespace, embedder setting or package version is not run: the
// CLI stops the warm process and starts one that matches, or, when `memloom mcp` holds the
// store, runs the command cold (and meets the lock).
import { chmodSync, statSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { DEFAULT_NAMESPACE } from '../store.js';
import { section } from '../settings.js';
import { socketPath } from '../warm-node.js';
import { Context } from './context.js';
import { VERSION, run } from './main.js';
import { setSink } from './output.js';
import { PKG_DIR } from './warm.js';

/** A command this process does not serve (another store, namespace or embedder). */
class NotThisStore extends Error {}

/**
 * What must match between the store a process holds and a command's: the target, the
 * namespace and every embedder setting (the API key included).
 * @param {Context} ctx
 */
export function fingerprint(ctx) {
  const t = ctx.target;
  // Whether the embedder was named at all: unnamed, a store uses the one it was built with.
  const named = ctx.settings.sources['embedder.name'] !== 'default';
  return JSON.stringify([t.dir ?? null, t.url ?? null, ctx.g.namespace ?? DEFAULT_NAMESPACE, section(ctx.settings, 'embedder'), named, ctx.settings.apiKeyFallback ?? null]);
}

/** @param {Record<string, string>} next */
function setEnv(next) {
  for (const k of Object.keys(process.env)) if (!(k in next)) delete process.env[k];
  Object.assign(process.env, next);
}

/**
 * Listens on the warm socket of the store in `dir` and serves CLI commands against `store`.
 * Resolves once listening; rejects when it cannot listen.
 * @param {{ dir: string, store: import('../store.js').Store, fingerprint: string, owner: 'warm' | 'mcp',
 *   idleSeconds?: number, onIdle?: () => void, onStop?: () => void, onBroken?: () => void }} o
 *   idleSeconds / onIdle: called after that long without a command (the warm process exits);
 *   onStop: a `stop` request (the warm process; without it, as for `memloom mcp`, stop is
 *   refused); onBroken: a command met an unexpected error (the warm process starts afresh)
 */
export async function serveWarmSocket({ dir, store, fingerprint: fp, owner, idleSeconds, onIdle, onStop, onBroken }) {
  const pid = process.pid;
  const sockPath = socketPath(dir);
  const startedAt = new Date().toISOString();
  let requests = 0;
  let lastUsedAt = startedAt;
  let exiting = false;
  let chain = Promise.resolve();
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let idleTimer;
  /** @type {Set<(v: object) => void>} */
  const pending = new Set();

  // The store is this process's, not the command's: a command's withStore leaves it open.
  class WarmContext extends Context {
    async open() {
      if (fingerprint(this) !== fp) throw new NotThisStore();
      return store;
    }

    /** @type {Context['withStore']} */
    async withStore(fn) {
      return fn(await this.open());
    }
  }

  const armIdle = () => {
    clearTimeout(idleTimer);
    if (idleSeconds && onIdle) idleTimer = setTimeout(onIdle, idleSeconds * 1000);
  };

  const status = () => ({ pid, owner, namespace: store.namespace, version: VERSION, dir, socket: sockPath, startedAt, lastUsedAt, requests, idleSeconds: owner === 'mcp' ? null : idleSeconds, exiting });

  /** Runs one CLI command as the cold path would, its output collected. @param {any} req */
  async function runCommand(req) {
    const ownEnv = { ...process.env };
    const ownCwd = process.cwd();
    let out = '';
    let err = '';
    try {
      // Only the command's own code reads them (its settings, relative paths); the store's
      // methods, which an MCP tool call may run meanwhile, read neither.
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
      if (!onStop) return reply({ stopping: false, pid, owner });
      reply({ stopping: true, pid });
      return void onStop();
    }
    if (msg?.op !== 'run') return reply({ error: 'unknown op' });
    if (exiting) return reply({ retry: 'exiting', pid });
    if (msg.version !== VERSION || msg.pkg !== PKG_DIR) return reply({ retry: 'version', pid, owner });
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
        if (e instanceof NotThisStore) reply({ retry: 'mismatch', pid, owner });
        else {
          broken = true;
          reply({ code: 2, out: '', err: `memloom: unexpected error in the warm process: ${/** @type {any} */ (e)?.stack ?? e}\n(please report it with the command you ran)\n` });
        }
      } finally {
        requests++;
        lastUsedAt = new Date().toISOString();
        // After an unexpected error the store may be in a bad state: the next command starts afresh.
        if (broken && onBroken) onBroken();
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

  // This process holds the store's lock, so a socket file left here is stale (its process is gone).
  try {
    unlinkSync(sockPath);
  } catch {}
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(sockPath, () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  let ino = 0;
  try {
    chmodSync(sockPath, 0o600);
    ino = statSync(sockPath).ino;
  } catch {}
  armIdle();

  return {
    socket: sockPath,
    /**
     * Stops taking commands: the one running finishes, queued and later ones are told to retry
     * (their CLI waits for this process to exit, then runs them elsewhere); the socket is
     * removed. The store stays open: the caller closes it after this resolves.
     */
    async close() {
      if (exiting) return;
      exiting = true;
      clearTimeout(idleTimer);
      await chain;
      for (const reply of pending) reply({ retry: 'exiting', pid });
      server.close();
      try {
        if (statSync(sockPath).ino === ino) unlinkSync(sockPath); // not a newer process's socket
      } catch {}
    },
  };
}
