/**
 * Small pieces several command modules share: the checks of DIR that read-only commands make,
 * and human formatting of ages and sizes.
 */
import { opendir } from 'node:fs/promises';
import { ioError, noCaptureFilesError, noRolloutsSelectedError } from '../../src/errors.js';
import { hasCaptureFiles } from '../../src/layout/scan-directory.js';
import { terminalSafe } from '../../src/text/terminal-safe.js';
import type { CommandContext } from './context.js';
import type { CommandName } from './options.js';

/**
 * The `shard` member of a sharded run's --json report (docs/cli.md#sharded-runs): which shard it
 * covers and how many rollouts its selection held, so that `tokcap merge` can tell a missing,
 * repeated or foreign report. Empty without --shard.
 */
export function shardMember(
  ctx: CommandContext<CommandName>,
  selected: number,
): { shard?: { index: number; count: number; selected: number } } {
  return ctx.shard === undefined ? {} : { shard: { index: ctx.shard.index, count: ctx.shard.count, selected } };
}

/**
 * Fails (exit 3, naming DIR) unless DIR can be listed: for read-only commands given ids, which
 * would otherwise read a missing DIR as rollouts without files and report success.
 */
export async function assertListableDir(dir: string): Promise<void> {
  try {
    await (await opendir(dir)).close();
  } catch (e) {
    throw ioError(e, dir);
  }
}

/**
 * A read-only command over a DIR without any capture file fails (exit 3, `tokcap: DIR: no capture
 * files`; docs/cli.md#unavailable): it is almost always a mistyped or emptied DIR, and "0 rollouts verified"
 * would pass a CI gate. `--allow-empty` makes an empty DIR an answer.
 */
export function requireCaptureFiles(
  ctx: CommandContext<'inspect' | 'build' | 'verify-digests' | 'export' | 'watch'>,
): void {
  // Even with --allow-empty a DIR that cannot be listed fails here, so the line names what is
  // wrong with it (commands/cli/errors.ts) the same way for every command.
  const found = hasCaptureFiles(ctx.dir);
  if (!found && !ctx.options.allowEmpty) throw noCaptureFilesError({ file: ctx.dir });
}

/**
 * A selection without any rollout (no ids after --ids-from, a shard with nothing in it) fails
 * (exit 3, `tokcap: DIR: no rollouts selected`; docs/cli.md#unavailable) unless --allow-empty:
 * "0 rollouts verified" must not pass a CI gate.
 */
export function requireSelection(
  ctx: CommandContext<'inspect' | 'build' | 'verify-digests' | 'export'>,
  selected: number,
): void {
  if (selected === 0 && !ctx.options.allowEmpty) throw noRolloutsSelectedError({ file: ctx.dir });
}

/**
 * An age, compact: `42s`, `7m`, `5h` (hours up to two days, so `27h` rather than `1d`), `3d`;
 * `-` when unknown. The one age format of text output and the watch view.
 */
export function formatAge(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-';
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** The age of a modification time (ms since the epoch) at `now`; `-` when unknown (0). */
export function formatAgeSince(now: number, mtimeMs: number): string {
  return mtimeMs ? formatAge(Math.max(0, now - mtimeMs) / 1000) : '-';
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** `s` as one word a POSIX shell reads back as `s` (quoted only when it needs to be), for hints. */
export function shellWord(s: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(s)) return s;
  return terminalSafe(`'${s.replace(/'/g, `'\\''`)}'`);
}

/** Shows an id (call ids are any string), making the empty one visible and controls escaped. */
export function showId(id: string): string {
  return id === '' ? '""' : terminalSafe(id);
}
