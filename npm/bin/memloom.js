#!/usr/bin/env node
// The memloom CLI. Data goes to stdout, progress and diagnostics to stderr; exit 0 on success,
// 2 on any error, with a message that says what to do.
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { openStore, embedderFromEnv, extractorFromEnv, offlineExtractor, MemloomError, ARMS, IMPORT_BATCH } from '../src/entry-node.js';
import { isTransient, WRITE_ATTEMPTS } from '../src/errors.js';
import { toInstant } from '../src/store.js';

const USAGE = `memloom: hybrid recall over your docs and team memories

usage: memloom <command> [options]

commands:
  init                              create the store (and apply migrations)
  ingest <dir|file>... [--index]    chunk, embed and store files (incremental); --index: then index
  remember <text> [--key K] [--at WHEN]
                                    save a memory; a new version of K supersedes the old;
                                    --at: when the event happened (2023-05-08, ISO 8601)
  remember --file memories.jsonl [--batch-size N] [--json]
                                    save {key, seq, text, at} records: streamed in batches of N
                                    (500), each batch one transaction; a re-run after an
                                    interruption resumes (one version per key and seq)
  recall <query> [--limit N] [--json] [--explain] [--arms vector,keyword,entity] [--kinds memory,chunk]
         [--as-of WHEN] [--since WHEN] [--until WHEN]
                                    --as-of: what was believed then (2026-03-01T12:00Z); --since /
                                    --until: only events in that range (inclusive; docs/TIME.md)
  recall --batch queries.jsonl --json   one JSONL line {id, results} per {id, query} line
                                    (a line's asOf / since / until override the flags)
  forget --key K | --id N           delete a memory key (every version) or one item
  forget --namespace NS --yes       delete everything namespace NS holds (items, entities, statistics)
  history <key> [--json]            every version of a memory key, with when it held (valid from / to)
  index [--all] [--offline]         extract entities (for the entity arm) of items not indexed yet
  stats                             what the store holds
  mcp                               serve the store to an agent over MCP (stdio; see docs/MCP.md)

store options (every command):
  --store DIR          embedded store directory (default ./.memloom)
  --database-url URL   a PostgreSQL server with pgvector instead (or DATABASE_URL)
  --namespace NS       the namespace to read and write (default "default")

  --embedder NAME      an offline embedder: hash-v1 (default) or static-v1 (or MEMLOOM_EMBEDDER)

embedder: hash-v1 (offline) unless --embedder / MEMLOOM_EMBEDDER names another offline one
(static-v1: distilled from all-MiniLM-L6-v2, plus hash-v1's features), or MEMLOOM_EMBED_URL,
MEMLOOM_EMBED_MODEL, MEMLOOM_EMBED_DIMS (and MEMLOOM_EMBED_KEY) name an OpenAI-compatible
/v1/embeddings endpoint. A store keeps the embedder it was created with.
entity extractor: offline (built in) unless MEMLOOM_EXTRACT_URL and MEMLOOM_EXTRACT_MODEL (and
MEMLOOM_EXTRACT_KEY) name an OpenAI-compatible /v1/chat/completions endpoint; index --offline
ignores them.`;

