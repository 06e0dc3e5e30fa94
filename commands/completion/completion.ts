/**
 * tokcap completion bash|zsh|fish: prints a small script that hands the words typed so far to
 * `tokcap __complete` (commands/completion/complete.ts) and shows its answer, so every shell completes
 * the same things from the option table and the directory scan: commands, options, value lists,
 * files, directories for DIR and the rollout ids of DIR.
 */
import { SHELLS, type Shell } from '../cli/options.js';
import type { CommandContext } from '../cli/context.js';
import { usageError } from '../cli/errors.js';

const BASH = `# bash completion for tokcap (printed by \`tokcap completion bash\`)
# The candidates come from \`tokcap __complete WORD...\`: one a line, then :files, :dirs or :none.
_tokcap() {
  local cur=\${COMP_WORDS[COMP_CWORD]} line directive
  local -a out
  mapfile -t out < <("\${COMP_WORDS[0]}" __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  COMPREPLY=()
  ((\${#out[@]})) || return 0
  directive=\${out[-1]#:}
  unset 'out[-1]'
  for line in "\${out[@]}"; do COMPREPLY+=("\${line%%$'\\t'*}"); done
  [[ $cur == = ]] && cur=
  case $directive in
    files) compopt -o filenames 2>/dev/null; mapfile -t -O \${#COMPREPLY[@]} COMPREPLY < <(compgen -f -- "$cur") ;;
    dirs) compopt -o filenames 2>/dev/null; mapfile -t -O \${#COMPREPLY[@]} COMPREPLY < <(compgen -d -- "$cur") ;;
  esac
  return 0
}
complete -F _tokcap tokcap
`;

const ZSH = `#compdef tokcap
# zsh completion for tokcap (printed by \`tokcap completion zsh\`)
# The candidates come from \`tokcap __complete WORD...\`: one a line, then :files, :dirs or :none.
_tokcap() {
  local -a out described plain
  local line directive
  out=("\${(@f)$("\${words[1]}" __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  directive=\${out[-1]#:}
  out[-1]=()
  for line in "\${out[@]}"; do
    if [[ $line == *$'\\t'* ]]; then
      described+=("\${\${line%%$'\\t'*}//:/\\\\:}:\${line#*$'\\t'}")
    elif [[ -n $line ]]; then
      plain+=("$line")
    fi
  done
  (( $#described )) && _describe -t values 'tokcap' described
  (( $#plain )) && compadd -a plain
  case $directive in
    files) _files ;;
    dirs) _files -/ ;;
  esac
  return 0
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _tokcap "$@"
else
  compdef _tokcap tokcap
fi
`;

const FISH = `# fish completion for tokcap (printed by \`tokcap completion fish\`)
# The candidates come from \`tokcap __complete WORD...\`: one a line, then :files, :dirs or :none.
function __tokcap_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l out ($words[1] __complete $words[2..-1] "$cur" 2>/dev/null)
    test (count $out) -gt 0; or return 0
    set -l directive (string replace ':' '' -- $out[-1])
    set -e out[-1]
    printf '%s\\n' $out
    switch $directive
        case files
            __fish_complete_path "$cur"
        case dirs
            __fish_complete_directories "$cur"
    end
end
complete -c tokcap -f -a '(__tokcap_complete)'
`;

export function completionScript(shell: Shell): string {
  switch (shell) {
    case 'bash':
      return BASH;
    case 'zsh':
      return ZSH;
    case 'fish':
      return FISH;
  }
}

export async function run(ctx: CommandContext<'completion'>): Promise<void> {
  const shell = ctx.positionals[0];
  if (!(SHELLS as readonly string[]).includes(shell))
    throw usageError(`completion: unknown shell '${shell}' (bash, zsh or fish)`);
  const script = completionScript(shell as Shell);
  if (ctx.options.json) ctx.json({ shell, script });
  // The script is what was asked for (like export's --out -): written even with --quiet.
  else await ctx.stdoutStream().write(Buffer.from(script.endsWith('\n') ? script : `${script}\n`));
}
