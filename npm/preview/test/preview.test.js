// End-to-end test of the preview page in Debian's Chromium (playwright-core, no browser
// download): build and serve the page, ingest a folder through the folder picker, recall an
// exact identifier and a paraphrase (top results and arm badges), remember and supersede a
// memory, reload (the IndexedDB store persisted), go offline (the service worker serves the
// page), clear. Screenshots at laptop and phone width go to target/preview/.
// With ../shared/eval/nodejs-docs/corpus present, a second test ingests it and records ingest
// time, recall latency and main-thread long tasks in target/preview/perf.json.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from '../build.mjs';
import { serve } from '../serve.mjs';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const OUT = join(ROOT, 'target/preview');
const FIXTURE = join(ROOT, 'examples/notes');
const CORPUS = resolve(ROOT, process.env.MEMLOOM_PREVIEW_CORPUS ?? '../shared/eval/nodejs-docs');
const CHROMIUM = process.env.MEMLOOM_CHROMIUM ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} not found (apt-get install -y chromium)`;
/** Main-thread tasks longer than this during ingest fail the test (the bound). */
const LONG_TASK_LIMIT_MS = 100;
const LAPTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

let server, base, browser, profile;

/**
 * Main-thread time bounds are wall time: with the load average over twice the cores (CI
 * machines shared with other builds), a 10 ms handler can be preempted past 100 ms. Then the
 * figures are reported, not asserted.
 */
function overloaded() {
  const load = loadavg()[0];
  if (load <= 2 * cpus().length) return false;
  console.log(`# load average ${load.toFixed(1)} on ${cpus().length} cores: main-thread time bounds reported, not asserted`);
  return true;
}

before(async () => {
  if (skip) return;
  mkdirSync(OUT, { recursive: true });
  await build(join(OUT, 'dist'));
  server = await serve(join(OUT, 'dist'));
  base = `http://127.0.0.1:${server.address().port}/`;
  profile = mkdtempSync(join(tmpdir(), 'memloom-preview-'));
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
});

after(async () => {
  await browser?.close();
  server?.closeAllConnections?.();
  server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** A fresh context (its own IndexedDB) whose pages record main-thread long tasks. */
async function newPage(viewport = LAPTOP) {
  const context = await browser.newContext({ viewport });
  await context.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
    // Long animation frames say which script ran (to explain a long task when there is one).
    window.__longFrames = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        window.__longFrames.push({
          start: e.startTime,
          duration: e.duration,
          blockingDuration: e.blockingDuration,
          scripts: e.scripts.map((x) => ({ invoker: x.invoker, duration: x.duration, source: `${x.sourceURL}:${x.sourceFunctionName}` })),
        });
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  });
  const page = await context.newPage();
  const errors = [];
  // The message alone ("ErrnoError": an Emscripten file-system error) says too little to find
  // where a page error came from; its stack goes to the test's log.
  page.on('pageerror', (e) => {
    errors.push(e.message);
    console.log(`# page error: ${e.stack ?? e.message}`);
  });
  return { context, page, errors };
}

async function ready(page) {
  await page.waitForSelector('body[data-ready=true]', { timeout: 120_000 });
}

/** Picks a folder with the folder input; resolves to the worker's ingest report and timings. */
async function ingestFolder(page, dir) {
  const picked = await page.evaluate(() => {
    window.__memloomLastIngest = undefined;
    window.__ingestStart = performance.now();
    return performance.timeOrigin + window.__ingestStart;
  });
  const wallStart = Date.now();
  await page.setInputFiles('#pick-folder', dir);
  const setFilesMs = Date.now() - wallStart;
  await page.waitForFunction(() => window.__memloomLastIngest, null, { timeout: 600_000, polling: 100 });
  const wallMs = Date.now() - wallStart;
  const r = await page.evaluate(() => {
    const end = performance.now();
    const tasks = window.__longTasks.filter((t) => t.start >= window.__ingestStart && t.start <= end);
    const frames = window.__longFrames.filter((f) => f.start >= window.__ingestStart && f.start <= end && f.blockingDuration > 0);
    return { ...window.__memloomLastIngest, pageMs: end - window.__ingestStart, longTasks: tasks, longFrames: frames };
  });
  // Where the wall time went, step by step (epoch ms marks from the page and the worker).
  const t = { picked, ...r.timeline };
  const span = (a, b) => (t[a] != null && t[b] != null ? Math.round(t[b] - t[a]) : null);
  r.wall = {
    wallMs,
    setInputFilesMs: setFilesMs,
    stepsMs: Math.round(r.ingestMs + r.indexMs),
    pickToPostMs: span('picked', 'posted'),
    postToWorkerMs: span('posted', 'received'),
    workerWaitAndOpenMs: span('received', 'opened'),
    ingestAndIndexMs: span('opened', 'indexed'),
    statsMs: span('indexed', 'done'),
    answerMs: span('done', 'answered'),
  };
  return r;
}

