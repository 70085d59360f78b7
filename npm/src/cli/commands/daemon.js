import { UsageError } from '../args.js';
import { idleSetting, startWarm } from '../warm.js';
import { socketPath, stopWarm, warmStatus } from '../../warm-node.js';

const ACTIONS = ['status', 'start', 'stop'];

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'daemon',
  summary: 'the warm process that keeps an embedded store open between commands: status, start, stop',
  description:
    'On an embedded store, recall, remember, forget, stats and history run in a warm process that keeps the store open (taking it after the first such command, which runs on its own; detached; it listens on a Unix socket in the store directory, never on the network) ' +
    'and exits by itself after daemon.idleSeconds without a command (300; MEMLOOM_DAEMON_IDLE, or "daemon": {"idleSeconds": N} in memloom.config.json; 0: no warm process). ' +
    'Any other process that opens the store (another command, openStore, memloom mcp) makes it close the store first. ' +
    'While `memloom mcp` runs on the store, it serves these commands itself (status shows it; stop refuses: it runs until its MCP client disconnects). ' +
    'status: whether one runs, its pid and counts; start: start it now; stop: stop it (and wait until it has closed the store).',
  args: [{ name: 'action', description: 'status, start or stop' }],
  examples: [
    ['memloom daemon status', 'is a warm process serving ./.memloom?'],
    ['memloom daemon stop --store ~/notes/.memloom', 'close the store now'],
    ['MEMLOOM_DAEMON_IDLE=0 memloom recall "deploy"', 'this command without the warm process'],
  ],
  json: 'status, start: {running, dir, socket, pid?, owner? (warm or mcp), namespace?, version?, startedAt?, lastUsedAt?, requests?, idleSeconds?}; stop: {stopped, dir, pid?, owner? (mcp: not stopped)}',
  async run(ctx, [action]) {
    if (!ACTIONS.includes(action)) throw new UsageError(`daemon takes ${ACTIONS.join(', ')}, not "${action}"; see memloom daemon --help`);
    const target = ctx.target;
    if (!target.dir) throw new UsageError('the warm process is for an embedded store (--store DIR); a PostgreSQL server needs none');
    const dir = target.dir;
    if (action === 'stop') {
      const r = await stopWarm(dir);
      if (ctx.json) ctx.outJson({ ...r, dir });
      else if (r.owner === 'mcp') ctx.out(`\`memloom mcp\` (pid ${r.pid}) serves ${dir}, not a warm process: it runs until its MCP client disconnects (not stopped)`);
      else ctx.out(r.stopped ? `stopped the warm process of ${dir} (pid ${r.pid})` : `no warm process serves ${dir}`);
      return 0;
    }
    if (action === 'start') {
      if (!ctx.exists()) throw new UsageError(`no memloom store at ${dir}; run \`memloom init\` first`);
      if (idleSetting(dir) === 0) ctx.warn('the warm process is disabled (daemon.idleSeconds is 0)');
      else if (!(await warmStatus(dir))) await startWarm(dir, { namespace: ctx.g.namespace, embedder: ctx.g.embedder });
    }
    const s = await warmStatus(dir);
    if (ctx.json) ctx.outJson(s ? { running: true, ...s, dir } : { running: false, dir, socket: socketPath(dir) });
    else if (!s) ctx.out(`no warm process serves ${dir}${action === 'start' ? ' (it did not start: run a command without it, e.g. memloom stats, to see why)' : ''}`);
    else
      ctx.out(
        `${s.owner === 'mcp' ? '`memloom mcp`' : 'warm process'} pid ${s.pid} (memloom ${s.version}) serves ${dir} since ${s.startedAt}: ${s.requests} command${s.requests === 1 ? '' : 's'}, last ${s.lastUsedAt}; ` +
          `${s.owner === 'mcp' ? 'runs until its MCP client disconnects' : `exits after ${s.idleSeconds} s idle`}; socket ${s.socket}`,
      );
    return action === 'start' && !s && idleSetting(dir) !== 0 ? 2 : 0;
  },
};
