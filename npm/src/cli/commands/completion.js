import { UsageError } from '../args.js';
import { SCRIPTS, SHELLS } from '../completion.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'completion',
  summary: 'print a shell completion script (bash, zsh or fish)',
  description: 'Prints a completion script for commands, flags, flag values and files. Load it from your shell\'s startup file (see the examples).',
  args: [{ name: 'shell', description: SHELLS.join(', ') }],
  examples: [
    ['echo \'eval "$(memloom completion bash)"\' >> ~/.bashrc', 'bash'],
    ['echo \'source <(memloom completion zsh)\' >> ~/.zshrc', 'zsh (after compinit)'],
    ['memloom completion fish > ~/.config/fish/completions/memloom.fish', 'fish'],
  ],
  noJson: 'the script is shell code',
  noStore: true,
  async run(ctx, [shell]) {
    if (ctx.json) throw new UsageError('completion takes no --json: it prints shell code');
    const make = SCRIPTS[shell];
    if (!make) throw new UsageError(`completion takes bash, zsh or fish, not "${shell}"`);
    ctx.out(make().trimEnd());
    return 0;
  },
};
