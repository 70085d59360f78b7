// The preview page (main thread): UI only. The store lives in a Web Worker (worker.js), so
// reading, chunking, embedding and inserting never block typing or scrolling.

/** Wait this long after the last keystroke before searching. */
const SEARCH_DEBOUNCE_MS = 150;
/** Results shown per search. */
const RESULT_LIMIT = 10;
/** Characters of matched text shown per result. */
const SNIPPET_CHARS = 320;
/** Folders skipped when walking a dropped or picked folder (as the CLI does). */
const SKIP_DIRS = new Set(['node_modules', 'target']);
const ARMS = ['vector', 'keyword', 'entity'];

const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  for (const c of children) if (c != null) node.append(c);
  return node;
};

// Worker RPC ------------------------------------------------------------------------------------
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'memloom-store' });
const pending = new Map();
let nextId = 1;
function call(op, args) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, op, args });
  });
}
worker.onmessage = (event) => {
  const m = event.data;
  if (m.type === 'progress') return showProgress(m);
  const p = pending.get(m.id);
  if (!p) return;
  pending.delete(m.id);
  if (m.ok) p.resolve(m.value);
  else p.reject(new Error(m.error));
};
worker.onerror = (e) => setStatus(`The store failed to start: ${e.message ?? 'see the console'}.`, true);

// Status ----------------------------------------------------------------------------------------
let busy = false;
function setStatus(text, error = false) {
  const s = $('status');
  s.textContent = text;
  s.classList.toggle('error', error);
}
function describe(stats) {
  if (stats.files === 0 && stats.memories.active === 0) return 'The store is empty: add a folder of markdown to start.';
  const n = (k, one, many = `${one}s`) => `${k.toLocaleString()} ${k === 1 ? one : many}`;
  return `Store: ${n(stats.files, 'file')}, ${n(stats.chunks, 'chunk')}, ${n(stats.memories.active, 'memory', 'memories')}, ${n(stats.entities, 'entity', 'entities')}.`;
}
async function refreshStats() {
  const stats = await call('stats');
  setStatus(describe(stats));
  return stats;
}

// Adding files ----------------------------------------------------------------------------------
/** [{root, source, file}] from an <input type=file> (webkitRelativePath gives the folder). */
function fromInput(fileList) {
  const out = [];
  for (const file of fileList) {
    const rel = file.webkitRelativePath || file.name;
    const parts = rel.split('/');
    if (parts.some((p) => p.startsWith('.') || SKIP_DIRS.has(p))) continue;
    if (parts.length > 1) out.push({ root: parts[0], source: parts.slice(1).join('/'), file });
    else out.push({ root: '', source: rel, file });
  }
  return out;
}

/** [{root, source, file}] from dropped items: folders are walked (webkitGetAsEntry). */
async function fromDrop(items) {
  const entries = [];
  for (const item of items) {
    const entry = item.kind === 'file' ? item.webkitGetAsEntry?.() : null;
    if (entry) entries.push(entry);
  }
  const out = [];
  const fileOf = (entry) => new Promise((resolve, reject) => entry.file(resolve, reject));
  const readAll = async (dir) => {
    const reader = dir.createReader();
    const all = [];
    for (;;) {
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (batch.length === 0) return all;
      all.push(...batch);
    }
  };
  const walk = async (entry, root, prefix) => {
    if (entry.name.startsWith('.')) return;
    if (entry.isFile) {
      out.push({ root, source: prefix + entry.name, file: await fileOf(entry) });
    } else if (entry.isDirectory && !SKIP_DIRS.has(entry.name)) {
      for (const child of await readAll(entry)) await walk(child, root, `${prefix}${entry.name}/`);
    }
  };
  for (const entry of entries) {
    if (entry.isDirectory) {
      if (entry.name.startsWith('.') || SKIP_DIRS.has(entry.name)) continue;
      for (const child of await readAll(entry)) await walk(child, entry.name, '');
    } else {
      await walk(entry, '', '');
    }
  }
  return out;
}

function showProgress(p) {
  const box = $('progress');
  box.hidden = false;
  const bar = $('progress-bar');
  const secs = Math.max(p.elapsedMs / 1000, 0.001);
  if (p.phase === 'ingest') {
    $('progress-label').textContent = 'Reading, chunking and embedding…';
    bar.max = Math.max(p.total, 1);
    bar.value = p.done;
    $('progress-text').textContent =
      `${p.done} / ${p.total} files · ${p.chunks.toLocaleString()} chunks · ${Math.round(p.chunks / secs).toLocaleString()} chunks/s` +
      (p.source ? ` · ${p.source}` : '');
  } else {
    $('progress-label').textContent = 'Indexing entities…';
    bar.max = Math.max(p.total, 1);
    bar.value = p.done;
    $('progress-text').textContent = `${p.done.toLocaleString()} / ${p.total.toLocaleString()} items · ${Math.round(p.done / secs).toLocaleString()} items/s`;
  }
}

