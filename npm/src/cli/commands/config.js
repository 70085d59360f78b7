import { existsSync } from 'node:fs';
import { SETTINGS } from '../../settings.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'config',
  summary: 'show the effective settings and where each came from',
  description:
    'Shows the embedder, extractor, progress and daemon (the warm process) settings this command line would use, and where each came from: a flag, a MEMLOOM_* environment variable, the store\'s config file, the user\'s, or the default (secrets masked). ' +
    'Precedence: flags > environment > store config (memloom.config.json beside the store directory; with --database-url, in the current directory) > user config ($XDG_CONFIG_HOME/memloom/config.json, else ~/.config/memloom/config.json) > defaults. ' +
    'A config file is JSON with sections "embedder", "extractor", "progress" and "daemon"; an unknown key is an error naming the key and the file.',
  details:
    'Settings (config key, environment variable):\n' +
    SETTINGS.map((s) => `  ${s.key.padEnd(22)} ${s.env.padEnd(27)} ${s.doc}`).join('\n'),
  examples: [
    ['memloom config', 'the effective settings'],
    ['echo \'{"embedder": {"name": "static-v2"}}\' > memloom.config.json', 'this project\'s store (./.memloom) uses static-v2'],
    ['memloom config --store ~/notes/.memloom --json', 'as JSON, for that store'],
  ],
  json: '{settings: {<key>: {value, source, env}}, files: {store: {path, exists}, user: {path, exists}}} (source: flag, env, default or a file path; secrets "***")',
  noStore: true,
  async run(ctx) {
    const s = ctx.settings;
    /** @type {Record<string, {value: any, source: string, env: string}>} */
    const settings = {};
    for (const def of SETTINGS) {
      if (!(def.key in s.values)) continue;
      const source = s.sources[def.key];
      settings[def.key] = { value: def.secret ? '***' : s.values[def.key], source: source === 'env' ? `env ${def.env}` : source === 'flag' ? `flag ${def.flag}` : source, env: def.env };
    }
    const files = {
      store: { path: s.paths.store, exists: existsSync(s.paths.store) },
      user: { path: s.paths.user, exists: existsSync(s.paths.user) },
    };
    if (ctx.json) {
      ctx.outJson({ settings, files });
      return 0;
    }
    for (const [key, v] of Object.entries(settings)) {
      // Unnamed, the embedder is a new store's; an existing one embeds with its own (openStore).
      const note = key === 'embedder.name' && v.source === 'default' ? ' (for a new store; an existing one uses its own offline embedder)' : '';
      ctx.out(`${key.padEnd(22)} ${String(v.value).padEnd(28)} ${v.source}${note}`);
    }
    ctx.out(`store config: ${files.store.path}${files.store.exists ? '' : ' (none)'}`);
    ctx.out(`user config:  ${files.user.path}${files.user.exists ? '' : ' (none)'}`);
    return 0;
  },
};
