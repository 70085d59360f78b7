// The CLI's warm process (src/cli/warm.js, warm-server.js, warm-node.js): the same output as the
// cold path, one process per store when two CLIs start at once, a stale socket recovered, the idle
// exit, nothing spawned when disabled, any other opener of the store making it let go, and
// `memloom mcp` serving the CLI's commands on its store.
// helpers.js runCli disables the warm process; these tests turn it on (MEMLOOM_DAEMON_IDLE) and
// stop every process they started (after()).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bin, emptyXdg, runCli, fixtures } from './helpers.js';
import { openStore } from '../src/entry-node.js';
import { alive, lockHolder } from '../src/lock-node.js'; // a zombie (exited, not yet reaped) is not alive
import { oneShot, v8Flags } from '../src/cli/warm.js';
import { Context } from '../src/cli/context.js';

const tmp = mkdtempSync(join(tmpdir(), 'memloom-warm-'));
const WARM = { MEMLOOM_DAEMON_IDLE: '30' };
const COLD = { MEMLOOM_DAEMON_IDLE: '0' };
/** taskset (util-linux), to run a CLI on one CPU; null where there is none. */
const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((p) => existsSync(p)) ?? null;

/** Pids of warm-server.js processes serving a store under `root` (from /proc). */
function warmPids(root = tmp) {
  const pids = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    let cmd;
    try {
      cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmd.includes('warm-server.js') && cmd.includes(root)) pids.push(Number(p));
  }
  return pids;
}



test('one-shot commands (the warm ones and init) run on V8\'s baseline compiler; long work and the forms that stream keep both tiers', () => {
  for (const argv of [['recall', 'q'], ['--store', 'd', 'remember', 'x'], ['forget', 'k'], ['stats', '--json'], ['history', 'k'], ['init', '--embedder', 'static-v2'], ['--database-url', 'postgres://h/db', 'recall', 'q']]) {
    assert.equal(oneShot(argv), true, argv.join(' '));
    assert.deepEqual(v8Flags(argv), ['--liftoff-only'], argv.join(' '));
  }
  for (const argv of [['ingest', 'docs'], ['index'], ['recall', '--batch', 'q.jsonl'], ['remember', '--file', 'm.jsonl'], ['import', 'd.jsonl'], ['export'], ['eval'], ['mcp'], ['recall', '--help'], ['--store', 'recall', 'ingest', 'd'], []]) {
    assert.equal(oneShot(argv), false, argv.join(' '));
    assert.deepEqual(v8Flags(argv), ['--wasm-tiering-budget=18000000'], argv.join(' '));
  }
  // v8.setFlagsFromString ignores a flag this V8 does not know; node's command line refuses it.
  for (const flag of [...v8Flags(['recall', 'q']), ...v8Flags(['index'])]) {
    const r = spawnSync(process.execPath, [flag, '-e', '0'], { encoding: 'utf8' });
    assert.equal(r.status, 0, `${flag}: ${r.stderr}`);
  }
});

test('a one-shot command opens an embedded store with a 16MB buffer pool, anything else with 64MB', async () => {
  const dir = newStore('pool');
  for (const [oneShot, want] of [[true, '16MB'], [false, '64MB']]) {
    const store = await new Context({ store: dir }, { oneShot }).open();
    try {
      assert.equal((await store.db.query('SHOW shared_buffers')).rows[0].shared_buffers, want);
    } finally {
      await store.close();
    }
  }
});

async function until(fn, ms, what) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

after(async () => {
  // Stop what these tests started: politely, then by pid.
  for (const pid of warmPids()) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {}
  }
  await until(() => warmPids().length === 0, 15000, 'the warm processes to exit').catch(() => {
    for (const pid of warmPids()) process.kill(pid, 'SIGKILL');
  });
  rmSync(tmp, { recursive: true, force: true });
});

/** A new store with the fixture docs and two memories (cold). */
function newStore(name) {
  const dir = join(tmp, name, '.memloom');
  mkdirSync(join(tmp, name), { recursive: true });
  for (const args of [['init'], ['ingest', join(fixtures, 'docs')], ['remember', 'Deploys freeze on Fridays at 18:00', '--key', 'deploy-freeze']]) {
    const r = runCli([...args, '--store', dir, '-q'], { env: COLD });
    assert.equal(r.status, 0, r.stderr);
  }
  return dir;
}

