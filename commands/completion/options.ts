/**
 * `tokcap completion` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { SHELLS, type CommandSpec } from '../cli/option-types.js';

export const COMPLETION_COMMAND: CommandSpec<'completion'> = {
  name: 'completion',
  summary: 'Print a shell completion script',
  description: [
    'Prints a completion script for bash, zsh or fish. The script is a few lines that pass the words typed so far to `tokcap __complete`, which answers from the same option table as this help: commands, their options, the values of `--status`, `--sort` and `--format`, files for `--out` and `--ids-from`, directories for DIR and the rollout ids found in DIR (or in $TOKCAP_DIR). It calls the `tokcap` being completed, so a new version completes its own options without installing the script again.',
  ].join('\n\n'),
  args: [
    {
      name: 'SHELL',
      description: 'the shell to complete for',
      required: true,
      variadic: false,
      choices: SHELLS,
      complete: 'none',
    },
  ],
  options: {},
  examples: [
    {
      command: 'tokcap completion bash > ~/.local/share/bash-completion/completions/tokcap',
      description: 'Install for bash.',
    },
    {
      command: 'tokcap completion zsh > "${fpath[1]}/_tokcap"',
      description: 'Install for zsh (any directory on $fpath).',
    },
    { command: 'tokcap completion fish > ~/.config/fish/completions/tokcap.fish', description: 'Install for fish.' },
  ],
  idValidation: 'none',
  mutates: () => false,
};
