// The CLI as a tool: per-command help with examples, "did you mean", --version, shell completion
// that loads (bash always; zsh and fish when installed), --json on every command, --quiet,
// config files (precedence, unknown keys) and piped progress lines.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMANDS } from '../src/cli/commands/index.js';
import { rateText } from '../src/cli/progress.js';
import { runCli, fixtures } from './helpers.js';

let tmp, store;
const cli = (args, opts) => runCli([...args, '--store', store], opts);
const has = (exe) => spawnSync('sh', ['-c', `command -v ${exe}`]).status === 0;

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-ux-'));
  store = join(tmp, 'store');
});
after(() => rmSync(tmp, { recursive: true, force: true }));

test('every command has its own help: usage, description, options, examples', () => {
  const seen = new Set();
  for (const c of COMMANDS) {
    for (const args of [[c.name, '--help'], ['help', c.name]]) {
      const r = runCli(args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`^Usage: memloom ${c.name} `), args.join(' '));
      assert.ok(r.stdout.includes(c.description.slice(0, 40)), `${c.name} --help shows its description`);
      assert.match(r.stdout, /\nExamples:\n {2}\$ .*memloom /, `${c.name} --help has examples`);
      assert.match(r.stdout, c.json ? /--json prints: / : /No --json: /, `${c.name} --help says what --json prints`);
      for (const o of c.options ?? []) assert.ok(r.stdout.includes(o.flags), `${c.name} --help lists ${o.flags}`);
    }
    const text = runCli([c.name, '--help']).stdout;
    assert.ok(!seen.has(text), `${c.name} --help differs from the others`);
    seen.add(text);
  }
  const top = runCli(['--help']);
  assert.equal(top.status, 0);
  for (const c of COMMANDS) assert.match(top.stdout, new RegExp(`\\n {2}${c.name}\\b.*${c.summary.slice(0, 20).replace(/[()]/g, '.')}`));
  const bare = runCli([]);
  assert.equal(bare.status, 2, 'no command: the help, exit 2');
  assert.match(bare.stdout, /^Usage: memloom <command>/);
});

test('did you mean: a wrong command and a wrong flag', () => {
  let r = runCli(['recal', 'x']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^memloom: error: unknown command "recal" \(did you mean recall\?\); commands are init, ingest/);
  r = runCli(['recall', 'x', '--limt', '3']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /Unknown option '--limt' for recall \(did you mean --limit\?\); see memloom recall --help/);
  r = runCli(['ingest', '--idnex', 'docs']);
  assert.match(r.stderr, /did you mean --index\?/);
  r = runCli(['history']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /history: missing required argument 'key'; see memloom history --help/);
  r = runCli(['init', 'extra']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /init takes no arguments, not 1 \(quote a text that has spaces\); see memloom init --help/);
  r = runCli(['remember', 'two', 'words']);
  assert.match(r.stderr, /remember takes at most 1 argument, not 2/);
});

test('a reader that closes the pipe early: no EPIPE stack trace', () => {
  // `true` exits before node has started, so the help text meets a closed pipe every time.
  const bin = new URL('../bin/memloom.js', import.meta.url).pathname;
  const r = spawnSync('sh', ['-c', `node '${bin}' --help | true`], { encoding: 'utf8' });
  assert.doesNotMatch(r.stderr, /EPIPE|Unhandled/, r.stderr);
});

test('--version prints the package version', () => {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  for (const flag of ['--version', '-V']) {
    const r = runCli([flag]);
    assert.equal(r.status, 0);
    assert.equal(r.stdout.trim(), version);
  }
});

test('bash completion loads and completes commands, flags, flag values and files', () => {
  const script = runCli(['completion', 'bash']);
  assert.equal(script.status, 0, script.stderr);
  const file = join(tmp, 'memloom.bash');
  writeFileSync(file, script.stdout);
  mkdirSync(join(tmp, 'cdir'));
  writeFileSync(join(tmp, 'cdir', 'queries.jsonl'), '');
  const cases = [
    [['memloom', 're'], 'remember recall'],
    [['memloom', 'recall', '--li'], '--limit'],
    [['memloom', '--store', '/tmp', 'rec'], 'recall'],
    [['memloom', 'init', '--embedder', 's'], 'static-v1 static-v2'],
    [['memloom', 'completion', ''], 'bash zsh fish'],
    [['memloom', 'help', 'in'], 'init ingest index'],
    [['memloom', 'eval', '--arms', 'x', '--s'], '--set --store'],
    [['memloom', 'recall', '--batch', join(tmp, 'cdir', 'q')], join(tmp, 'cdir', 'queries.jsonl')],
  ];
  const body = cases
    .map(([words]) => `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _memloom; echo "\${COMPREPLY[*]}"`)
    .join('\n');
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', `source '${file}' && complete -p memloom && ${body}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(lines[0], /^complete -o default -F _memloom memloom$/);
  assert.deepEqual(lines.slice(1), cases.map(([, want]) => want));
});

