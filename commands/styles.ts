/**
 * One set of semantic styles for human output. Commands never pick colours themselves: they say
 * `styles.warn(text)` or `styles.badge('frozen')`.
 *
 * Colour is off (chalk level 0: no escape codes at all) when NO_COLOR is set to a non-empty
 * value, when --no-color is given, or when stdout is not a TTY. chalk 5 itself ignores NO_COLOR,
 * so the level is decided here and passed to a private `new Chalk({ level })`; the global chalk
 * instance is never used.
 */
import { Chalk, supportsColor, type ChalkInstance } from 'chalk';

export type ColorLevel = 0 | 1 | 2 | 3;

export const ROLLOUT_STATES = ['live', 'frozen', 'retired', 'incomplete', 'dangling', 'torn', 'masked'] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];

export interface ColorInputs {
  /** false when --no-color was given. */
  color: boolean;
  env: NodeJS.ProcessEnv;
  stdoutIsTTY: boolean;
  /** Level the terminal supports when colour is on; default: chalk's detection, at least 1. */
  supportedLevel?: ColorLevel;
}

export function colorLevel({ color, env, stdoutIsTTY, supportedLevel }: ColorInputs): ColorLevel {
  if (!color) return 0;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  if (!stdoutIsTTY) return 0;
  if (supportedLevel !== undefined) return supportedLevel;
  const detected = supportsColor === false ? 0 : supportsColor.level;
  return (detected > 0 ? detected : 1) as ColorLevel;
}

type Style = (text: string) => string;

export interface Styles {
  readonly level: ColorLevel;
  /** The underlying chalk instance (same level), for the rare case the names below don't fit. */
  readonly chalk: ChalkInstance;
  ok: Style;
  warn: Style;
  error: Style;
  dim: Style;
  heading: Style;
  /** A rollout id. */
  id: Style;
  /** A file or directory path. */
  path: Style;
  /** The state word of a rollout, coloured by state; the text itself is always the state name. */
  badge: (state: RolloutState) => string;
}

export function createStyles(level: ColorLevel): Styles {
  const c = new Chalk({ level });
  const badges: { [S in RolloutState]: Style } = {
    live: c.green,
    frozen: c.cyan,
    retired: c.gray,
    incomplete: c.yellow,
    dangling: c.yellow,
    torn: c.red,
    masked: c.magenta,
  };
  return {
    level,
    chalk: c,
    ok: c.green,
    warn: c.yellow,
    error: c.red,
    dim: c.dim,
    heading: c.bold,
    id: c.bold,
    path: c.underline,
    badge: (state) => badges[state](state),
  };
}