const status = (dir) => JSON.parse(runCli(['daemon', 'status', '--store', dir, '--json'], { env: COLD }).stdout);

test('warm and cold give the same output for remember, recall, forget, stats and history', () => {
  const a = newStore('same-a');
  const b = newStore('same-b');
  const steps = [
    ['remember', 'Deploys freeze on Thursdays from now on', '--key', 'deploy-freeze'],
    ['remember', 'use pnpm, not npm', '--json'],
    ['recall', 'when do deploys freeze'],
    ['recall', 'postgres connections', '--json', '--explain', '--limit', '3'],
    ['history', 'deploy-freeze'],
    ['history', 'no-such-key'],
    ['stats', '--json'],
    ['forget', '--key', 'deploy-freeze'],
    ['forget', '--id', '9999', '--json'],
    ['recall', 'when do deploys freeze', '--kinds', 'memory'],
    ['recall', '--limit', '0', 'x'],
  ];
  // Timestamps, timings and the store's path differ between the two stores and runs.
  const norm = (s, dir) =>
    s
      .replaceAll(dir, 'DIR')
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TIME')
      .replace(/"(tookMs|embedMs|queryMs|connectMs)":[\d.]+/g, '"$1":0')
      .replace(/in [\d.]+ ms/g, 'in N ms');
  for (const step of steps) {
    const warm = runCli([...step, '--store', a], { env: WARM });
    const cold = runCli([...step, '--store', b], { env: COLD });
    const what = step.join(' ');
    assert.equal(warm.status, cold.status, `${what}: exit status (${warm.stderr} / ${cold.stderr})`);
    assert.equal(norm(warm.stdout, a), norm(cold.stdout, b), `${what}: stdout`);
    assert.equal(norm(warm.stderr, a), norm(cold.stderr, b), `${what}: stderr`);
  }
  // The first step ran in the CLI, which then started the warm store's warm process; every
  // later step ran there, one right after the other; the cold store never had one.
  const s = status(a);
  assert.equal(s.running, true);
  assert.equal(s.requests, steps.length - 1, 'every step after the first ran there (the usage error too: it prints the same)');
  assert.deepEqual(warmPids(join(tmp, 'same-a')), [s.pid]);
  assert.equal(status(b).running, false);
  assert.deepEqual(warmPids(join(tmp, 'same-b')), []);
});

test('a command that is not a warm one (index), and openStore, make the warm process let go of the store', async () => {
  const dir = newStore('letgo');
  assert.equal(runCli(['recall', 'deploy', '--store', dir], { env: WARM }).status, 0);
  // Right after the first command its warm process is still starting (it holds the store
  // before it listens): index waits for it, then makes it let go.
  const [starting] = warmPids(join(tmp, 'letgo'));
  assert.ok(starting, 'the first command started a warm process');
  await until(() => lockHolder(dir) === starting, 15000, 'the warm process to take the store');
  const r = runCli(['index', '--store', dir, '--json'], { env: WARM });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(alive(starting), false, 'index stopped the warm process before opening the store');
  assert.equal(runCli(['recall', 'deploy', '--store', dir], { env: WARM }).status, 0);
  const first = status(dir);
  assert.equal(first.running, true);
  assert.equal(runCli(['index', '--store', dir, '--json'], { env: WARM }).status, 0);
  assert.equal(alive(first.pid), false, 'and once it listens');
  assert.equal(runCli(['recall', 'deploy', '--store', dir], { env: WARM }).status, 0);
  const second = status(dir);
  assert.equal(second.running, true);
  assert.notEqual(second.pid, first.pid);
  const store = await openStore({ dir });
  try {
    assert.equal(alive(second.pid), false, 'openStore stopped it too');
    assert.ok((await store.recall('deploy')).results.length > 0);
  } finally {
    await store.close();
  }
});