async function ingest(files) {
  if (busy) return;
  if (files.length === 0) {
    setStatus('Nothing to add: no files found (dot-files, node_modules and target are skipped).');
    return;
  }
  busy = true;
  document.body.classList.add('busy');
  $('warnings').hidden = true;
  setStatus(`Adding ${files.length} file${files.length === 1 ? '' : 's'}…`);
  try {
    const posted = performance.timeOrigin + performance.now();
    const r = await call('ingest', { files });
    r.timeline = { posted, ...r.timeline, answered: performance.timeOrigin + performance.now() };
    const secs = (r.totalMs / 1000).toFixed(1);
    $('progress-label').textContent = 'Done';
    $('progress-bar').value = $('progress-bar').max;
    $('progress-text').textContent =
      `${r.report.files} files read (${r.report.added} new, ${r.report.changed} changed, ${r.report.unchanged} unchanged${r.report.empty ? `, ${r.report.empty} empty` : ''}) · ` +
      `${r.report.chunks.toLocaleString()} chunks · ${r.index.newEntities.toLocaleString()} new entities · ${secs} s`;
    if (r.warnings.length > 0) {
      $('warnings-summary').textContent = `${r.warnings.length} file${r.warnings.length === 1 ? '' : 's'} skipped`;
      $('warnings-list').replaceChildren(...r.warnings.map((w) => el('li', {}, el('code', { textContent: w.source }), `: ${w.reason}`)));
      $('warnings').hidden = false;
    }
    setStatus(describe(r.stats));
    window.__memloomLastIngest = r;
    if ($('q').value.trim()) search();
  } catch (e) {
    setStatus(`Adding files failed: ${e.message}`, true);
  } finally {
    busy = false;
    document.body.classList.remove('busy');
  }
}

for (const id of ['pick-folder', 'pick-files']) {
  $(id).addEventListener('change', (e) => {
    const files = fromInput(e.target.files);
    e.target.value = '';
    ingest(files);
  });
}
const drop = $('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  e.dataTransfer.dropEffect = 'copy';
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', async (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  // Entries must be taken synchronously, before the event returns.
  const items = [...e.dataTransfer.items];
  const files = items.some((i) => i.webkitGetAsEntry) ? await fromDrop(items) : fromInput(e.dataTransfer.files);
  ingest(files);
});
// A drop anywhere else would navigate away from the page.
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => e.preventDefault());

// Search ----------------------------------------------------------------------------------------
/** Words not worth highlighting. */
const STOP = new Set('a an and are as at be by can do does for from how i if in is it its my of on or the this to was what when where which who why will with'.split(' '));
const WORD = '[\\p{L}\\p{N}_]';

/** Query words worth highlighting: identifiers and words, longest first (so `pg_hba.conf` wins). */
function queryTerms(query) {
  const words = query.match(/[\p{L}\p{N}_][\p{L}\p{N}_.:/-]*[\p{L}\p{N}_]|[\p{L}\p{N}_]/gu) ?? [];
  const terms = new Set();
  for (const w of words) {
    const lower = w.toLowerCase();
    if (lower.length >= 2 && !STOP.has(lower)) terms.add(lower);
    // The dotted parts of `process.hrtime.bigint`; `_` joins words of one identifier.
    for (const part of lower.split(/[.:/-]+/)) if (part.length >= 5 && !STOP.has(part)) terms.add(part);
  }
  return [...terms].sort((a, b) => b.length - a.length);
}

