// Shell completion scripts (bash, zsh, fish) generated from the command specs, so a new command
// or flag completes without touching this file.
import { COMMANDS } from './commands/index.js';
import { GLOBAL_OPTIONS } from './spec.js';

/**
 * @typedef {import('./spec.js').OptionSpec} OptionSpec
 * @typedef {{ long: string, short?: string, value: boolean, description: string, choices?: string[], complete?: 'file' | 'dir' }} Flag
 */

/** @param {OptionSpec} o @returns {Flag} */
function flag(o) {
  const long = /--[a-z0-9-]+/.exec(o.flags)?.[0] ?? o.flags;
  const short = /(^|\s)(-[a-zA-Z])\b/.exec(o.flags)?.[2];
  return { long, short, value: /[<[]/.test(o.flags), description: o.description, choices: o.choices, complete: o.complete };
}

/** Every command with its flags (its own, the global ones, --help) and positional arguments. */
export function completionModel() {
  const globals = [...GLOBAL_OPTIONS.map(flag), { long: '--help', short: '-h', value: false, description: 'show help' }];
  return COMMANDS.map((c) => ({
    name: c.name,
    summary: c.summary,
    flags: [...(c.options ?? []).map(flag), ...globals],
    /** what the positional arguments complete to */
    args: c.name === 'completion' ? { choices: SHELLS } : c.args?.length ? { files: true } : null,
  }));
}

export const SHELLS = ['bash', 'zsh', 'fish'];

/** @param {string} s */
const sq = (s) => `'${s.replaceAll("'", `'\\''`)}'`;

export function bashScript() {
  const model = completionModel();
  const valueFlags = new Map();
  for (const c of model) for (const f of c.flags) if (f.value) valueFlags.set(f.long, f);
  const cases = [...valueFlags.values()].map((f) => {
    const reply = f.choices ? `$(compgen -W ${sq(f.choices.join(' '))} -- "$cur")` : f.complete === 'dir' ? '$(compgen -d -- "$cur")' : f.complete === 'file' ? '$(compgen -f -- "$cur")' : '';
    return `    ${f.long}) COMPREPLY=( ${reply} ); return 0 ;;`;
  });
  const perCommand = model.map((c) => {
    const words = c.flags.map((f) => f.long).join(' ');
    const args = c.args?.choices ? c.args.choices.join(' ') : '';
    return `    ${c.name}) opts=${sq(words)}; args=${sq(args)}; files=${c.args?.files ? 1 : 0} ;;`;
  });
  return `# memloom completion for bash: eval "$(memloom completion bash)" (e.g. in ~/.bashrc)
_memloom() {
  local cur prev cmd="" opts="" args="" files=0 i=1 w
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local vflags=${sq(` ${[...valueFlags.keys()].join(' ')} `)}
  while [ "$i" -lt "$COMP_CWORD" ]; do
    w="\${COMP_WORDS[i]}"
    case "$vflags" in *" $w "*) i=$((i + 2)); continue ;; esac
    case "$w" in -*) ;; *) cmd="$w"; break ;; esac
    i=$((i + 1))
  done
  case "$prev" in
${cases.join('\n')}
  esac
  if [ -z "$cmd" ]; then
    if [[ "$cur" == -* ]]; then
      COMPREPLY=( $(compgen -W ${sq([...GLOBAL_OPTIONS.map((o) => flag(o).long), '--help', '--version'].join(' '))} -- "$cur") )
    else
      COMPREPLY=( $(compgen -W ${sq([...model.map((c) => c.name), 'help'].join(' '))} -- "$cur") )
    fi
    return 0
  fi
  case "$cmd" in
${perCommand.join('\n')}
    help) args=${sq(model.map((c) => c.name).join(' '))} ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  elif [ -n "$args" ]; then
    COMPREPLY=( $(compgen -W "$args" -- "$cur") )
  elif [ "$files" = 1 ]; then
    COMPREPLY=( $(compgen -f -- "$cur") )
  fi
  return 0
}
complete -o default -F _memloom memloom
`;
}

/** @param {string} s  text inside a zsh _arguments/_describe spec */
const zq = (s) => s.replaceAll("'", `'\\''`).replaceAll('[', '(').replaceAll(']', ')').replaceAll(':', '\\:');

