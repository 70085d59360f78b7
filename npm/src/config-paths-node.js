// Where a run's config files are (Node), without reading them: zod-free, so that the CLI's warm
// path (cli/warm.js) can find the daemon setting before loading anything heavy. config-node.js
// reads and checks the files.
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** The file name of a store's config. */
export const STORE_CONFIG_NAME = 'memloom.config.json';

/**
 * Where the config files of a run are.
 * @param {{ dir?: string, env?: Record<string, string | undefined>, cwd?: string }} o  dir: the embedded store's directory (absolute)
 */
export function configPaths({ dir, env = process.env, cwd = process.cwd() } = {}) {
  const base = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return { store: join(dir ? dirname(dir) : cwd, STORE_CONFIG_NAME), user: join(base, 'memloom', 'config.json') };
}
