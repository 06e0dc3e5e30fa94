/**
 * Which positional is DIR and which are rollout ids (with $TOKCAP_DIR as DIR's fallback): one
 * rule, used by the program before a command runs and by shell completion while typing.
 */
import { statSync } from 'node:fs';
import { TokcapError } from '../../src/errors.js';
import { isValidRolloutId } from '../../src/layout/rollout-id.js';
import { COMMANDS, type CommandName, type CommandSpec } from './options.js';

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export interface DirAndIds {
  dir: string;
  ids: string[];
}

/**
 * Splits positionals into DIR and ids; `envDir` is $TOKCAP_DIR (./settings.ts).
 * - Without $TOKCAP_DIR: the first positional is DIR, the rest are ids.
 * - With $TOKCAP_DIR and the first positional not a valid rollout id (e.g. contains `/`): it is DIR.
 * - With $TOKCAP_DIR and the first positional a valid id that is not an existing directory: all
 *   positionals are ids, DIR is $TOKCAP_DIR.
 * - With $TOKCAP_DIR and the first positional both a valid id and an existing directory (`.`,
 *   `runs`): read-only commands take it as DIR; store-changing ones refuse to guess (usage error:
 *   write `./runs` for the directory, or give DIR explicitly).
 */
export function resolveDirAndIds(
  name: CommandName,
  positionals: readonly string[],
  envDir: string | undefined,
  mutates: boolean,
  isDir: (path: string) => boolean = isDirectory,
): DirAndIds {
  const spec = COMMANDS[name] as CommandSpec<CommandName>;
  const takesDir = spec.args[0]?.name === 'DIR';
  const takesIds = spec.args.some((a) => a.name === 'ID');
  if (!takesDir) return { dir: '', ids: [] };
  const hint = `see 'tokcap ${name} --help'`;
  if (positionals.length === 0) {
    if (envDir === undefined) {
      throw new TokcapError('usage', `no capture directory: give DIR or set TOKCAP_DIR; ${hint}`);
    }
    return { dir: envDir, ids: [] };
  }
  const [first, ...rest] = positionals;
  if (!takesIds || envDir === undefined || !isValidRolloutId(first)) return { dir: first, ids: rest };
  if (!isDir(first)) return { dir: envDir, ids: [...positionals] };
  if (mutates) {
    throw new TokcapError(
      'usage',
      `'${first}' is both a directory and a rollout id and TOKCAP_DIR is set: write './${first}' for the directory, or give DIR before the ids; ${hint}`,
    );
  }
  return { dir: first, ids: rest };
}