/** @param {Flag} f */
function zshFlag(f) {
  const action = !f.value ? '' : f.choices ? `:value:(${f.choices.join(' ')})` : f.complete === 'dir' ? ':directory:_files -/' : f.complete === 'file' ? ':file:_files' : ':value: ';
  const names = f.short ? `'(${f.short} ${f.long})'{${f.short},${f.long}}` : `'${f.long}`;
  const desc = `[${zq(f.description)}]${action}`;
  return f.short ? `${names}'${desc}'` : `${names}${desc}'`;
}

export function zshScript() {
  const model = completionModel();
  const globals = [...GLOBAL_OPTIONS.map(flag), { long: '--version', short: '-V', value: false, description: 'print the version' }];
  const cases = model.map((c) => {
    const pos = c.args?.choices ? `'*:shell:(${c.args.choices.join(' ')})'` : c.args?.files ? `'*:file:_files'` : '';
    return `    ${c.name}) _arguments -s ${[...c.flags.map(zshFlag), pos].filter(Boolean).join(' ')} ;;`;
  });
  return `#compdef memloom
# memloom completion for zsh: source <(memloom completion zsh) in ~/.zshrc (after compinit),
# or save it as _memloom in a directory of $fpath.
_memloom() {
  local curcontext="$curcontext" state line ret=1
  local -a commands
  commands=(
${model.map((c) => `    '${c.name}:${zq(c.summary)}'`).join('\n')}
    'help:show help of a command'
  )
  _arguments -C -s ${globals.map(zshFlag).join(' ')} '(-h --help)'{-h,--help}'[show help]' '1: :->command' '*:: :->args' && ret=0
  case $state in
    command) _describe -t commands 'memloom command' commands && ret=0 ;;
    args)
      case $words[1] in
${cases.map((l) => '    ' + l).join('\n')}
        help) _describe -t commands 'memloom command' commands ;;
      esac
      ret=0 ;;
  esac
  return ret
}
if [ "$funcstack[1]" = "_memloom" ]; then
  _memloom "$@"
else
  (( $+functions[compdef] )) || { autoload -Uz compinit && compinit -u; }
  compdef _memloom memloom
fi
`;
}

/** @param {string} s */
const fq = (s) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

export function fishScript() {
  const model = completionModel();
  const lines = ['# memloom completion for fish: memloom completion fish > ~/.config/fish/completions/memloom.fish', 'complete -c memloom -f'];
  for (const c of model) lines.push(`complete -c memloom -n __fish_use_subcommand -a ${c.name} -d ${fq(c.summary)}`);
  lines.push(`complete -c memloom -n __fish_use_subcommand -a help -d 'show help of a command'`);
  for (const c of model) {
    const cond = `'__fish_seen_subcommand_from ${c.name}'`;
    for (const f of c.flags) {
      const parts = [`complete -c memloom -n ${cond} -l ${f.long.slice(2)}`];
      if (f.short) parts.push(`-s ${f.short.slice(1)}`);
      if (f.value) parts.push('-r');
      if (f.choices) parts.push(`-a ${fq(f.choices.join(' '))}`);
      else if (f.value && f.complete === 'dir') parts.push(`-a '(__fish_complete_directories)'`);
      else if (f.value && f.complete === 'file') parts.push('-F');
      parts.push(`-d ${fq(f.description)}`);
      lines.push(parts.join(' '));
    }
    if (c.args?.choices) lines.push(`complete -c memloom -n ${cond} -a ${fq(c.args.choices.join(' '))}`);
    else if (c.args?.files) lines.push(`complete -c memloom -n ${cond} -F`);
  }
  lines.push(`complete -c memloom -n '__fish_seen_subcommand_from help' -a ${fq(model.map((c) => c.name).join(' '))}`);
  return lines.join('\n') + '\n';
}

/** @type {Record<string, () => string>} */
export const SCRIPTS = { bash: bashScript, zsh: zshScript, fish: fishScript };
