// SIGKILL the CLI in the middle of a large ingest, on an embedded store and on a server store
// (DATABASE_URL): the store opens again (a dead owner's lock is taken over), it is consistent
// (each file has all of its chunks or none: one transaction per file), and a re-run completes
// it to exactly what one uninterrupted ingest stores. Run by scripts/faults.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../npm/bin/memloom.js', import.meta.url));
const { DATABASE_URL } = process.env;
const FILES = Number(process.env.FAULTS_FILES ?? 400);
let tmp, docs;

function cli(args) {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const r = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
  return r;
}

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'memloom-kill-'));
  docs = join(tmp, 'docs');
  mkdirSync(docs);
  for (let i = 0; i < FILES; i++) {
    const parts = Array.from({ length: 8 }, (_, j) => `## Part ${j}\n\n` + `File ${i} part ${j} word${i}w${j} `.repeat(60));
    writeFileSync(join(docs, `doc-${String(i).padStart(4, '0')}.md`), `# Doc ${i}\n\n${parts.join('\n\n')}\n`);
  }
});
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Per-source chunk counts: a JSON object from the store. */
function perSource(target, ns) {
  const sql = `SELECT coalesce(json_object_agg(source, n), '{}') FROM (SELECT source, count(*) AS n FROM memloom_items WHERE namespace = '${ns}' AND kind = 'chunk' GROUP BY source) s`;
  if (target.url) return JSON.parse(execFileSync('psql', ['-X', '-At', target.url, '-c', sql]).toString());
  const script = `import { openStore } from ${JSON.stringify(new URL('../../npm/src/entry-node.js', import.meta.url).href)};
    const s = await openStore({ dir: ${JSON.stringify(target.dir)}, namespace: ${JSON.stringify(ns)}, create: false });
    const { rows } = await s.db.query(${JSON.stringify(sql)});
    process.stdout.write(JSON.stringify(rows[0].coalesce)); await s.close();`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

async function killMidway(target, label) {
  const args = target.url ? ['--database-url', target.url] : ['--store', target.dir];
  const ns = `kill-${Date.now()}`;
  const full = `${ns}-full`;
  // One uninterrupted ingest: the reference, and its duration.
  let t = Date.now();
  let r = cli(['ingest', docs, ...args, '--namespace', full]);
  assert.equal(r.status, 0, r.stderr);
  const fullMs = Date.now() - t;
  const reference = perSource(target, full);
  assert.equal(Object.keys(reference).length, FILES);

  // The same ingest, killed with SIGKILL halfway through.
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [bin, 'ingest', docs, ...args, '--namespace', ns], { env, stdio: 'ignore' });
  const exited = new Promise((res) => child.on('exit', (code, signal) => res(signal)));
  await new Promise((res) => setTimeout(res, fullMs / 2));
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
  const partial = perSource(target, ns);
  const files = Object.keys(partial).length;
  for (const [source, n] of Object.entries(partial)) assert.equal(n, reference[source], `${label}: ${source} is half written`);

  // Re-run: completes it to the reference, nothing twice.
  t = Date.now();
  r = cli(['ingest', docs, ...args, '--namespace', ns, '--json']);
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(perSource(target, ns), reference);
  assert.equal(report.unchanged, files);
  process.stderr.write(
    `faults: ${label}: full ingest ${fullMs} ms; SIGKILL at ${Math.round(fullMs / 2)} ms left ${files}/${FILES} files, each whole; ` +
      `re-run added ${report.added} files in ${Date.now() - t} ms; store equals an uninterrupted ingest\n`,
  );
}

test('SIGKILL during an ingest on the embedded store: consistent, and a re-run completes it', { timeout: 600_000 }, async () => {
  const dir = join(tmp, 'store');
  assert.equal(cli(['init', '--store', dir]).status, 0);
  await killMidway({ dir }, 'embedded');
});

test('SIGKILL during an ingest on a server store: consistent, and a re-run completes it', { skip: DATABASE_URL ? false : 'DATABASE_URL is not set', timeout: 600_000 }, async () => {
  assert.equal(cli(['init', '--database-url', DATABASE_URL]).status, 0);
  await killMidway({ url: DATABASE_URL }, 'server');
});
