// Config files (Node): where they are, reading and checking them against a zod schema built
// from settings.js's table, and the effective settings of a CLI run (or of `memloom mcp`):
// flags > environment > the store's config > the user's config > defaults.
//
// - store config: memloom.config.json beside the store directory (in its parent: for the
//   default ./.memloom, ./memloom.config.json); with --database-url, in the current directory.
// - user config: $XDG_CONFIG_HOME/memloom/config.json, else ~/.config/memloom/config.json.
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { MemloomError } from './errors.js';
import { SETTINGS, resolveSettings, settingsFromEnv } from './settings.js';

import { STORE_CONFIG_NAME, configPaths } from './config-paths-node.js';

export { STORE_CONFIG_NAME, configPaths };

/** @param {import('./settings.js').Setting} s */
function fieldSchema(s) {
  if (s.values) return z.enum(/** @type {[string, ...string[]]} */ (s.values));
  return s.type === 'int' ? z.number().int().min(s.min ?? 1) : z.string().min(1);
}

/** The zod schema of a config file: sections of settings, every key optional, unknown keys refused. */
export const CONFIG_SCHEMA = (() => {
  /** @type {Record<string, Record<string, z.ZodTypeAny>>} */
  const sections = {};
  for (const s of SETTINGS) {
    const [sec, name] = s.key.split('.');
    (sections[sec] ??= {})[name] = fieldSchema(s).optional();
  }
  const shape = Object.fromEntries(Object.entries(sections).map(([k, v]) => [k, z.object(v).strict().optional()]));
  return z.object({ $schema: z.string().optional(), ...shape }).strict();
})();

/**
 * Checks a parsed config file (`where` names it in errors) and flattens it to {"section.name": value}.
 * @param {unknown} json
 * @param {string} where
 * @returns {Record<string, string | number>}
 */
export function parseConfig(json, where) {
  const r = CONFIG_SCHEMA.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    if (issue.code === 'unrecognized_keys') {
      const key = [...issue.path, issue.keys[0]].join('.');
      const allowed = issue.path.length
        ? SETTINGS.filter((s) => s.key.startsWith(`${issue.path[0]}.`)).map((s) => s.key)
        : [...new Set(SETTINGS.map((s) => s.key.split('.')[0]))];
      throw new MemloomError(`${where}: unknown key "${key}"; the keys there are ${allowed.join(', ')} (see memloom config --help)`);
    }
    const path = issue.path.join('.') || '(the file)';
    throw new MemloomError(`${where}: "${path}": ${issue.message}; fix or remove it (see memloom config --help)`);
  }
  /** @type {Record<string, string | number>} */
  const flat = {};
  for (const [sec, obj] of Object.entries(r.data)) {
    if (sec === '$schema' || !obj || typeof obj !== 'object') continue;
    for (const [name, value] of Object.entries(obj)) if (value !== undefined) flat[`${sec}.${name}`] = value;
  }
  return flat;
}

/**
 * Reads and checks one config file; a missing file is no settings.
 * @param {string} path
 */
export function readConfigFile(path) {
  if (!existsSync(path)) return {};
  let json;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new MemloomError(`${path}: not valid JSON (${/** @type {Error} */ (e).message}); fix it or remove the file`);
  }
  return parseConfig(json, path);
}

/**
 * The effective settings of a run: `flags` ({"embedder.name": ...} from the command line) >
 * `env` > the store config > the user config > defaults; `sources` says where each came from.
 * @param {{ flags?: Record<string, string | number>, env?: Record<string, string | undefined>, dir?: string, cwd?: string }} o
 */
export function loadSettings({ flags = {}, env = process.env, dir, cwd } = {}) {
  const paths = configPaths({ dir, env, cwd });
  const resolved = resolveSettings([
    { name: 'flag', values: flags },
    { name: 'env', values: settingsFromEnv(env) },
    { name: paths.store, values: readConfigFile(paths.store) },
    { name: paths.user, values: readConfigFile(paths.user) },
  ]);
  return { ...resolved, paths, apiKeyFallback: env.OPENAI_API_KEY };
}
