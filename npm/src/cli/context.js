// What every command gets: the global options, output that honours --json and --quiet, the
// effective settings (config-node.js: flags > env > store config > user config > defaults) and
// the store they name.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { openStore, MemloomError } from '../entry-node.js';
import { embedderFromSettings } from '../embedders.js';
import { extractorFromSettings, offlineExtractor } from '../extractors.js';
import { loadSettings } from '../config-node.js';
import { section } from '../settings.js';
import { UsageError } from './args.js';
import { out, err } from './output.js';
import { progressBar } from './progress.js';

/**
 * @typedef {{ store?: string, databaseUrl?: string, namespace?: string, embedder?: string, json?: boolean, quiet?: boolean }} GlobalOptions
 * @typedef {{ dir?: string, url?: string, label: string }} Target
 */

export class Context {
  /**
   * @param {GlobalOptions} g
   * @param {{ oneShot?: boolean }} [o] oneShot: this process runs one short command and exits
   *   (bin/memloom.js, cli/warm.js oneShot): an embedded store opens with a smaller buffer pool
   */
  constructor(g, { oneShot = false } = {}) {
    this.g = g;
    this.oneShot = oneShot;
    this.json = !!g.json;
    this.quiet = !!g.quiet;
    /** @type {ReturnType<typeof loadSettings> | undefined} */
    this._settings = undefined;
  }

  /** Data on stdout. @param {string} s */
  out(s) {
    out(s);
  }

  /** A JSON value on stdout, one line. @param {unknown} v */
  outJson(v) {
    out(JSON.stringify(v));
  }

  /** A diagnostic (summary) on stderr, unless --quiet. @param {string} s */
  info(s) {
    if (!this.quiet) err(`memloom: ${s}`);
  }

  /** A warning on stderr, even with --quiet. @param {string} s */
  warn(s) {
    err(`memloom: warning: ${s}`);
  }

  /** The store named by --store / --database-url / DATABASE_URL (default ./.memloom). @returns {Target} */
  get target() {
    const url = this.g.databaseUrl ?? process.env.DATABASE_URL;
    if (url && this.g.store) throw new UsageError('pass either --store or --database-url, not both');
    if (url) return { url, label: 'the database' };
    const dir = resolve(this.g.store ?? '.memloom');
    return { dir, label: dir };
  }

  /** The effective settings of this run (read once). */
  get settings() {
    if (!this._settings) {
      /** @type {Record<string, string>} */
      const flags = {};
      if (this.g.embedder !== undefined) flags['embedder.name'] = this.g.embedder;
      this._settings = loadSettings({ flags, dir: this.target.dir });
    }
    return this._settings;
  }

  embedder() {
    return embedderFromSettings(section(this.settings, 'embedder'), { apiKeyFallback: this.settings.apiKeyFallback });
  }

  /** @param {{ offline?: boolean }} [o] */
  extractor({ offline = false } = {}) {
    return offline ? offlineExtractor() : extractorFromSettings(section(this.settings, 'extractor'), { apiKeyFallback: this.settings.apiKeyFallback });
  }

  /**
   * A progress display honouring --quiet and the progress settings.
   * @param {string} unit
   * @param {{ batches?: boolean, label?: string }} [o]  batches: count committed batches
   *   (remember --file) instead of items; label: a prefix of each line
   */
  progress(unit, { batches = false, label } = {}) {
    const p = section(this.settings, 'progress');
    return progressBar(unit, { quiet: this.quiet, everyFiles: p.everyFiles, everyMs: p.everyMs, everyBatches: batches ? p.everyBatches : 0, label });
  }

  /** Whether the embedded store exists yet (always true for a server). */
  exists() {
    const t = this.target;
    return !t.dir || existsSync(resolve(t.dir, 'PG_VERSION'));
  }

  /** @param {{ create?: boolean }} [o] */
  async open({ create = false } = {}) {
    const target = this.target;
    const chosen = this.embedder(); // first: a bad config file is reported even before init
    // No flag, variable or config file names one: an existing store embeds with the offline
    // embedder it was built with (openStore), a new one with the default.
    const embedder = this.settings.sources['embedder.name'] === 'default' ? undefined : chosen;
    if (!create && !this.exists()) {
      throw new MemloomError(
        `no memloom store at ${target.dir}; run \`memloom init${this.g.store ? ` --store ${this.g.store}` : ''}\` first, or pass --store DIR / --database-url URL`,
      );
    }
    const pglite = this.oneShot && target.dir ? { startParams: (await import('../db-pglite.js')).oneShotStartParams() } : undefined;
    return openStore({ dir: target.dir, url: target.url, namespace: this.g.namespace, embedder, create, pglite });
  }

  /**
   * @template T
   * @param {(store: import('../store.js').Store) => Promise<T>} fn
   * @param {{ create?: boolean }} [o]
   */
  async withStore(fn, o) {
    const store = await this.open(o);
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }
}