const GLOBAL = {
  store: { type: 'string' },
  'database-url': { type: 'string' },
  namespace: { type: 'string' },
  embedder: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

const COMMANDS = {
  init: { options: {}, run: cmdInit },
  ingest: { options: { 'max-bytes': { type: 'string' }, json: { type: 'boolean' }, index: { type: 'boolean' } }, run: cmdIngest },
  remember: { options: { key: { type: 'string' }, at: { type: 'string' }, file: { type: 'string' }, 'batch-size': { type: 'string' }, json: { type: 'boolean' } }, run: cmdRemember },
  recall: {
    options: {
      limit: { type: 'string' },
      json: { type: 'boolean' },
      explain: { type: 'boolean' },
      arms: { type: 'string' },
      kinds: { type: 'string' },
      batch: { type: 'string' },
      'as-of': { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
    },
    run: cmdRecall,
  },
  forget: { options: { key: { type: 'string' }, id: { type: 'string' }, yes: { type: 'boolean' } }, run: cmdForget },
  history: { options: { json: { type: 'boolean' } }, run: cmdHistory },
  index: { options: { all: { type: 'boolean' }, offline: { type: 'boolean' }, json: { type: 'boolean' } }, run: cmdIndex },
  stats: { options: { json: { type: 'boolean' } }, run: cmdStats },
  mcp: { options: {}, run: cmdMcp },
};

class UsageError extends MemloomError {}

const out = (s) => process.stdout.write(s + '\n');
const err = (s) => process.stderr.write(s + '\n');

async function main(argv) {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    out(USAGE);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-V') {
    out(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
    return 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) throw new UsageError(`unknown command "${name}"; commands are ${Object.keys(COMMANDS).join(', ')} (memloom --help)`);
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { ...GLOBAL, ...cmd.options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${name}: ${e.message.replace(/\. To specify a positional argument.*$/s, '')} (memloom --help)`);
  }
  if (parsed.values.help) {
    out(USAGE);
    return 0;
  }
  return cmd.run(parsed.values, parsed.positionals);
}

// Store -----------------------------------------------------------------------------------------
function storeTarget(v) {
  const url = v['database-url'] ?? process.env.DATABASE_URL;
  if (url && v.store) throw new UsageError('pass either --store or --database-url, not both');
  if (url) return { url, label: 'the database' };
  const dir = resolve(v.store ?? '.memloom');
  return { dir, label: dir };
}

async function open(v, { create = false } = {}) {
  const target = storeTarget(v);
  if (target.dir && !create && !existsSync(resolve(target.dir, 'PG_VERSION'))) {
    throw new MemloomError(
      `no memloom store at ${target.dir}; run \`memloom init${v.store ? ` --store ${v.store}` : ''}\` first, or pass --store DIR / --database-url URL`,
    );
  }
  return openStore({
    dir: target.dir,
    url: target.url,
    namespace: v.namespace,
    embedder: embedderFromEnv(v.embedder ? { ...process.env, MEMLOOM_EMBEDDER: v.embedder } : process.env),
    create,
  });
}

async function withStore(v, fn, opts) {
  const store = await open(v, opts);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

// Commands --------------------------------------------------------------------------------------
async function cmdInit(v, pos) {
  if (pos.length) throw new UsageError('init takes no arguments');
  return withStore(
    v,
    async (store) => {
      const s = await store.stats();
      const e = s.embedder;
      err(`memloom: store ready at ${s.location} (${s.backend}, schema ${s.schemaVersion}, embedder ${e.name}-v${e.version}, ${e.dims} dims)`);
      return 0;
    },
    { create: true },
  );
}

async function cmdIngest(v, pos) {
  if (pos.length === 0) throw new UsageError('ingest needs at least one file or directory');
  const maxBytes = v['max-bytes'] === undefined ? undefined : positiveInt(v['max-bytes'], '--max-bytes');
  return withStore(v, async (store) => {
    // Piped, a line every few seconds: files are written in batches (sql/0013), each file
    // reported as its batch commits.
    const bar = progressBar('files', { plain: true });
    const started = Date.now();
    const report = await store.ingest(pos, {
      maxBytes,
      onProgress: bar.update,
      onWarning: (w) => {
        bar.clear();
        err(`memloom: warning: skipped ${w.path ?? w.source}: ${w.reason}`);
      },
    });
    bar.done();
    const secs = (Date.now() - started) / 1000;
    err(
      `memloom: ingested ${report.files} files in ${secs.toFixed(1)} s: ${report.added} new, ${report.changed} changed, ` +
        `${report.unchanged} unchanged, ${report.removed} removed, ${report.skipped} skipped` +
        (report.empty ? `, ${report.empty} empty (no text to index: only headings or blank)` : '') +
        `; ${report.chunks} chunks written`,
    );
    const indexed = v.index ? await runIndex(store, {}) : undefined;
    if (v.json) out(JSON.stringify({ ...report, seconds: secs, ...(indexed ? { index: indexed } : {}) }));
    return 0;
  });
}

async function cmdRemember(v, pos) {
  if (v.file) {
    if (pos.length || v.key || v.at) throw new UsageError('remember --file takes no text, --key or --at (they come from the file)');
    const batchSize = v['batch-size'] === undefined ? IMPORT_BATCH : positiveInt(v['batch-size'], '--batch-size');
    const check = (obj, where) => {
      if (typeof obj.text !== 'string' || obj.text.trim() === '') throw new MemloomError(`${where}: "text" must be a non-empty string`);
      if (obj.key != null && (typeof obj.key !== 'string' || obj.key === '')) throw new MemloomError(`${where}: "key" must be a non-empty string`);
      if (obj.seq != null && !Number.isFinite(obj.seq)) throw new MemloomError(`${where}: "seq" must be a number`);
      const at = toInstant(obj.at, `${where}: "at"`);
      records++;
      // Here, in the first pass, not only when its batch comes: nothing is written then.
      for (const field of ['text', 'key']) {
        if (typeof obj[field] === 'string' && obj[field].includes('\0')) {
          throw new MemloomError(`${where}: memory ${records}'s ${field} contains a NUL character (U+0000), which PostgreSQL cannot store; remove it`);
        }
      }
      return { key: obj.key ?? null, seq: obj.seq ?? 0, text: obj.text, at };
    };
    let records = 0;
    // First pass, nothing kept but each key's last seq: every line valid and each key's lines
    // in increasing seq order, or nothing is written (the second pass streams in batches).
    const last = new Map();
    let total = 0;
    for await (const { record: r, where } of readJsonl(v.file, check)) {
      total++;
      if (r.key === null) continue;
      const prev = last.get(r.key);
      if (prev !== undefined && r.seq <= prev.seq) {
        throw new MemloomError(
          `${where}: key ${JSON.stringify(r.key)} has seq ${r.seq} after seq ${prev.seq} (${prev.where}); the lines of a key must come in increasing seq order, one line per (key, seq): sort the file by seq or give later versions a higher seq`,
        );
      }
      last.set(r.key, { seq: r.seq, where });
    }
    last.clear();
    records = 0;
    return withStore(v, async (store) => {
      const bar = progressBar('memories', { plain: true, plainEvery: PLAIN_PROGRESS_BATCHES });
      const started = Date.now();
      const records = (async function* () {
        for await (const { record } of readJsonl(v.file, check)) yield record;
      })();
      const res = await store.importMemories(records, {
        batchSize,
        onBatch: (b) => bar.update({ done: b.read, total, started, tick: true }),
      });
      bar.done();
      const secs = (Date.now() - started) / 1000;
      err(
        `memloom: remembered ${res.read} memories from ${v.file} (${res.written} written, ${res.superseding} of them new versions of existing keys` +
          `${res.skipped ? `; ${res.skipped} skipped: unchanged or imported before` : ''}) in ${res.batches} batches, ${secs.toFixed(1)} s`,
      );
      if (v.json) out(JSON.stringify({ ...res, seconds: secs }));
      return 0;
    });
  }
  if (pos.length !== 1) throw new UsageError('remember takes one text argument (quote it), or --file memories.jsonl');
  return withStore(v, async (store) => {
    const r = await store.remember(pos[0], { key: v.key, at: toInstant(v.at, '--at') });
    out(
      r.key
        ? `remembered ${r.key} version ${r.version} (id ${r.id})${r.version > 1 ? `; version ${r.version - 1} is superseded` : ''}`
        : `remembered id ${r.id}`,
    );
    return 0;
  });
}

async function cmdRecall(v, pos) {
  const opts = { explain: !!v.explain };
  if (v.limit !== undefined) opts.limit = positiveInt(v.limit, '--limit');
  if (v.arms !== undefined) {
    opts.arms = splitList(v.arms);
    const bad = opts.arms.filter((a) => !ARMS.includes(a));
    if (bad.length || opts.arms.length === 0) throw new UsageError(`--arms takes a comma-separated subset of ${ARMS.join(',')}, not "${v.arms}"`);
  }
  if (v.kinds !== undefined) {
    opts.kinds = splitList(v.kinds);
    if (opts.kinds.some((k) => k !== 'memory' && k !== 'chunk')) throw new UsageError(`--kinds takes memory, chunk or both, not "${v.kinds}"`);
  }
  for (const [flag, opt] of [['as-of', 'asOf'], ['since', 'since'], ['until', 'until']]) {
    if (v[flag] !== undefined) opts[opt] = toInstant(v[flag], `--${flag}`, { endOfDay: opt === 'until' });
  }
  if (v.batch) {
    if (pos.length) throw new UsageError('recall --batch takes no query argument');
    if (!v.json) throw new UsageError('recall --batch writes JSONL: add --json');
    const queries = await readJsonlAll(v.batch, (obj, where) => {
      if (obj.id === undefined || obj.id === null) throw new MemloomError(`${where}: missing "id"`);
      if (typeof obj.query !== 'string' || obj.query.trim() === '') throw new MemloomError(`${where}: "query" must be a non-empty string`);
      const q = { id: obj.id, query: obj.query };
      for (const opt of ['asOf', 'since', 'until']) {
        if (obj[opt] != null) q[opt] = toInstant(obj[opt], `${where}: "${opt}"`, { endOfDay: opt === 'until' });
      }
      return q;
    });
    return withStore(v, async (store) => {
      const times = [];
      const bar = progressBar('queries');
      const started = Date.now();
      for (const [i, q] of queries.entries()) {
        const r = await store.recall(q.query, { ...opts, asOf: q.asOf ?? opts.asOf, since: q.since ?? opts.since, until: q.until ?? opts.until });
        times.push(r.tookMs);
        out(JSON.stringify({ id: q.id, results: r.results }));
        bar.update({ done: i + 1, total: queries.length, started });
      }
      bar.done();
      times.sort((a, b) => a - b);
      const pct = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
      err(`memloom: ${queries.length} queries; recall latency p50 ${pct(0.5).toFixed(1)} ms, p95 ${pct(0.95).toFixed(1)} ms`);
      return 0;
    });
  }
  if (pos.length !== 1) throw new UsageError('recall takes one query argument (quote it), or --batch queries.jsonl --json');
  return withStore(v, async (store) => {
    const r = await store.recall(pos[0], opts);
    if (v.json) out(JSON.stringify(r));
    else printRecall(r, opts);
    return 0;
  });
}

async function cmdForget(v, pos) {
  if (!pos.length && v.key === undefined && v.id === undefined && v.namespace !== undefined) {
    if (!v.yes) {
      throw new UsageError(
        `forget --namespace ${v.namespace} deletes every item, memory, entity and statistic of namespace "${v.namespace}" and cannot be undone; add --yes to do it`,
      );
    }
    return withStore(v, async (store) => {
      const r = await store.forget({ all: true, namespace: store.namespace });
      out(`forgot namespace ${store.namespace}: ${r.deleted} item${r.deleted === 1 ? '' : 's'}, ${r.mentions} mention${r.mentions === 1 ? '' : 's'}, ${r.entities} entit${r.entities === 1 ? 'y' : 'ies'}, ${r.statistics} statistics row${r.statistics === 1 ? '' : 's'}`);
      return 0;
    });
  }
  if (v.yes) throw new UsageError('forget --yes confirms forgetting a whole namespace: forget --namespace NS --yes (without --key or --id)');
  if (pos.length || (v.key === undefined) === (v.id === undefined)) throw new UsageError('forget takes --key K, --id N, or --namespace NS --yes (the whole namespace)');
  const target = v.key !== undefined ? { key: v.key } : { id: positiveInt(v.id, '--id') };
  return withStore(v, async (store) => {
    const { deleted } = await store.forget(target);
    out(`forgot ${deleted} item${deleted === 1 ? '' : 's'}`);
    return 0;
  });
}

async function cmdHistory(v, pos) {
  if (pos.length !== 1) throw new UsageError('history takes one memory key');
  return withStore(v, async (store) => {
    const versions = await store.history(pos[0]);
    if (versions.length === 0) throw new MemloomError(`no memory with key "${pos[0]}" in namespace ${store.namespace}`);
    if (v.json) out(JSON.stringify(versions));
    else {
      for (const h of versions) {
        const held = `${h.validFrom} .. ${h.validTo ?? 'now'.padEnd(24)}`;
        out(`v${h.version}  ${h.status.padEnd(10)}  ${held}  ${h.eventAt ? `event ${h.eventAt}  ` : ''}${h.content}`);
      }
    }
    return 0;
  });
}

async function cmdIndex(v, pos) {
  if (pos.length) throw new UsageError('index takes no arguments');
  return withStore(v, async (store) => {
    const r = await runIndex(store, { all: !!v.all, offline: !!v.offline });
    if (v.json) out(JSON.stringify(r));
    return 0;
  });
}

/** Indexes with progress (counts and rate) and warnings on stderr; returns the report. */
async function runIndex(store, { all = false, offline = false }) {
  const extractor = offline ? offlineExtractor() : extractorFromEnv();
  const bar = progressBar('items', { plain: true });
  const r = await store.index({
    extractor,
    all,
    onProgress: bar.update,
    onWarning: (w) => {
      bar.clear();
      err(`memloom: warning: ${w.reason}`);
    },
  });
  bar.done();
  const rate = r.items / Math.max(r.seconds, 0.001);
  err(
    `memloom: indexed ${r.items} items: ${r.entities} entities (${r.newEntities} new), ${r.mentions} mentions ` +
      `in ${r.seconds.toFixed(1)} s (${rate.toFixed(0)} items/s, ${r.extractor} extractor)` +
      (r.fallbacks ? `; ${r.fallbacks} items fell back to the offline extractor` : '') +
      (r.removedMentions || r.removedEntities ? `; removed ${r.removedMentions} stale mentions, ${r.removedEntities} unused entities` : ''),
  );
  return r;
}

async function cmdStats(v, pos) {
  if (pos.length) throw new UsageError('stats takes no arguments');
  return withStore(v, async (store) => {
    const s = await store.stats();
    if (v.json) {
      out(JSON.stringify(s));
      return 0;
    }
    out(`store       ${s.location} (${s.backend}, schema ${s.schemaVersion})`);
    out(`namespace   ${s.namespace}`);
    out(`embedder    ${s.embedder.name}-v${s.embedder.version} (${s.embedder.dims} dims)`);
    out(`files       ${s.files}`);
    out(`chunks      ${s.chunks}`);
    out(`memories    ${s.memories.active} active, ${s.memories.superseded} superseded, ${s.memories.keys} keys`);
    out(`entities    ${s.entities} (${s.unindexed} items not indexed yet)`);
    out(`vectors     ${s.vectorIndex}`);
    return 0;
  });
}

/** An MCP server on stdio (npm/src/mcp.js); creates the store when missing. Runs until stdin closes. */
async function cmdMcp(v, pos) {
  if (pos.length) throw new UsageError('mcp takes no arguments (it speaks MCP on stdin/stdout)');
  const { serveStdio, divertConsoleToStderr } = await import('../src/mcp.js');
  divertConsoleToStderr();
  const target = storeTarget(v);
  if (target.dir && !existsSync(resolve(target.dir, 'PG_VERSION'))) err(`memloom mcp: creating a new store at ${target.dir}`);
  const store = await open(v, { create: true });
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  await serveStdio(store, { version });
  return 0;
}

// Helpers ---------------------------------------------------------------------------------------
function printRecall(r, opts) {
  if (r.results.length === 0) {
    out(`no results for "${r.query}"`);
    return;
  }
  for (const [i, h] of r.results.entries()) {
    const where = h.kind === 'memory' ? `memory${h.key ? ` ${h.key}` : ''} (id ${h.id})` : `${h.source} — ${h.breadcrumb}`;
    const ranks = ARMS.map((a) => `${a} ${h.ranks[a] ?? '–'}`).join(' · ');
    out(`${i + 1}. ${where}`);
    out(`   score ${h.rrfScore.toFixed(4)}  similarity ${h.similarity.toFixed(3)}  ranks: ${ranks}`);
    if (opts.explain && h.explain) {
      const terms = ARMS.filter((a) => h.explain.terms[a])
        .map((a) => {
          const t = h.explain.terms[a];
          return `${a} ${t.weight}/(${h.explain.k}+${t.rank}) = ${t.term.toFixed(4)}`;
        })
        .join(' + ');
      // Past the voted candidates, rows come unscored (sql/0010): say so rather than "rrf = ".
      out(terms ? `   rrf = ${terms}` : '   no arm voted: listed after the fused results, by its position in the deeper arm lists');
    }
    const text = h.kind === 'chunk' && h.breadcrumb && h.content.startsWith(h.breadcrumb) ? h.content.slice(h.breadcrumb.length) : h.content;
    const oneLine = text.replace(/\s+/g, ' ').trim();
    out(`   ${oneLine.length > 160 ? oneLine.slice(0, 157) + '...' : oneLine}`);
  }
  err(`memloom: ${r.results.length} results in ${r.tookMs.toFixed(1)} ms`);
}

/**
 * Streams a JSONL file: yields `{record: check(obj, where), where}` for each non-blank line
 * ("path:line"), reading it as it goes (nothing but the current line is held).
 */
async function* readJsonl(path, check) {
  if (!existsSync(path)) throw new MemloomError(`cannot read ${path}: no such file`);
  const rl = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of rl) {
      n++;
      if (line.trim() === '') continue;
      const where = `${path}:${n}`;
      let obj;
      try {
        obj = JSON.parse(line);
      } catch (e) {
        throw new MemloomError(`${where}: not valid JSON (${e.message}); fix or remove that line`);
      }
      if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new MemloomError(`${where}: expected a JSON object`);
      yield { record: check(obj, where), where };
    }
  } catch (e) {
    if (e instanceof MemloomError) throw e;
    throw new MemloomError(`cannot read ${path}: ${e.message}`);
  } finally {
    rl.close();
  }
}