test('zsh completion loads and registers _memloom (skipped without zsh)', (t) => {
  if (!has('zsh')) return t.skip('zsh is not installed (scripts/test-npm.sh installs it as root)');
  const file = join(tmp, '_memloom');
  writeFileSync(file, runCli(['completion', 'zsh']).stdout);
  const home = join(tmp, 'zhome');
  mkdirSync(home, { recursive: true });
  const r = spawnSync('zsh', ['-f', '-c', `autoload -Uz compinit && compinit -u -d '${home}/.zcompdump' && source '${file}' && print -r -- "$_comps[memloom]" && (( $+functions[_memloom] )) && print ok`], {
    encoding: 'utf8',
    env: { ...process.env, HOME: home },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.deepEqual(r.stdout.trim().split('\n'), ['_memloom', 'ok']);
  assert.equal(spawnSync('zsh', ['-n', file]).status, 0, 'zsh -n: the script parses');
});

test('fish completion parses (skipped without fish)', (t) => {
  if (!has('fish')) return t.skip('fish is not installed');
  const file = join(tmp, 'memloom.fish');
  writeFileSync(file, runCli(['completion', 'fish']).stdout);
  const r = spawnSync('fish', ['--no-config', '-c', `source '${file}'; complete -C 'memloom rec'`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^recall\t/m);
});

test('--json on every command: one JSON document on stdout; mcp and completion say why not', () => {
  const parse = (args) => {
    const r = cli(args);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout.trim().split('\n').length, 1, `${args[0]} --json prints one line`);
    return JSON.parse(r.stdout);
  };
  const init = parse(['init', '--json']);
  assert.deepEqual([init.created, init.backend, init.embedder.name], [true, 'embedded', 'hash']);
  assert.equal(parse(['init', '--json']).created, false);
  const ingest = parse(['ingest', join(fixtures, 'docs'), '--json']);
  assert.equal(ingest.added, 4);
  const remembered = parse(['remember', 'the freeze starts Friday', '--key', 'freeze', '--json']);
  assert.deepEqual([remembered.key, remembered.version], ['freeze', 1]);
  assert.equal(parse(['remember', 'the freeze starts Thursday', '--key', 'freeze', '--json']).version, 2);
  assert.equal(parse(['remember', 'an unkeyed note', '--json']).key, null);
  const file = parse(['remember', '--file', join(fixtures, 'memories.jsonl'), '--json']);
  assert.equal(file.read, 4);
  const idx = parse(['index', '--json']);
  assert.ok(idx.entities > 0);
  const recall = parse(['recall', 'freeze', '--json', '--explain']);
  assert.ok(recall.results.length > 0);
  assert.match(recall.explain.vectorArm, /hash-v1 \(offline\) matches shared words/);
  assert.equal(recall.explain.embedder, 'hash-v1');
  const history = parse(['history', 'freeze', '--json']);
  assert.deepEqual(history.map((h) => h.status), ['superseded', 'active']);
  const stats = parse(['stats', '--json']);
  assert.match(stats.vectorArm, /not meaning/);
  assert.equal(stats.memories.keys, 4);
  const config = parse(['config', '--json']);
  assert.equal(config.settings['embedder.name'].source, 'default');
  const ev = parse(['eval', join(fixtures, 'eval-docs.jsonl'), '--json']);
  assert.equal(ev.set, 'documents');
  const forgot = parse(['forget', '--key', 'freeze', '--json']);
  assert.deepEqual([Object.keys(forgot).sort(), forgot.deleted], [['deleted', 'entities', 'mentions'], 2]);
  const ns = cli(['forget', '--namespace', 'scratch', '--yes', '--json']);
  assert.equal(ns.status, 0, ns.stderr);
  assert.deepEqual(Object.keys(JSON.parse(ns.stdout)).sort(), ['deleted', 'entities', 'mentions', 'statistics']);
  for (const [args, re] of [
    [['mcp', '--json'], /mcp takes no --json: stdout carries MCP protocol messages/],
    [['completion', 'bash', '--json'], /completion takes no --json/],
  ]) {
    const r = cli(args);
    assert.equal(r.status, 2);
    assert.match(r.stderr, re);
  }
});

test('stats and recall --explain say what the vector arm can match', () => {
  const stats = cli(['stats']);
  assert.match(stats.stdout, /\nvector arm {2}hash-v1 \(offline\) matches shared words, word pieces and identifiers only, not meaning/);
  const r = cli(['recall', 'rollback', '--explain', '--limit', '1']);
  assert.match(r.stdout, /^vector arm: hash-v1 \(offline\)/);
  assert.doesNotMatch(cli(['recall', 'rollback', '--limit', '1']).stdout, /vector arm:/, 'only with --explain');
});

test('--quiet: no progress and no summary on stderr, data still on stdout', () => {
  const dir = join(tmp, 'quiet-docs');
  mkdirSync(dir);
  writeFileSync(join(dir, 'a.md'), '# A\n\nalpha text\n');
  const r = cli(['ingest', dir, '--quiet', '--json'], { env: { MEMLOOM_PROGRESS_FILES: '1' } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.equal(JSON.parse(r.stdout).added, 1);
  const loud = cli(['ingest', dir]);
  assert.match(loud.stderr, /^memloom: ingested 1 files/);
  const rec = cli(['recall', 'alpha', '-q']);
  assert.equal(rec.stderr, '');
  assert.match(rec.stdout, /a\.md/);
});

test('piped: one progress line per N files (progress.everyFiles / MEMLOOM_PROGRESS_FILES)', () => {
  const dir = join(tmp, 'many');
  mkdirSync(dir);
  for (let i = 0; i < 7; i++) writeFileSync(join(dir, `f${i}.md`), `# File ${i}\n\nbody ${i}\n`);
  const r = cli(['ingest', dir], { env: { MEMLOOM_PROGRESS_FILES: '2', MEMLOOM_PROGRESS_MS: '3600000' } });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => / files \(\d+%\)/.test(l));
  assert.deepEqual(lines.map((l) => /memloom: (\d+\/\d+) files/.exec(l)?.[1]), ['2/7', '4/7', '6/7']);
  // Each line says the chunks written so far (by committed batches) and the rate.
  for (const l of lines) assert.match(l, /\(\d+%\), \d+ chunks, \d+(\.\d+)? files\/s$/);
  // The same from a config file (beside the store).
  writeFileSync(join(tmp, 'memloom.config.json'), JSON.stringify({ progress: { everyFiles: 3, everyMs: 3600000 } }));
  try {
    for (let i = 7; i < 14; i++) writeFileSync(join(dir, `f${i}.md`), `# File ${i}\n\nbody ${i}\n`);
    const c = cli(['ingest', dir]);
    assert.equal(c.status, 0, c.stderr);
    const more = c.stderr.split('\n').filter((l) => / files \(\d+%\)/.test(l));
    assert.deepEqual(more.map((l) => /memloom: (\d+\/\d+) files/.exec(l)?.[1]), ['3/14', '6/14', '9/14', '12/14'], c.stderr);
  } finally {
    rmSync(join(tmp, 'memloom.config.json'));
  }
});

test('progress rates: whole numbers from 10/s, one decimal below, two below 0.1 (never "0 files/s")', () => {
  assert.deepEqual([18.4, 10, 9.96, 0.27, 0.1, 0.04, 0].map(rateText), ['18', '10', '10.0', '0.3', '0.1', '0.04', '0.00']);
});

test('config: flags > env > store config > user config > defaults; memloom config says where from', () => {
  const proj = join(tmp, 'proj');
  const xdg = join(tmp, 'xdg');
  mkdirSync(join(xdg, 'memloom'), { recursive: true });
  mkdirSync(proj, { recursive: true });
  const userFile = join(xdg, 'memloom', 'config.json');
  const storeFile = join(proj, 'memloom.config.json');
  writeFileSync(userFile, JSON.stringify({ embedder: { name: 'static-v1', timeoutMs: 5000 }, extractor: { apiKey: 'sk-user' } }));
  const conf = (args = [], env = {}) => {
    const r = runCli(['config', '--json', '--store', join(proj, '.memloom'), ...args], { env: { XDG_CONFIG_HOME: xdg, ...env } });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout).settings;
  };
  let s = conf();
  assert.deepEqual(s['embedder.name'], { value: 'static-v1', source: userFile, env: 'MEMLOOM_EMBEDDER' });
  assert.equal(s['extractor.apiKey'].value, '***', 'secrets are masked');
  writeFileSync(storeFile, JSON.stringify({ $schema: 'x', embedder: { name: 'hash-v1' }, progress: { everyFiles: 7 } }));
  s = conf();
  assert.deepEqual([s['embedder.name'].value, s['embedder.name'].source], ['hash-v1', storeFile]);
  assert.deepEqual([s['embedder.timeoutMs'].value, s['embedder.timeoutMs'].source], [5000, userFile], 'keys merge across files');
  assert.deepEqual([s['progress.everyFiles'].value, s['progress.everyFiles'].source], [7, storeFile]);
  s = conf([], { MEMLOOM_EMBEDDER: 'static-v1', MEMLOOM_PROGRESS_FILES: '9' });
  assert.deepEqual([s['embedder.name'].value, s['embedder.name'].source], ['static-v1', 'env MEMLOOM_EMBEDDER']);
  assert.deepEqual([s['progress.everyFiles'].value, s['progress.everyFiles'].source], [9, 'env MEMLOOM_PROGRESS_FILES']);
  s = conf(['--embedder', 'hash-v1'], { MEMLOOM_EMBEDDER: 'static-v1' });
  assert.deepEqual([s['embedder.name'].value, s['embedder.name'].source], ['hash-v1', 'flag --embedder']);
  // An embeddings API in the store config hides the user config's offline embedder.
  writeFileSync(storeFile, JSON.stringify({ embedder: { url: 'http://127.0.0.1:9/v1', model: 'm', dims: 8 } }));
  s = conf();
  assert.equal(s['embedder.name'], undefined);
  assert.equal(s['embedder.url'].source, storeFile);
  // The text form lists each key with its source.
  const text = runCli(['config', '--store', join(proj, '.memloom')], { env: { XDG_CONFIG_HOME: xdg } });
  assert.match(text.stdout, /^embedder\.url +http:\/\/127\.0\.0\.1:9\/v1 +\S+memloom\.config\.json$/m);
  rmSync(storeFile);
});

test('config: the store config chooses the embedder a new store is built with', () => {
  const proj = join(tmp, 'proj-static');
  mkdirSync(proj);
  writeFileSync(join(proj, 'memloom.config.json'), JSON.stringify({ embedder: { name: 'static-v2' } }));
  const s = join(proj, '.memloom');
  let r = runCli(['init', '--store', s, '--json']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).embedder, { name: 'static', version: 2, dims: 512 });
  // Later commands find the same config: no --embedder needed to open it.
  r = runCli(['stats', '--store', s]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /vector arm {2}static-v2 \(offline\) adds some meaning/);
});

test('config: unknown keys and wrong values are errors naming the key and the file', () => {
  const proj = join(tmp, 'proj-bad');
  mkdirSync(proj);
  const file = join(proj, 'memloom.config.json');
  for (const [json, re] of [
    [{ embedder: { nam: 'static-v1' } }, /memloom\.config\.json: unknown key "embedder\.nam"; the keys there are embedder\.name, embedder\.url/],
    [{ embeder: {} }, /memloom\.config\.json: unknown key "embeder"; the keys there are embedder, extractor, progress/],
    [{ embedder: { dims: '384' } }, /memloom\.config\.json: "embedder\.dims": Expected number, received string/],
    [{ embedder: { name: 'static-v3' } }, /memloom\.config\.json: "embedder\.name": Invalid enum value.*'hash-v1' \| 'static-v1' \| 'static-v2'/],
  ]) {
    writeFileSync(file, JSON.stringify(json));
    const r = runCli(['stats', '--store', join(proj, '.memloom')]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, re);
    assert.ok(r.stderr.includes(file), 'the error names the file');
  }
  writeFileSync(file, '{ "embedder": ');
  const r = runCli(['config', '--store', join(proj, '.memloom')]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /memloom\.config\.json: not valid JSON/);
  const env = runCli(['config'], { env: { MEMLOOM_EMBED_DIMS: 'many' } });
  assert.match(env.stderr, /MEMLOOM_EMBED_DIMS must be an integer >= 1, not "many"/);
});
