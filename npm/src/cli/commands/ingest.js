import { positiveInt } from '../args.js';
import { runIndex } from './index-cmd.js';
import { indexBuildLine } from '../progress.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'ingest',
  summary: 'chunk, embed and store files (incremental)',
  description:
    'Chunks text and markdown files by heading, embeds the chunks and stores them. Incremental: unchanged files are skipped, changed ones replaced, deleted ones removed from the store. Binary and non-UTF-8 files are skipped with a warning.',
  args: [{ name: 'paths...', description: 'files and directories (walked recursively)' }],
  options: [
    { flags: '--max-bytes <n>', description: "cap each chunk's text at N bytes (default 2000, at least 64)", parse: (s) => positiveInt(s, '--max-bytes') },
    { flags: '--index', description: 'then extract entities of the new items (as `memloom index`)' },
  ],
  examples: [
    ['memloom ingest docs/', 'every text file under docs/'],
    ['memloom ingest README.md docs/ --index', 'then index entities for the entity arm'],
    ['memloom ingest docs/ --json | jq .added', 'the report as JSON'],
  ],
  json: '{files, added, changed, unchanged, removed, skipped, empty, chunks, seconds, index?}: index is the index --json report with --index',
  async run(ctx, [paths], o) {
    return ctx.withStore(async (store) => {
      const bar = ctx.progress('files');
      const started = Date.now();
      const report = await store.ingest(paths, {
        maxBytes: o.maxBytes,
        onProgress: bar.update,
        onWarning: (w) => {
          bar.clear();
          ctx.warn(`skipped ${w.path ?? w.source}: ${w.reason}`);
        },
        onIndexBuild: (e) => {
          bar.clear();
          ctx.info(indexBuildLine(e));
        },
      });
      bar.done();
      const secs = (Date.now() - started) / 1000;
      ctx.info(
        `ingested ${report.files} files in ${secs.toFixed(1)} s: ${report.added} new, ${report.changed} changed, ` +
          `${report.unchanged} unchanged, ${report.removed} removed, ${report.skipped} skipped` +
          (report.empty ? `, ${report.empty} empty (no text to index: only headings or blank)` : '') +
          `; ${report.chunks} chunks written`,
      );
      const indexed = o.index ? await runIndex(ctx, store, {}) : undefined;
      if (ctx.json) ctx.outJson({ ...report, seconds: secs, ...(indexed ? { index: indexed } : {}) });
      return 0;
    });
  },
};