/** Types a query; resolves to the rendered results once they are shown. */
async function search(page, query) {
  await page.fill('#q', query);
  await page.waitForFunction((q) => window.__memloomLastSearch?.query === q, query, { timeout: 60_000, polling: 20 });
  const rows = await page.$$eval('#results > .result', (els) =>
    els.map((e) => ({
      kind: e.dataset.kind,
      source: e.dataset.source,
      breadcrumb: e.dataset.breadcrumb,
      arms: Object.fromEntries([...e.querySelectorAll('.arm')].map((a) => [a.dataset.arm, a.dataset.rank ? Number(a.dataset.rank) : null])),
      badges: [...e.querySelectorAll('.arm')].map((a) => a.textContent),
      marks: [...e.querySelectorAll('mark')].map((m) => m.textContent),
      text: e.querySelector('.snippet').textContent,
    })),
  );
  return { rows, timing: await page.evaluate(() => window.__memloomLastSearch) };
}

const statusText = (page) => page.textContent('#status');

/** Remembers `text` under `key` through the form; resolves once the list shows it. */
async function rememberInPage(page, text, key) {
  await page.fill('#mem-text', text);
  await page.fill('#mem-key', key);
  await page.press('#mem-key', 'Enter');
  await page
    .waitForFunction(
      (t) => document.querySelector('#memory-list .memory-text')?.textContent === t && !document.querySelector('#remember-form button').disabled,
      text,
    )
    .catch(async (e) => {
      throw new Error(`${e.message}; status: ${await statusText(page)}; list: ${await page.textContent('#memory-list')}`);
    });
}

test('"Clear store" right after a write: no page error, and the store opens again empty', { skip, timeout: 300_000 }, async () => {
  // The store copies each write to IndexedDB in the background (relaxedDurability); "Clear
  // store" closes it at once. PGlite's close() did not wait for those copies, which then ran on
  // the closed file system and threw in the page ("ErrnoError", or "Cannot read properties of
  // undefined (reading 'FS')") in about half of such clears; db-pglite.js drains them
  // (drainSyncsOnClose). Three rounds, so one that would throw is all but certain.
  const { context, page, errors } = await newPage();
  await page.goto(base);
  await ready(page);
  for (let round = 1; round <= 3; round++) {
    await ingestFolder(page, FIXTURE);
    await rememberInPage(page, `Round ${round}: deploys freeze on Fridays.`, 'deploy-freeze');
    page.once('dialog', (d) => d.accept());
    await page.click('#clear');
    await page.waitForFunction(() => /Cleared/.test(document.getElementById('status').textContent), null, { timeout: 120_000 });
    assert.match(await statusText(page), /store is empty/);
  }
  await page.reload();
  await ready(page);
  assert.match(await statusText(page), /store is empty/);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(errors, []);
  await context.close();
});