test('another namespace is served by a new warm process; daemon stop stops it', () => {
  const dir = newStore('ns');
  assert.equal(runCli(['remember', 'only in scratch', '--namespace', 'scratch', '--store', dir], { env: WARM }).status, 0);
  const first = status(dir).pid;
  const r = runCli(['recall', 'only in scratch', '--store', dir, '--json'], { env: WARM });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!JSON.parse(r.stdout).results.some((h) => h.content === 'only in scratch'), 'the default namespace does not see it');
  const second = status(dir).pid;
  assert.notEqual(second, first);
  assert.equal(alive(first), false);
  const stop = runCli(['daemon', 'stop', '--store', dir, '--json'], { env: COLD });
  assert.deepEqual(JSON.parse(stop.stdout), { stopped: true, pid: second, dir });
  assert.equal(alive(second), false);
  assert.equal(existsSync(join(dir, 'daemon.sock')), false, 'the socket is removed');
  assert.equal(existsSync(join(dir, 'memloom.lock')), false, 'the lock is released');
});

test('a stale socket, lock and spawn file (their process killed) are recovered', () => {
  const dir = newStore('stale');
  // A socket file nobody listens on: its process was SIGKILLed while listening.
  const k = spawnSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(join(dir, 'daemon.sock'))}, () => process.kill(process.pid, 'SIGKILL'))`]);
  assert.equal(k.signal, 'SIGKILL');
  assert.ok(existsSync(join(dir, 'daemon.sock')));
  const dead = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
  writeFileSync(join(dir, 'memloom.lock'), `${dead}\n`);
  writeFileSync(join(dir, 'daemon.spawn'), `${dead}\n`);
  const r = runCli(['recall', 'deploys freeze', '--store', dir, '--json'], { env: WARM });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).results[0].key, 'deploy-freeze');
  const s = status(dir);
  assert.equal(s.running, true, 'the recall started a warm process after it');
  assert.equal(s.requests, 0, 'the recall ran in the CLI');
  assert.equal(existsSync(join(dir, 'daemon.spawn')), false);
  const again = runCli(['recall', 'deploys freeze', '--store', dir, '--json'], { env: WARM });
  assert.deepEqual(JSON.parse(again.stdout).results, JSON.parse(r.stdout).results);
  assert.equal(status(dir).requests, 1);
});

test('two CLIs at once on a store without a warm process: both succeed, one warm process starts', async () => {
  const dir = newStore('race');
  const [r1, r2] = await Promise.all([
    runCli(['remember', 'first of two', '--key', 'one', '--store', dir, '--json'], { env: WARM, async: true }),
    runCli(['remember', 'second of two', '--key', 'two', '--store', dir, '--json'], { env: WARM, async: true }),
  ]);
  assert.equal(r1.status, 0, r1.stderr);
  assert.equal(r2.status, 0, r2.stderr);
  assert.deepEqual([JSON.parse(r1.stdout).key, JSON.parse(r2.stdout).key], ['one', 'two']);
  const s = status(dir);
  assert.equal(s.running, true);
  assert.equal(s.requests, 1, 'one ran in its CLI, which started the warm process; the other waited for it and ran there');
  assert.deepEqual(warmPids(join(tmp, 'race')), [s.pid], 'one warm process');
});

test('the first command on a store nothing serves runs in the CLI, then its warm process starts; a failed one starts none', async () => {
  const dir = newStore('first');
  let r = runCli(['recall', 'deploys freeze', '--store', dir, '--json'], { env: WARM });
  assert.equal(r.status, 0, r.stderr);
  const [starting] = warmPids(join(tmp, 'first'));
  assert.ok(starting, 'a warm process is starting');
  const cold = runCli(['recall', 'deploys freeze', '--store', dir, '--json'], { env: COLD });
  assert.equal(cold.status, 0, cold.stderr);
  assert.deepEqual(JSON.parse(cold.stdout).results, JSON.parse(r.stdout).results);
  assert.equal(runCli(['daemon', 'stop', '--store', dir], { env: COLD }).status, 0); // waits for it to be up
  assert.equal(alive(starting), false);
  r = runCli(['stats', '--store', dir], { env: WARM });
  assert.equal(r.status, 0, r.stderr);
  const s = status(dir);
  assert.equal(s.running, true);
  assert.equal(s.requests, 0);
  assert.equal(existsSync(join(dir, 'daemon.spawn')), false, 'the warm process released the spawn lock');
  assert.equal(runCli(['daemon', 'stop', '--store', dir], { env: COLD }).status, 0);
  r = runCli(['history', 'no-such-key', '--store', dir], { env: WARM });
  assert.equal(r.status, 2, 'history of a key never saved fails');
  // The warm process spawned as the command started is killed as it fails.
  await until(() => warmPids(join(tmp, 'first')).length === 0, 5000, 'nothing to be left after a failure');
  assert.equal(existsSync(join(dir, 'daemon.spawn')), false);
  assert.equal(existsSync(join(dir, 'daemon.sock')), false);
  assert.equal(status(dir).running, false);
});

test('the warm process spawned with a first command waits for that CLI, and starts nothing when it is killed', { skip: availableParallelism() < 2 && 'one CPU: the warm process is spawned as the command ends' }, async () => {
  const dir = newStore('killed');
  const env = { ...process.env, XDG_CONFIG_HOME: emptyXdg, ...WARM };
  delete env.DATABASE_URL;
  delete env.MEMLOOM_EMBED_URL;
  const cli = spawn(process.execPath, [bin, 'recall', 'deploys freeze', '--store', dir, '--json'], { env, stdio: 'ignore' });
  const exited = new Promise((r) => cli.on('exit', (code, signal) => r(signal)));
  // Killed as soon as its warm process exists: long before its cold command ends (0.5 s).
  const t0 = Date.now();
  while (warmPids(join(tmp, 'killed')).length === 0) {
    assert.ok(Date.now() - t0 < 10000, 'the CLI spawns its warm process as it starts');
    await new Promise((r) => setTimeout(r, 2));
  }
  const [server] = warmPids(join(tmp, 'killed'));
  assert.notEqual(lockHolder(dir), server, 'the warm process has not opened the store');
  cli.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
  await until(() => !alive(server), 5000, 'the warm process of a killed CLI to exit');
  assert.equal(existsSync(join(dir, 'daemon.sock')), false, 'it never listened');
  assert.equal(lockHolder(dir), null);
  const r = runCli(['recall', 'deploys freeze', '--store', dir, '--json'], { env: COLD });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).results[0].key, 'deploy-freeze');
});

test('on one CPU the warm process is spawned as the first command ends, and serves the next one', { skip: !TASKSET && 'no taskset' }, async () => {
  const dir = newStore('one-cpu');
  const env = { ...process.env, XDG_CONFIG_HOME: emptyXdg, ...WARM };
  delete env.DATABASE_URL;
  delete env.MEMLOOM_EMBED_URL;
  const cli = spawn(TASKSET, ['-c', '0', process.execPath, bin, 'recall', 'deploys freeze', '--store', dir, '--json'], { env });
  let stdout = '';
  cli.stdout.on('data', (d) => (stdout += d));
  const done = new Promise((r) => cli.on('close', (code) => r(code)));
  // While its command runs (it holds the store), no warm process exists yet.
  const t0 = Date.now();
  while (lockHolder(dir) !== cli.pid) {
    assert.ok(Date.now() - t0 < 10000, 'the CLI opens the store');
    await new Promise((r) => setTimeout(r, 2));
  }
  assert.deepEqual(warmPids(join(tmp, 'one-cpu')), [], 'no warm process while its command runs');
  assert.equal(await done, 0);
  assert.equal(JSON.parse(stdout).results[0].key, 'deploy-freeze');
  const r = runCli(['recall', 'deploys freeze', '--store', dir, '--json'], { env: WARM });
  assert.deepEqual(JSON.parse(r.stdout).results, JSON.parse(stdout).results);
  assert.equal(status(dir).requests, 1, 'the next command ran in the warm process');
});

test('the warm process exits after its idle timeout and releases the store', async () => {
  const dir = newStore('idle');
  assert.equal(runCli(['stats', '--store', dir], { env: { MEMLOOM_DAEMON_IDLE: '5' } }).status, 0);
  const pids = warmPids(join(tmp, 'idle'));
  assert.equal(pids.length, 1);
  await until(() => !alive(pids[0]), 30000, 'the idle exit');
  assert.equal(existsSync(join(dir, 'daemon.sock')), false);
  assert.equal(existsSync(join(dir, 'memloom.lock')), false);
});

test('disabled (MEMLOOM_DAEMON_IDLE=0, or daemon.idleSeconds 0 in the store config): nothing is spawned', () => {
  const dir = newStore('off');
  let r = runCli(['recall', 'deploy', '--store', dir], { env: COLD });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(warmPids(join(tmp, 'off')), []);
  writeFileSync(join(tmp, 'off', 'memloom.config.json'), JSON.stringify({ daemon: { idleSeconds: 0 } }));
  r = runCli(['recall', 'deploy', '--store', dir], { env: { MEMLOOM_DAEMON_IDLE: '' } });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(warmPids(join(tmp, 'off')), []);
  assert.equal(existsSync(join(dir, 'daemon.sock')), false);
  assert.equal(status(dir).running, false);
});

test('daemon: status text, a wrong action, and a server store are usage errors', () => {
  const dir = join(tmp, 'none', '.memloom');
  let r = runCli(['daemon', 'status', '--store', dir], { env: COLD });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `no warm process serves ${dir}\n`);
  r = runCli(['daemon', 'restart', '--store', dir], { env: COLD });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /daemon takes status, start, stop, not "restart"/);
  r = runCli(['daemon', 'stop', '--database-url', 'postgres://127.0.0.1:1/x'], { env: COLD });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /the warm process is for an embedded store/);
});

test('while `memloom mcp` runs on a store, the CLI on that store runs in it, warm, and both see each other\'s writes', async () => {
  const dir = newStore('mcp');
  const env = { ...process.env, XDG_CONFIG_HOME: emptyXdg, ...WARM };
  for (const k of ['DATABASE_URL', 'MEMLOOM_EMBED_URL']) delete env[k];
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--store', dir], env, stderr: 'ignore' });
  const client = new Client({ name: 'memloom-warm-test', version: '1.0.0' });
  await client.connect(transport);
  const mcpPid = transport.pid;
  const text = (r) => r.content.map((c) => c.text).join('\n');
  try {
    const r1 = await client.callTool({ name: 'remember', arguments: { text: 'the staging database moved to db-staging-2', key: 'staging-db' } });
    assert.equal(r1.isError, undefined, text(r1));

    // recall from the CLI: served by the MCP process (its socket), and sees what its client remembered.
    let r = runCli(['recall', 'staging database moved', '--store', dir, '--json'], { env: WARM });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).results[0].key, 'staging-db');
    let s = status(dir);
    assert.deepEqual([s.running, s.owner, s.pid, s.requests], [true, 'mcp', mcpPid, 1], 'the MCP process served it');
    assert.deepEqual(warmPids(join(tmp, 'mcp')), [], 'no warm process was started beside it');

    // A write from the CLI, read by the MCP client.
    r = runCli(['remember', 'deploys need two approvals', '--key', 'deploy-approvals', '--store', dir], { env: WARM });
    assert.equal(r.status, 0, r.stderr);
    const seen = await client.callTool({ name: 'recall', arguments: { query: 'deploy approvals' } });
    assert.match(text(seen), /deploys need two approvals/);
    assert.equal(status(dir).requests, 2);

    // It does not stop when asked (its client still needs it), and a command for another
    // namespace is not run there: the CLI runs it cold and meets the lock, as before.
    r = runCli(['daemon', 'stop', '--store', dir, '--json'], { env: COLD });
    assert.deepEqual(JSON.parse(r.stdout), { stopped: false, pid: mcpPid, owner: 'mcp', dir });
    assert.equal(alive(mcpPid), true);
    r = runCli(['recall', 'staging', '--namespace', 'elsewhere', '--store', dir], { env: WARM });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /in use by pid \d+; an embedded store is one process at a time/);
    assert.deepEqual(warmPids(join(tmp, 'mcp')), []);
    const h = await client.callTool({ name: 'history', arguments: { key: 'deploy-approvals' } });
    assert.equal(h.isError, undefined, text(h));
  } finally {
    await client.close();
  }
  await until(() => !alive(mcpPid), 15000, 'memloom mcp to exit');
  assert.equal(existsSync(join(dir, 'daemon.sock')), false, 'its socket is removed');
  assert.equal(existsSync(join(dir, 'memloom.lock')), false, 'its lock is released');
  // With it gone, the CLI starts its own warm process as usual; both writes are there.
  const r = runCli(['recall', 'deploy approvals staging database', '--store', dir, '--json', '--kinds', 'memory'], { env: WARM });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).results.map((h) => h.key).sort(), ['deploy-approvals', 'deploy-freeze', 'staging-db']);
  assert.equal(status(dir).owner, 'warm');
});
