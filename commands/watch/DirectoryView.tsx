/**
 * The directory view: header with totals, the column heading and the visible window of rows.
 * Virtualised: only the `height - HEADER_HEIGHT` rows in view are rendered, whatever the size of
 * the directory. Pure: everything comes in through props (no filesystem, no timers).
 */
import { Box, Text } from 'ink';
import type { Styles } from '../render/styles.js';
import type { DirectorySnapshot } from '../../src/watch/directory-model.js';
import type { RowFilter, SortMode } from '../../src/watch/rows.js';
import type { IndexedRows } from '../../src/watch/row-list.js';
import { columnHeading, columnsFor, rowLine } from './list-rows.js';
import { HEADER_HEIGHT, headerLines, listHeight } from './list-header.js';
import { truncate } from './fit-text.js';

export interface DirectoryViewProps {
  snapshot: DirectorySnapshot;
  /** The filtered, sorted rows. */
  rows: IndexedRows;
  /** Index of the selected row in `rows` (-1: none). */
  selected: number;
  /** First visible row. */
  offset: number;
  filter: RowFilter;
  sort: SortMode;
  width: number;
  /** Lines available to this view. */
  height: number;
  now: number;
  styles: Styles;
}

export function DirectoryView({
  snapshot,
  rows,
  selected,
  offset,
  filter,
  sort,
  width,
  height,
  now,
  styles,
}: DirectoryViewProps) {
  const page = listHeight(height);
  const visible = rows.slice(offset, offset + page);
  const header = headerLines(
    {
      dir: snapshot.dir,
      totals: snapshot.totals,
      pending: snapshot.pending,
      lockWaits: snapshot.lockWaits.size,
      ready: snapshot.ready,
      scanError: snapshot.scanError,
      sort,
      filter,
      shown: rows.length,
      first: rows.length === 0 ? 0 : offset + 1,
      last: offset + visible.length,
    },
    width,
    styles,
  );
  // Always HEADER_HEIGHT - 1 lines above the heading (totals may take one line or two).
  while (header.length < HEADER_HEIGHT - 1) header.splice(header.length - 1, 0, '');
  const longestId = visible.reduce((m, r) => Math.max(m, r.id.length), 0);
  const cols = columnsFor(width, longestId);

  let body: string[];
  if (rows.length === 0) {
    // The totals, not `snapshot.rows.length`: that would make every row of a snapshot whose rows
    // are a chain of deltas (src/watch/directory-model.ts), once per frame of an empty filter.
    const empty =
      snapshot.totals.rollouts === 0
        ? snapshot.scanError
          ? '  the directory cannot be listed; retrying'
          : snapshot.ready
            ? '  no rollouts yet: nothing with a capture suffix in this directory (waiting for writers)'
            : '  listing the directory…'
        : '  no rollout matches the filter (Esc clears it)';
    body = [styles.dim(truncate(empty, width))];
  } else {
    body = visible.map((r, i) => {
      const isSelected = offset + i === selected;
      return rowLine(r, {
        now,
        selected: isSelected,
        cols,
        styles,
        padLast: isSelected,
        lockWaitSince: snapshot.lockWaits.get(r.id),
      });
    });
  }
  while (body.length < page) body.push('');

  return (
    <Box flexDirection="column" width={width} height={height}>
      {header.map((line, i) => (
        <Text key={`h${i}`} wrap="truncate-end">
          {line}
        </Text>
      ))}
      <Text wrap="truncate-end">{styles.dim(columnHeading(cols))}</Text>
      {body.map((line, i) => (
        <Text key={`r${i}`} wrap="truncate-end">
          {line === '' ? ' ' : line}
        </Text>
      ))}
    </Box>
  );
}