test('the page ingests a folder, recalls, remembers, persists across reloads and works offline', { skip, timeout: 600_000 }, async () => {
  const { context, page, errors } = await newPage();
  await page.goto(base);
  await ready(page);
  assert.match(await statusText(page), /store is empty/);

  // The long-task observer works: a 150 ms busy loop is seen.
  await page.evaluate(() => {
    setTimeout(() => {
      const t = performance.now();
      while (performance.now() - t < 150);
    });
  });
  await page.waitForFunction(() => window.__longTasks.some((t) => t.duration >= 150));

  // Ingest through the folder picker, in the worker.
  const ingest = await ingestFolder(page, FIXTURE);
  assert.equal(ingest.report.files, 3);
  assert.equal(ingest.report.chunks, 12);
  assert.deepEqual(ingest.warnings, []);
  assert.match(await statusText(page), /3 files, 12 chunks/);
  assert.match(await page.textContent('#progress-text'), /3 files read \(3 new/);
  if (!overloaded()) assert.deepEqual(ingest.longTasks.filter((t) => t.duration > LONG_TASK_LIMIT_MS), []);

  // An exact identifier: its section first, the keyword arm voting first, the words marked.
  const exact = await search(page, 'pg_hba.conf');
  assert.equal(exact.rows[0].source, 'postgres-runbook.md');
  assert.equal(exact.rows[0].breadcrumb, 'Postgres runbook > Access control');
  assert.equal(exact.rows[0].kind, 'chunk');
  assert.equal(exact.rows[0].arms.keyword, 1);
  assert.ok(exact.rows[0].badges.includes('keyword #1'), exact.rows[0].badges.join());
  assert.ok(exact.rows[0].marks.includes('pg_hba.conf'), exact.rows[0].marks.join());
  // Arms that did not vote say so.
  assert.ok(exact.rows.slice(1).some((r) => r.badges.includes('keyword –')));

  // A paraphrase of "Upstream keep-alive connections are closed after 75 seconds": the vector
  // arm ranks the section first.
  const para = await search(page, 'when does the proxy close idle upstream connections');
  assert.equal(para.rows[0].source, 'nginx-notes.md');
  assert.equal(para.rows[0].breadcrumb, 'Edge proxy notes > Timeouts');
  assert.equal(para.rows[0].arms.vector, 1);
  // Only items that share something with the query are listed (sql/0010: no vector vote, and
  // no place in the tail, at cosine <= 0), so the small sample folder yields fewer than 10.
  const meta = (await page.textContent('#search-meta')).match(/^(\d+) results in \d+ ms/);
  assert.ok(meta, await page.textContent('#search-meta'));
  assert.equal(Number(meta[1]), para.rows.length);
  assert.ok(para.rows.length >= 2 && para.rows.length <= 10, `${para.rows.length} results`);

  // Keyboard: Down from the search box moves to the first result.
  await page.focus('#q');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('result')), true);

  // Memories: a key, superseded by a second version; history greys the old one.
  for (const text of ['Deploys freeze on Thursdays at noon.', 'Deploys freeze on Fridays after 15:00.']) {
    await rememberInPage(page, text, 'deploy-freeze');
  }
  assert.equal(await page.textContent('#memory-list .memory-version'), 'v2');
  await page.click('#memory-list button[aria-expanded]');
  await page.waitForSelector('#memory-list .history li.superseded');
  const history = await page.$$eval('#memory-list .history li', (els) =>
    els.map((e) => ({ cls: e.className, text: e.textContent, color: getComputedStyle(e).color })),
  );
  assert.equal(history.length, 2);
  assert.match(history[0].cls, /superseded/);
  assert.match(history[0].text, /v1 · superseded.*Thursdays/);
  assert.match(history[1].cls, /active/);
  assert.notEqual(history[0].color, history[1].color, 'a superseded version is greyed');
  const memory = await search(page, 'when do deploys freeze');
  assert.equal(memory.rows[0].kind, 'memory');
  assert.match(memory.rows[0].text, /Fridays/);
  assert.ok(!memory.rows.some((r) => /Thursdays/.test(r.text)), 'a superseded memory is never recalled');

  await search(page, 'pg_hba.conf');
  await page.screenshot({ path: join(OUT, 'screenshot.png'), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.evaluate(() => document.getElementById('search-h').scrollIntoView());
  await page.screenshot({ path: join(OUT, 'screenshot-phone.png') });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(OUT, 'screenshot-phone-top.png') });
  await page.setViewportSize(LAPTOP);

  // Reload: the IndexedDB store is still there.
  await page.reload();
  await ready(page);
  assert.match(await statusText(page), /3 files, 12 chunks, 1 memory/);
  assert.equal(await page.textContent('#memory-list .memory-key'), 'deploy-freeze');
  const again = await search(page, 'pg_hba.conf');
  assert.equal(again.rows[0].breadcrumb, 'Postgres runbook > Access control');

  // Offline: with the server gone, the service worker serves the page and its engine.
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
  await page.waitForFunction(() => /works offline/.test(document.getElementById('offline').textContent));
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await context.setOffline(true);
  await page.reload();
  await ready(page);
  const offline = await search(page, 'ERR_REQUIRE_ESM');
  assert.equal(offline.rows[0].source, 'node-upgrade.md');
  assert.equal(offline.rows[0].arms.keyword, 1);

  // Clear store (after the confirmation dialog).
  page.once('dialog', (d) => d.accept());
  await page.click('#clear');
  // Clearing opens a new store (PGlite's initdb in the page): as long as a first open (ready).
  await page.waitForFunction(() => /Cleared/.test(document.getElementById('status').textContent), null, { timeout: 120_000 });
  assert.match(await statusText(page), /store is empty/);
  await page.reload();
  await ready(page);
  assert.match(await statusText(page), /store is empty/);

  assert.deepEqual(errors, []);
  await context.close();
});

