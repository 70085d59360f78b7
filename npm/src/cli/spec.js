// The declarative shape of a command: adding a command is one module in commands/ exporting a
// CommandSpec and its line in commands/index.js; adding a flag is one entry in its `options`.
// main.js turns specs into commander commands (help, examples, did-you-mean); completion.js
// turns the same specs into shell completion scripts.
import { OFFLINE_EMBEDDERS } from '../../schema/embedders.js';
import { OFFLINE_EMBEDDERS_TEXT } from '../settings.js';

/**
 * @typedef {object} OptionSpec
 * @property {string} flags        commander syntax: "--limit <n>", "--all", "-k, --key <key>"
 * @property {string} description
 * @property {(value: string) => any} [parse]  checks and converts the value (throw UsageError)
 * @property {string[]} [choices]  the values it takes (help and completion list them)
 * @property {'file' | 'dir'} [complete]  what a shell completes for the value (default: nothing)
 */

/**
 * @typedef {object} ArgSpec
 * @property {string} name  "paths..." (one or more), "text?" (optional), "key" (required)
 * @property {string} description
 */

/**
 * @typedef {object} CommandSpec
 * @property {string} name
 * @property {string} summary       one line, in `memloom --help`
 * @property {string} description   the paragraph of `memloom <name> --help`
 * @property {string} [details]     preformatted text shown before the examples (tables)
 * @property {ArgSpec[]} [args]
 * @property {OptionSpec[]} [options]
 * @property {[string, string][]} examples  [command line, what it does]
 * @property {string} [json]        the shape --json prints (every command has one, or noJson)
 * @property {string} [noJson]      why --json does not apply
 * @property {boolean} [noStore]    runs without a store (no store options in its help)
 * @property {(ctx: import('./context.js').Context, args: any[], opts: Record<string, any>) => Promise<number>} run
 */

/** Options every store command takes (before or after the command name). @type {OptionSpec[]} */
export const GLOBAL_OPTIONS = [
  { flags: '--store <dir>', description: 'embedded store directory (default ./.memloom)', complete: 'dir' },
  { flags: '--database-url <url>', description: 'a PostgreSQL server with pgvector instead (or DATABASE_URL)' },
  { flags: '--namespace <ns>', description: 'the namespace to read and write (default "default")' },
  { flags: '--embedder <name>', description: `an offline embedder: ${OFFLINE_EMBEDDERS_TEXT} (or MEMLOOM_EMBEDDER, embedder.name)`, choices: OFFLINE_EMBEDDERS },
  { flags: '--json', description: 'print the result as JSON on stdout (shape: see the command\'s help)' },
  { flags: '-q, --quiet', description: 'no progress and no summary on stderr (warnings and errors still print)' },
];
