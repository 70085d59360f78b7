// The memloom CLI: commander commands built from the CommandSpecs in commands/ (spec.js). Data
// goes to stdout, progress and diagnostics to stderr; exit 0 on success, 2 on any error, with a
// message that says what to do.
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { MemloomError, isTransient, WRITE_ATTEMPTS } from '../errors.js';
import { COMMANDS } from './commands/index.js';
import { Context } from './context.js';
import { err, out, writeErr, writeOut } from './output.js';
import { GLOBAL_OPTIONS } from './spec.js';

export const VERSION = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

const FOOTER = `
Configuration (embedder, extractor, progress): flags > MEMLOOM_* environment variables >
the store's memloom.config.json (beside the store directory) > the user's
$XDG_CONFIG_HOME/memloom/config.json (~/.config/memloom/config.json) > defaults.
\`memloom config\` shows the effective settings and where each came from.
Exit status: 0 on success, 2 on any error (the message says what to do).`;

/** @param {import('./spec.js').OptionSpec} o */
function toOption(o) {
  const opt = new Option(o.flags, o.description);
  if (o.choices) opt.choices(o.choices);
  if (o.parse) opt.argParser(o.parse);
  return opt;
}

/**
 * The commander program of the specs (exported for completion.js and tests).
 * @param {{ onExit?: (code: number) => void, context?: (g: import('./context.js').GlobalOptions) => Context }} [hooks]
 *   onExit receives the exit code of the command run; context makes each command's Context
 *   (the warm process's serves its open store)
 */
export function buildProgram(hooks = {}) {
  const program = new Command('memloom')
    .description('memloom: hybrid recall (vector + keyword + entity arms, fused) over your docs and team memories')
    .usage('<command> [options]')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help (memloom <command> --help: that command\'s)')
    .helpCommand('help [command]', 'show help of a command')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeOut, writeErr, outputError: () => {} });
  for (const o of GLOBAL_OPTIONS) program.addOption(toOption(o));
  program.addHelpText('after', FOOTER);
  for (const spec of COMMANDS) {
    const cmd = program.command(spec.name).summary(spec.summary).description(spec.description);
    cmd.exitOverride().configureOutput({ outputError: () => {} }).showSuggestionAfterError(true);
    for (const a of spec.args ?? []) {
      const variadic = a.name.endsWith('...');
      const optional = a.name.endsWith('?');
      const name = a.name.replace(/[.?]+$/, '');
      cmd.argument(optional ? `[${name}]` : `<${name}${variadic ? '...' : ''}>`, a.description);
    }
    for (const o of spec.options ?? []) cmd.addOption(toOption(o));
    const examples = spec.examples.map(([line, what]) => `  $ ${line}\n      ${what}`).join('\n');
    const json = spec.json ? `\n\n--json prints: ${spec.json}` : spec.noJson ? `\n\nNo --json: ${spec.noJson}` : '';
    cmd.addHelpText('after', `${spec.details ? `\n${spec.details}\n` : ''}\nExamples:\n${examples}${json}`);
    cmd.action((...a) => {
      const command = /** @type {Command} */ (a[a.length - 1]);
      const args = a.slice(0, -2);
      const ctx = hooks.context ? hooks.context(command.optsWithGlobals()) : new Context(command.optsWithGlobals());
      return spec.run(ctx, args, command.opts()).then((code) => hooks.onExit?.(code));
    });
  }
  return program;
}

/**
 * Formats commander's errors as memloom's: what was wrong, the suggestion, where help is.
 * @param {CommanderError} e
 * @param {string[]} argv
 */
function usageMessage(e, argv) {
  const name = COMMANDS.find((c) => argv.includes(c.name))?.name;
  const help = name ? `memloom ${name} --help` : 'memloom --help';
  const [first, ...rest] = e.message.replace(/^error: /, '').split('\n');
  const hint = rest.join(' ').replace(/^\(Did you mean (.*)\?\)$/, 'did you mean $1?');
  if (e.code === 'commander.unknownCommand') {
    const cmd = /'([^']*)'/.exec(first)?.[1] ?? '';
    return `unknown command "${cmd}"${hint ? ` (${hint})` : ''}; commands are ${COMMANDS.map((c) => c.name).join(', ')} (memloom --help)`;
  }
  if (e.code === 'commander.unknownOption') {
    const flag = /'([^']*)'/.exec(first)?.[1] ?? '';
    return `Unknown option '${flag}'${name ? ` for ${name}` : ''}${hint ? ` (${hint})` : ''}; see ${help}`;
  }
  if (e.code === 'commander.excessArguments') {
    const [expected, got] = [...first.matchAll(/\d+/g)].map((m) => Number(m[0]));
    const takes = expected === 0 ? 'takes no arguments' : `takes at most ${expected} argument${expected === 1 ? '' : 's'}`;
    return `${name ?? 'memloom'} ${takes}, not ${got} (quote a text that has spaces); see ${help}`;
  }
  return `${name ? `${name}: ` : ''}${first}${hint ? ` (${hint})` : ''}; see ${help}`;
}

/**
 * Runs the CLI on `argv` (without node and the script); resolves to the exit code.
 * @param {string[]} argv
 * @param {{ context?: (g: import('./context.js').GlobalOptions) => Context, rethrow?: (e: unknown) => boolean }} [hooks]
 *   context: as buildProgram's; rethrow: errors to throw rather than report (the warm process's
 *   "not my store" goes back to the CLI that sent the command)
 * @returns {Promise<number>}
 */
export async function run(argv, hooks = {}) {
  let code = 0;
  const program = buildProgram({ onExit: (c) => (code = c), context: hooks.context });
  if (argv.length === 0) {
    out(program.helpInformation().trimEnd());
    return 2;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (hooks.rethrow?.(e)) throw e;
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return 0;
      err(`memloom: error: ${usageMessage(e, argv)}`);
      return 2;
    }
    if (e instanceof MemloomError) err(`memloom: error: ${e.message}`);
    else if (isTransient(e)) {
      // The store retried the transaction already (db-pg.js): say so in one line, no stack.
      err(`memloom: error: the write collided with other writers ${WRITE_ATTEMPTS} times (${/** @type {any} */ (e).code === '40P01' ? 'deadlock' : 'serialization failure'}); nothing was changed, run the command again`);
    } else err(`memloom: unexpected error: ${/** @type {any} */ (e)?.stack ?? e}\n(please report it with the command you ran)`);
    return 2;
  }
}

/**
 * The bin's entry: runs and sets the exit code.
 * @param {string[]} argv
 * @param {{ oneShot?: boolean }} [o] this process runs one short command and exits (Context)
 */
export function main(argv, { oneShot = false } = {}) {
  return run(argv, oneShot ? { context: (g) => new Context(g, { oneShot }) } : {}).then((code) => {
    process.exitCode = code;
  });
}
