/**
 * The summary counts (src/status/summary.ts) as text: the same words and numbers in `inspect`,
 * `build`, `export`, `watch --once` and the watch header. Conditions are listed when non-zero.
 */
import { CONDITIONS, ROLLOUT_STATUSES } from '../../src/status/rollout-status.js';
import type { StatusSummary } from '../../src/status/summary.js';
import { plural } from '../cli/shared.js';
import type { Styles } from './styles.js';

/** A piece of a summary line: its plain text (for widths) and its styled form. */
export interface SummaryToken {
  text: string;
  styled: string;
}

export function statusTokens(s: StatusSummary, styles: Styles): SummaryToken[] {
  const out: SummaryToken[] = [
    { text: plural(s.rollouts, 'rollout'), styled: styles.heading(plural(s.rollouts, 'rollout')) },
  ];
  for (const st of ROLLOUT_STATUSES) {
    const n = s.byStatus[st];
    out.push({ text: `${n} ${st}`, styled: st === 'unavailable' && n > 0 ? `${n} ${styles.badge(st)}` : `${n} ${st}` });
  }
  return out;
}

export function conditionTokens(s: StatusSummary, styles: Styles): SummaryToken[] {
  return CONDITIONS.filter((c) => s.byCondition[c] > 0).map((c) => ({
    text: `${s.byCondition[c]} ${c}`,
    styled: `${s.byCondition[c]} ${styles.badge(c)}`,
  }));
}

export function verdictTokens(s: StatusSummary, styles: Styles): SummaryToken[] {
  const v = s.byVerdict;
  const unbuilt = s.unbuilt ? ` (${s.unbuilt} could not be built)` : '';
  return [
    { text: `${v.trainable} trainable`, styled: styles.ok(`${v.trainable} trainable`) },
    {
      text: `${v.masked} masked${unbuilt}`,
      styled: v.masked > 0 ? `${v.masked} ${styles.badge('masked')}${unbuilt}` : `${v.masked} masked${unbuilt}`,
    },
    {
      text: `${v.unavailable} could not be read`,
      styled:
        v.unavailable > 0 ? styles.error(`${v.unavailable} could not be read`) : `${v.unavailable} could not be read`,
    },
  ];
}

/**
 * The summary as text lines: statuses, then conditions (when any), then verdicts (when the
 * command built the rollouts).
 */
export function summaryLines(s: StatusSummary, styles: Styles, options: { verdicts: boolean }): string[] {
  const join = (ts: SummaryToken[]) => ts.map((t) => t.styled).join('  ');
  const lines = [join(statusTokens(s, styles))];
  const conds = conditionTokens(s, styles);
  if (conds.length) lines.push(`conditions: ${join(conds)}`);
  if (options.verdicts) lines.push(`verdicts: ${join(verdictTokens(s, styles))}`);
  return lines;
}
