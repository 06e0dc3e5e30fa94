/**
 * `tokcap report` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { DIR_ARG, IDS_ARG, tokenizer } from '../cli/common-options.js';
import { parseNonEmpty, type CommandSpec } from '../cli/option-types.js';

export const REPORT_COMMAND: CommandSpec<'report'> = {
  name: 'report',
  summary: 'Write one rollout as a self-contained HTML page to attach to a bug',
  description: [
    "Writes one HTML file (no network, no external assets, inline CSS) with the rollout's chain tree, its verdict and mask causes, the first divergence of each broken boundary with both windows highlighted, and every placed call's text: the prompt it adds to its parent's tokens and its generation shaded by log-probability, each token's id on hover. Long stretches are folded with counts.",
    "Text needs a tokenizer the user has (`--tokenizer`, $TOKCAP_TOKENIZER, or the records' model in the local Hugging Face cache); without one the ids are the text. Read-only on the store; `--out` must not be inside DIR and is replaced atomically.",
  ].join('\n\n'),
  args: [DIR_ARG, { ...IDS_ARG, name: 'ID', description: 'the rollout to report', required: true, variadic: false }],
  options: {
    out: {
      flags: '--out <file>',
      description: 'the HTML file to write (FILE.html; replaced if it exists)',
      required: true,
      complete: 'file',
      parse: parseNonEmpty,
    },
    tokenizer,
  },
  examples: [
    {
      command: 'tokcap report /data/captures r-0007 --out r-0007.html',
      description: 'A page to attach to a bug report, decoded with the model found in the local Hugging Face cache.',
    },
    {
      command: 'tokcap report /data/captures r-0007 --out r-0007.html --tokenizer ~/models/Qwen3-8B',
      description: 'Decoded with a tokenizer the user names.',
    },
  ],
  idValidation: 'batch',
  mutates: () => false,
};
