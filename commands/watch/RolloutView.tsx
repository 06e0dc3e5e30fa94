/**
 * The rollout view: the chain tree, dangling intents, incomplete markers and the build verdict
 * with every mask cause, scrolled by line. Pure: the detail comes in through props.
 */
import { Box, Text } from 'ink';
import type { Styles } from '../render/styles.js';
import type { RolloutDetail } from '../../src/rollout-read/rollout-detail.js';
import type { ErrorFacts } from '../../src/errors.js';
import { couldNotBeRead } from '../cli/errors.js';
import { detailLines, type ShownDetail } from './rollout-lines.js';
import { callTextLines } from '../render/call-text-lines.js';
import { callTokens } from '../../src/call-text/call-tokens.js';
import { lockWaitText } from './list-rows.js';
import { truncate } from './fit-text.js';

export interface RolloutViewProps {
  id: string;
  detail: RolloutDetail | null;
  loading: boolean;
  error?: string;
  /** Since when (the clock of `now`) the directory model waits for the rollout's lock, if it does. */
  lockWaitSince?: number;
  /** Why the directory model's last read of the rollout failed, if it did. */
  rowError?: ErrorFacts;
  /** The call whose text is shown (index in the detail's chain tree); null or absent: the rollout. */
  callIndex?: number | null;
  /** First visible line. */
  offset: number;
  width: number;
  height: number;
  now: number;
  styles: Styles;
}

/** The lines of the view (also used by the App to clamp scrolling). */
export function rolloutViewLines(
  p: Pick<
    RolloutViewProps,
    'id' | 'detail' | 'loading' | 'error' | 'width' | 'now' | 'styles' | 'lockWaitSince' | 'rowError' | 'callIndex'
  >,
): string[] {
  if (p.detail === null) {
    if (p.error !== undefined) return [p.styles.error(truncate(`rollout ${p.id}: ${p.error}`, p.width))];
    // Not read yet: say why, if the list knows (a lock held elsewhere, a read that failed).
    const lines: string[] = [];
    if (p.lockWaitSince !== undefined)
      lines.push(p.styles.warn(truncate(`rollout ${p.id}: reading… ${lockWaitText(p.now, p.lockWaitSince)}`, p.width)));
    if (p.rowError !== undefined)
      lines.push(p.styles.error(truncate(`rollout ${p.id}: ${couldNotBeRead(p.rowError)}`, p.width)));
    if (lines.length === 0) lines.push(p.styles.dim(truncate(`rollout ${p.id}: reading…`, p.width)));
    return lines;
  }
  const texts = (p.detail as ShownDetail).texts;
  const node = p.callIndex === null || p.callIndex === undefined ? undefined : p.detail.tree[p.callIndex];
  const call = node && p.detail.build ? callTokens(p.detail.build, node.id, p.detail.divergences) : undefined;
  if (call) {
    const text = texts?.get(call.model) ?? null;
    const where = p.styles.dim(
      truncate(
        `rollout ${p.id} · call ${p.callIndex! + 1} of ${p.detail.tree.length} (t next, T previous, Esc back)${text ? '' : ' · ids: no tokenizer loaded'}`,
        p.width,
      ),
    );
    return [where, ...callTextLines(call, text, p.width, p.styles)];
  }
  return detailLines(p.detail, p.width, p.now, p.styles, texts);
}

export function maxDetailOffset(lineCount: number, height: number): number {
  return Math.max(0, lineCount - height);
}

export function RolloutView(props: RolloutViewProps) {
  const { offset, width, height, styles } = props;
  const lines = rolloutViewLines(props);
  const start = Math.min(offset, maxDetailOffset(lines.length, height));
  const shown = lines.slice(start, start + height);
  const more = lines.length - (start + shown.length);
  if (more > 0 && shown.length > 0) shown[shown.length - 1] = styles.dim(truncate(`  ↓ ${more + 1} more lines`, width));
  if (start > 0 && shown.length > 0) shown[0] = styles.dim(truncate(`  ↑ ${start + 1} lines above`, width));
  while (shown.length < height) shown.push('');
  return (
    <Box flexDirection="column" width={width} height={height}>
      {shown.map((line, i) => (
        <Text key={i} wrap="truncate-end">
          {line === '' ? ' ' : line}
        </Text>
      ))}
    </Box>
  );
}