test('the Node.js docs corpus: ingest time, recall latency, no long main-thread tasks', {
  skip: skip || (!existsSync(join(CORPUS, 'corpus')) && `${CORPUS}/corpus not found`) || (process.env.MEMLOOM_PREVIEW_BENCH === '0' && 'MEMLOOM_PREVIEW_BENCH=0'),
  timeout: 900_000,
}, async () => {
  // The server was stopped by the offline check above: serve again.
  server = await serve(join(OUT, 'dist'));
  base = `http://127.0.0.1:${server.address().port}/`;
  const { context, page, errors } = await newPage();
  const opened = Date.now();
  await page.goto(base);
  await ready(page);
  const firstOpenMs = Date.now() - opened;
  const ingest = await ingestFolder(page, join(CORPUS, 'corpus'));
  assert.equal(ingest.report.files, 60);

  const queries = readFileSync(join(CORPUS, 'queries.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const round = [];
  const sql = [];
  let top1 = 0;
  let scored = 0;
  for (const q of queries) {
    const { rows, timing } = await search(page, q.query);
    round.push(timing.ms);
    sql.push(timing.tookMs);
    const want = (q.relevant ?? []).filter((r) => r.source);
    if (want.length > 0) {
      scored++;
      if (want.some((w) => rows[0]?.source === w.source && rows[0].breadcrumb.split(' > ').at(-1) === w.heading)) top1++;
    }
  }
  const reopened = Date.now();
  await page.reload();
  await ready(page);
  const reopenMs = Date.now() - reopened;
  assert.match(await statusText(page), /60 files/);

  const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  const perf = {
    corpus: `${CORPUS}/corpus`,
    chromium: browser.version(),
    firstOpenMs,
    reopenMs,
    files: ingest.report.files,
    chunks: ingest.report.chunks,
    entities: ingest.index.entities,
    ingestMs: Math.round(ingest.ingestMs),
    indexMs: Math.round(ingest.indexMs),
    totalMs: Math.round(ingest.totalMs),
    // The folder pick to the ingest result, against the sum of the steps the page measures.
    wall: { ...ingest.wall, ratio: Number((ingest.wall.wallMs / Math.max(ingest.wall.stepsMs, 1)).toFixed(2)) },
    longTasksDuringIngest: {
      count: ingest.longTasks.length,
      maxMs: Math.max(0, ...ingest.longTasks.map((t) => t.duration)),
      tasks: ingest.longTasks,
      blockingFrames: ingest.longFrames,
    },
    recall: {
      queries: queries.length,
      pageMs: { p50: pct(round, 50), p95: pct(round, 95), max: Math.max(...round) },
      sqlMs: { p50: pct(sql, 50), p95: pct(sql, 95) },
      chunkTop1: `${top1}/${scored}`,
    },
  };
  writeFileSync(join(OUT, 'perf.json'), `${JSON.stringify(perf, null, 2)}\n`);
  console.log(JSON.stringify(perf, null, 2));
  // A long task's duration is wall time: on a loaded machine (2 cores shared with the worker
  // and other processes) a short task can be preempted past the limit. What the page controls
  // is the script it runs, so the bound is asserted on the scripts of long animation frames.
  const scriptMs = Math.max(0, ...ingest.longFrames.map((f) => f.scripts.reduce((n, x) => n + x.duration, 0)));
  perf.longTasksDuringIngest.maxScriptMs = scriptMs;
  writeFileSync(join(OUT, 'perf.json'), `${JSON.stringify(perf, null, 2)}\n`);
  perf.loadAverage = loadavg()[0];
  writeFileSync(join(OUT, 'perf.json'), `${JSON.stringify(perf, null, 2)}\n`);
  if (!overloaded()) assert.ok(scriptMs <= LONG_TASK_LIMIT_MS, `page scripts ran ${scriptMs} ms in one frame during ingest`);
  assert.deepEqual(errors, []);
  await context.close();
});