/** Text and <mark> nodes: whole-word occurrences of the terms (plus a plural or -ed/-ing). */
function highlight(text, terms) {
  if (terms.length === 0) return [text];
  const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const re = new RegExp(`(?<!${WORD})(?:${escaped.join('|')})(?:s|es|ed|d|ing)?(?!${WORD})`, 'giu');
  const out = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(el('mark', { textContent: m[0] }));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** The part of a result's text around its first match, about SNIPPET_CHARS long. */
function snippet(r, terms) {
  const prefix = r.breadcrumb ? `${r.breadcrumb}\n\n` : '';
  const body = (prefix && r.content.startsWith(prefix) ? r.content.slice(prefix.length) : r.content).replace(/\s+/g, ' ').trim();
  if (body.length <= SNIPPET_CHARS) return body;
  const lower = body.toLowerCase();
  let at = -1;
  for (const t of terms) {
    const i = lower.indexOf(t);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const start = at < 0 ? 0 : Math.max(0, Math.min(at - 80, body.length - SNIPPET_CHARS));
  return `${start > 0 ? '…' : ''}${body.slice(start, start + SNIPPET_CHARS).trim()}${start + SNIPPET_CHARS < body.length ? '…' : ''}`;
}

function renderResult(r, i, terms) {
  const head = el(
    'div',
    { className: 'result-head' },
    el('span', { className: `kind kind-${r.kind}`, textContent: r.kind }),
    r.kind === 'memory'
      ? el('span', { className: 'source' }, r.key ? `key ${r.key}` : 'memory')
      : el('span', { className: 'source', textContent: r.source ?? '' }),
  );
  const crumb = r.breadcrumb ? el('div', { className: 'breadcrumb', textContent: r.breadcrumb }) : null;
  const text = el('p', { className: 'snippet' }, ...highlight(snippet(r, terms), terms));
  const arms = el('ul', { className: 'arms', ariaLabel: 'Arms that found it' });
  for (const a of ARMS) {
    const rank = r.ranks[a];
    arms.append(
      el('li', {
        className: `arm arm-${a}${rank == null ? ' none' : ''}`,
        textContent: rank == null ? `${a} –` : `${a} #${rank}`,
        title: rank == null ? `the ${a} arm did not find it` : `ranked ${rank} by the ${a} arm`,
      }),
    );
    arms.lastChild.dataset.arm = a;
    if (rank != null) arms.lastChild.dataset.rank = String(rank);
  }
  const scores = el(
    'div',
    { className: 'scores' },
    el('span', { title: 'weighted reciprocal-rank fusion score' }, 'score ', el('b', { textContent: r.rrfScore.toFixed(4) })),
    el('span', { title: 'cosine similarity to the query' }, 'similarity ', el('b', { textContent: r.similarity.toFixed(3) })),
  );
  const li = el('li', { className: 'result', tabIndex: -1 }, el('span', { className: 'rank', textContent: `${i + 1}` }), el('div', { className: 'result-body' }, head, crumb, text, el('div', { className: 'result-foot' }, arms, scores)));
  li.dataset.kind = r.kind;
  li.dataset.source = r.source ?? '';
  li.dataset.breadcrumb = r.breadcrumb ?? '';
  return li;
}

let searchSeq = 0;
let debounce;
async function search() {
  const query = $('q').value.trim();
  const seq = ++searchSeq;
  if (!query) {
    $('results').replaceChildren();
    $('search-meta').textContent = '';
    return;
  }
  const started = performance.now();
  try {
    const r = await call('recall', { query, limit: RESULT_LIMIT });
    if (seq !== searchSeq) return; // a newer search is on its way
    const terms = queryTerms(query);
    $('results').replaceChildren(...r.results.map((x, i) => renderResult(x, i, terms)));
    const ms = performance.now() - started;
    $('search-meta').textContent =
      r.results.length === 0
        ? `No results for “${query}”.`
        : `${r.results.length} result${r.results.length === 1 ? '' : 's'} in ${Math.round(ms)} ms (query ${Math.round(r.tookMs)} ms)`;
    document.body.dataset.lastQuery = query;
    window.__memloomLastSearch = { query, ms, tookMs: r.tookMs, n: r.results.length };
  } catch (e) {
    if (seq === searchSeq) $('search-meta').textContent = `Search failed: ${e.message}`;
  }
}
$('q').addEventListener('input', () => {
  clearTimeout(debounce);
  debounce = setTimeout(search, SEARCH_DEBOUNCE_MS);
});
$('search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  clearTimeout(debounce);
  search();
});
// Arrow keys move between the search box and results.
$('q').addEventListener('keydown', (e) => {
  if (e.key === 'ArrowDown') {
    const first = $('results').firstElementChild;
    if (first) {
      e.preventDefault();
      first.focus();
    }
  }
});
$('results').addEventListener('keydown', (e) => {
  const li = e.target.closest('.result');
  if (!li) return;
  if (e.key === 'ArrowDown' && li.nextElementSibling) {
    e.preventDefault();
    li.nextElementSibling.focus();
  } else if (e.key === 'ArrowUp') {
    e.preventDefault();
    (li.previousElementSibling ?? $('q')).focus();
  }
});

// Memories --------------------------------------------------------------------------------------
async function renderMemories() {
  const list = await call('memories');
  const items = list.map((m) => {
    const li = el('li', { className: 'memory' });
    li.append(
      el('div', { className: 'memory-head' },
        el('span', { className: 'memory-key', textContent: m.key ?? '(no key)' }),
        m.key ? el('span', { className: 'memory-version', textContent: `v${m.version}` }) : null),
      el('p', { className: 'memory-text', textContent: m.content }),
    );
    const actions = el('div', { className: 'memory-actions' });
    if (m.key) {
      const hist = el('button', { type: 'button', className: 'link', textContent: m.version > 1 ? `History (${m.version} versions)` : 'History' });
      hist.setAttribute('aria-expanded', 'false');
      const box = el('ol', { className: 'history', hidden: true, ariaLabel: `Versions of ${m.key}` });
      hist.addEventListener('click', async () => {
        const open = hist.getAttribute('aria-expanded') === 'true';
        if (!open) {
          const versions = await call('history', { key: m.key });
          box.replaceChildren(
            ...versions.map((v) =>
              el('li', { className: `version ${v.status}` },
                el('span', { className: 'version-tag', textContent: `v${v.version} · ${v.status}` }),
                el('span', { className: 'version-text', textContent: v.content })),
            ),
          );
        }
        box.hidden = open;
        hist.setAttribute('aria-expanded', String(!open));
      });
      actions.append(hist);
      li.append(actions, box);
    } else {
      li.append(actions);
    }
    const forget = el('button', { type: 'button', className: 'link danger-link', textContent: 'Forget' });
    forget.setAttribute('aria-label', `Forget ${m.key ? `memory ${m.key}` : 'this memory'}`);
    forget.addEventListener('click', async () => {
      await call('forget', m.key ? { key: m.key } : { id: m.id });
      await Promise.all([renderMemories(), refreshStats()]);
      if ($('q').value.trim()) search();
    });
    actions.append(forget);
    return li;
  });
  $('memory-list').replaceChildren(...items);
  if (items.length === 0) $('memory-list').append(el('li', { className: 'empty', textContent: 'No memories yet.' }));
}

$('remember-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const text = $('mem-text').value.trim();
  const key = $('mem-key').value.trim();
  if (!text) return $('mem-text').focus();
  const button = e.submitter ?? $('remember-form').querySelector('button');
  button.disabled = true;
  try {
    const saved = await call('remember', { text, key: key || null });
    $('mem-text').value = '';
    $('mem-key').value = '';
    await Promise.all([renderMemories(), refreshStats()]);
    setStatus(`Remembered${saved.key ? ` ${saved.key} (version ${saved.version})` : ''}. ${$('status').textContent}`);
    if ($('q').value.trim()) search();
  } catch (err) {
    setStatus(`Remember failed: ${err.message}`, true);
  } finally {
    button.disabled = false;
    $('mem-text').focus();
  }
});