/** Every record of a JSONL file (readJsonl), validated before any is used. */
async function readJsonlAll(path, check) {
  const all = [];
  for await (const { record } of readJsonl(path, check)) all.push(record);
  return all;
}

function positiveInt(s, flag) {
  const n = Number(s);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} takes a positive integer, not "${s}"`);
  return n;
}

function splitList(s) {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/**
 * A one-line progress bar on stderr when it is a TTY (counts and rate); silent otherwise, or
 * with `plain`, a line every PLAIN_PROGRESS_MS (logs and CI see long runs advance).
 */
function progressBar(unit, { plain = false, plainEvery = 0 } = {}) {
  const tty = process.stderr.isTTY && !process.env.CI;
  let last = 0;
  let lastPlain = Date.now();
  let ticks = 0;
  let shown = false;
  return {
    update({ done, total, chunks, started, tick = false }) {
      const now = Date.now();
      const rate = done / Math.max((now - started) / 1000, 0.001);
      if (!tty) {
        // plainEvery: a line every that many ticks (batches) instead of every PLAIN_PROGRESS_MS.
        const due = plainEvery > 0 ? tick && ++ticks % plainEvery === 0 : now - lastPlain >= PLAIN_PROGRESS_MS;
        if (plain && done < total && due) {
          lastPlain = now;
          err(`memloom: ${done}/${total} ${unit} (${Math.floor((100 * done) / Math.max(total, 1))}%), ${rate.toFixed(0)} ${unit}/s`);
        }
        return;
      }
      if (done < total && now - last < 100) return;
      last = now;
      const width = 28;
      const filled = total ? Math.round((done / total) * width) : 0;
      const extra = chunks === undefined ? '' : `  ${chunks} chunks`;
      process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${unit}${extra}  ${rate.toFixed(1)} ${unit}/s\x1b[K`);
      shown = true;
    },
    clear() {
      if (shown) process.stderr.write('\r\x1b[K');
    },
    done() {
      if (shown) process.stderr.write('\n');
      shown = false;
    },
  };
}
const PLAIN_PROGRESS_MS = Number(process.env.MEMLOOM_PROGRESS_MS) || 2000;
/** remember --file, not on a TTY: a progress line every this many batches (committed). */
const PLAIN_PROGRESS_BATCHES = Number(process.env.MEMLOOM_PROGRESS_BATCHES) || 20;

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    if (e instanceof MemloomError) err(`memloom: error: ${e.message}`);
    else if (isTransient(e)) {
      // The store retried the transaction already (db-pg.js): say so in one line, no stack.
      err(`memloom: error: the write collided with other writers ${WRITE_ATTEMPTS} times (${e.code === '40P01' ? 'deadlock' : 'serialization failure'}); nothing was changed, run the command again`);
    } else err(`memloom: unexpected error: ${e?.stack ?? e}\n(please report it with the command you ran)`);
    process.exitCode = 2;
  },
);
