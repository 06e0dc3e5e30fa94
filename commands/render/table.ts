/**
 * Tables for human output. Two layouts:
 * - 'boxed' (stdout is a TTY): cli-table3 with borders. cli-table3 measures cells without their
 *   ANSI escape codes, so styled cells stay aligned (test/commands/styles.test.ts checks this);
 *   cli-table3's own colouring of headers and borders is switched off: styles come from
 *   commands/render/styles.ts only, so that level 0 really means no escape codes.
 * - 'plain' (not a TTY): no borders, columns separated by two spaces, padded to the widest
 *   visible cell, no trailing spaces. Meant for `less`/`grep`; scripts should use --json.
 *
 * Widths count UTF-16 code units after stripping escape codes; rollout ids and numbers are ASCII.
 */
import { createRequire } from 'node:module';
import { stripVTControlCharacters } from 'node:util';
import type TableConstructor from 'cli-table3';

export type Align = 'left' | 'right';

export interface Column {
  header: string;
  align?: Align;
}

export interface TableOptions {
  layout: 'boxed' | 'plain';
  /** Applied to header cells (e.g. styles.heading). */
  headingStyle?: (s: string) => string;
}

/** Width of a string as displayed: escape codes do not count. */
export function visibleWidth(s: string): number {
  return stripVTControlCharacters(s).length;
}

function pad(cell: string, width: number, align: Align): string {
  const fill = ' '.repeat(Math.max(0, width - visibleWidth(cell)));
  return align === 'right' ? fill + cell : cell + fill;
}

export function renderPlainTable(
  columns: readonly Column[],
  rows: readonly (readonly string[])[],
  headingStyle?: (s: string) => string,
): string {
  const all = [columns.map((c) => c.header), ...rows.map((r) => columns.map((_, i) => r[i] ?? ''))];
  const widths = columns.map((_, i) => Math.max(...all.map((r) => visibleWidth(r[i]))));
  const lines = all.map((r, rowIndex) => {
    const cells = r.map((cell, i) => {
      const styled = rowIndex === 0 && headingStyle ? headingStyle(cell) : cell;
      return pad(styled, widths[i], columns[i].align ?? 'left');
    });
    return cells.join('  ').replace(/\s+$/, '');
  });
  return lines.join('\n');
}

/** cli-table3 (CommonJS), loaded on the first boxed table: scripts and cron never draw one. */
let Table: typeof TableConstructor | undefined;

export function renderBoxedTable(
  columns: readonly Column[],
  rows: readonly (readonly string[])[],
  headingStyle?: (s: string) => string,
): string {
  Table ??= createRequire(import.meta.url)('cli-table3') as typeof TableConstructor;
  const table = new Table({
    head: columns.map((c) => (headingStyle ? headingStyle(c.header) : c.header)),
    colAligns: columns.map((c) => c.align ?? 'left'),
    style: { head: [], border: [], compact: false, 'padding-left': 1, 'padding-right': 1 },
    wordWrap: false,
  });
  for (const r of rows) table.push(columns.map((_, i) => r[i] ?? ''));
  return table.toString();
}

export function renderTable(
  columns: readonly Column[],
  rows: readonly (readonly string[])[],
  options: TableOptions,
): string {
  return options.layout === 'boxed'
    ? renderBoxedTable(columns, rows, options.headingStyle)
    : renderPlainTable(columns, rows, options.headingStyle);
}