// Clear -----------------------------------------------------------------------------------------
$('clear').addEventListener('click', async () => {
  if (busy) return;
  if (!window.confirm('Delete every document and memory stored in this browser?')) return;
  busy = true;
  setStatus('Clearing the store…');
  try {
    const stats = await call('clear');
    $('results').replaceChildren();
    $('search-meta').textContent = '';
    $('progress').hidden = true;
    $('warnings').hidden = true;
    await renderMemories();
    setStatus(`Cleared. ${describe(stats)}`);
  } catch (e) {
    setStatus(`Clearing failed: ${e.message}`, true);
  } finally {
    busy = false;
  }
});

// Offline ---------------------------------------------------------------------------------------
if ('serviceWorker' in navigator) {
  navigator.serviceWorker
    .register(new URL('./sw.js', import.meta.url), { scope: './' })
    .then(() => navigator.serviceWorker.ready)
    .then(() => {
      $('offline').textContent = 'The page and its engine are cached: it works offline from now on.';
    })
    .catch(() => {
      $('offline').textContent = 'This browser did not allow offline caching: the page needs the server to load.';
    });
}

// Start -----------------------------------------------------------------------------------------
(async () => {
  try {
    const stats = await call('open');
    setStatus(describe(stats));
    document.body.dataset.ready = 'true';
    await renderMemories();
  } catch (e) {
    setStatus(`The store could not be opened: ${e.message}`, true);
  }
})();
