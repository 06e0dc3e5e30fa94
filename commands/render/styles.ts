/**
 * One set of semantic styles for human output. Commands never pick colours themselves: they say
 * `styles.warn(text)` or `styles.badge('frozen')`.
 *
 * Colour is off (level 0: no escape codes at all) when NO_COLOR is set to a non-empty value,
 * when --no-color is given, or when stdout is not a TTY. chalk 5 itself ignores NO_COLOR, so the
 * level is decided here and passed to a private `new Chalk({ level })`; the global chalk
 * instance is never used. With colour off chalk is not even loaded (its colour detection costs
 * ~10 ms of start-up, paid by every cron job and pipe otherwise): it is loaded only when colour
 * may be on, by `import()` before the command runs (`preloadChalk`). Not by `require()`: `watch`
 * imports Ink, which imports chalk, at the same time, and require() of an ES module that an import
 * has begun but not finished throws ("not yet fully loaded"), where import() waits for it.
 */
import { createRequire } from 'node:module';
import type * as ChalkModule from 'chalk';
import { terminalSafe } from '../../src/text/terminal-safe.js';
import type { ColorWhen } from '../cli/options.js';

let chalkModule: typeof ChalkModule | undefined;

/**
 * chalk, once `preloadChalk` has loaded it; required synchronously only by a caller that did not
 * preload (a test, a library user), where no other import of chalk can be under way.
 */
function loadChalk(): typeof ChalkModule {
  return (chalkModule ??= createRequire(import.meta.url)('chalk') as typeof ChalkModule);
}

/** Loads chalk when these inputs may give colour; a no-op when they give none or it is loaded. */
export async function preloadChalk(inputs: ColorInputs): Promise<void> {
  if (chalkModule === undefined && decidedLevel(inputs) !== 0) chalkModule = await import('chalk');
}

export type ColorLevel = 0 | 1 | 2 | 3;

import { CONDITIONS, ROLLOUT_STATUSES, type Condition, type RolloutStatus } from '../../src/status/rollout-status.js';
import { VERDICTS, type Verdict } from '../../src/status/verdict.js';

/** Every word a badge shows: statuses, conditions and verdicts (src/status). */
export const ROLLOUT_STATES = [...new Set<string>([...ROLLOUT_STATUSES, ...CONDITIONS, ...VERDICTS])] as (
  RolloutStatus | Condition | Verdict
)[];
export type BadgeWord = RolloutStatus | Condition | Verdict;

export interface ColorInputs {
  /** --color (--no-color is --color=never). */
  color: ColorWhen;
  env: NodeJS.ProcessEnv;
  stdoutIsTTY: boolean;
  /** Level the terminal supports when colour is on; default: chalk's detection, at least 1. */
  supportedLevel?: ColorLevel;
}

/** FORCE_COLOR as the usual convention reads it: unset/empty/0/false = not forced; 1-3 = that level. */
function forcedLevel(env: NodeJS.ProcessEnv): ColorLevel | undefined {
  const v = env.FORCE_COLOR;
  if (v === undefined || v === '' || v === '0' || v.toLowerCase() === 'false') return undefined;
  return v === '2' ? 2 : v === '3' ? 3 : 1;
}

/** The level when the terminal's own support does not matter, else 'detect'. */
function decidedLevel({ color, env, stdoutIsTTY }: ColorInputs): ColorLevel | 'detect' {
  if (color === 'never') return 0;
  if (color === 'auto') {
    if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
    const forced = forcedLevel(env);
    if (forced !== undefined) return forced;
    if (!stdoutIsTTY) return 0;
  } else if (!stdoutIsTTY) {
    return forcedLevel(env) ?? 1;
  }
  return 'detect';
}

/**
 * never: no colour. always: colour even into a pipe (`less -R`). auto: no colour when NO_COLOR is
 * set (non-empty); colour when FORCE_COLOR is set (non-empty, not 0/false), even into a pipe;
 * otherwise colour only when stdout is a terminal.
 */
export function colorLevel(inputs: ColorInputs): ColorLevel {
  const decided = decidedLevel(inputs);
  if (decided !== 'detect') return decided;
  if (inputs.supportedLevel !== undefined) return inputs.supportedLevel;
  const { supportsColor } = loadChalk();
  const detected = supportsColor === false ? 0 : supportsColor.level;
  return (detected > 0 ? detected : 1) as ColorLevel;
}

type Style = (text: string) => string;

export interface Styles {
  readonly level: ColorLevel;
  ok: Style;
  warn: Style;
  error: Style;
  dim: Style;
  heading: Style;
  /** A rollout id (store text: control characters are shown escaped). */
  id: Style;
  /** A file or directory path (store text: control characters are shown escaped). */
  path: Style;
  /** Emphasis of a whole line (a row that just changed). */
  bold: Style;
  /** A selected row. */
  inverse: Style;
  /** The state word of a rollout, coloured by state; the text itself is always the state name. */
  badge: (state: BadgeWord) => string;
  /** A generated token's shade by its log-prob band (src/call-text: 0 likely … 3 unlikely). */
  logProb: readonly [Style, Style, Style, Style];
  /** Where two token sequences part. */
  mark: Style;
}

const plain: Style = (text) => text;

// Exactly what chalk emits for a colour or attribute (select graphic rendition): nothing else.
// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;

/**
 * The last line of defence before text reaches stdout or stderr: every control character is shown
 * escaped (src/text/terminal-safe.ts), except the line breaks of text composed by tokcap
 * (`keepNewlines`) and, when colour is on, the colour sequences our styles produce. With colour
 * off no escape sequence is legitimate, so none passes. Idempotent.
 */
export function safeOutput(text: string, level: ColorLevel, keepNewlines = true): string {
  if (level === 0 || !text.includes('\x1b')) return terminalSafe(text, { keepNewlines });
  let out = '';
  let last = 0;
  for (const m of text.matchAll(SGR)) {
    out += terminalSafe(text.slice(last, m.index), { keepNewlines }) + m[0];
    last = m.index + m[0].length;
  }
  return out + terminalSafe(text.slice(last), { keepNewlines });
}

export function createStyles(level: ColorLevel): Styles {
  if (level === 0) {
    const safe: Style = (text) => terminalSafe(text);
    return {
      level,
      ok: plain,
      warn: plain,
      error: plain,
      dim: plain,
      heading: plain,
      id: safe,
      path: safe,
      bold: plain,
      inverse: plain,
      badge: (state) => state,
      logProb: [plain, plain, plain, plain],
      mark: plain,
    };
  }
  const c = new (loadChalk().Chalk)({ level });
  const badges: { [S in BadgeWord]: Style } = {
    live: c.green,
    frozen: c.cyan,
    retired: c.gray,
    unavailable: c.red,
    corrupt: c.red,
    dangling: c.yellow,
    incomplete: c.yellow,
    missing_state: c.yellow,
    refused: c.yellow,
    retired_with_records: c.yellow,
    torn_tail: c.red,
    unindexed_tail: c.dim,
    trainable: c.green,
    masked: c.magenta,
  };
  return {
    level,
    ok: c.green,
    warn: c.yellow,
    error: c.red,
    dim: c.dim,
    heading: c.bold,
    id: (text) => c.bold(terminalSafe(text)),
    path: (text) => c.underline(terminalSafe(text)),
    bold: c.bold,
    inverse: c.inverse,
    badge: (state) => badges[state](state),
    logProb: [plain, c.yellow, c.hex('#ff8700'), c.red.bold],
    mark: c.inverse,
  };
}
