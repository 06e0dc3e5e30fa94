/**
 * DIR of a command line, when it is plain to see without the option table: for work a command
 * starts before its command line is parsed (./watch/early.ts, ./early-job.ts). At most one
 * positional (none: the non-empty $TOKCAP_DIR), and no option but those `plain` accepts (options
 * in one word that take no separate value and change nothing of that work). Otherwise undefined:
 * nothing is started early, and the command does its work when it runs.
 */
export function plainDir(args: readonly string[], env: NodeJS.ProcessEnv, plain: RegExp): string | undefined {
  const positionals: string[] = [];
  for (const a of args) {
    if (a.startsWith('-') && a !== '-') {
      if (!plain.test(a)) return undefined;
    } else positionals.push(a);
  }
  const dir = positionals.length === 1 ? positionals[0] : positionals.length === 0 ? env.TOKCAP_DIR : undefined;
  return dir === '' ? undefined : dir;
}
