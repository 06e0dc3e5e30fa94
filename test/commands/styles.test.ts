import { describe, expect, it } from 'vitest';
import { colorLevel, createStyles, ROLLOUT_STATES, type Styles } from '../../commands/render/styles.js';
import { renderBoxedTable, renderPlainTable, visibleWidth } from '../../commands/render/table.js';

// eslint-disable-next-line no-control-regex
const ESC = /\x1b\[/;

function everyStyle(s: Styles): string[] {
  return [
    s.ok('ok'),
    s.warn('warn'),
    s.error('error'),
    s.dim('dim'),
    s.heading('heading'),
    s.id('r-1'),
    s.path('/d'),
    s.bold('bold'),
    s.inverse('selected'),
    ...ROLLOUT_STATES.map((st) => s.badge(st)),
  ];
}

describe('colorLevel', () => {
  const tty = { color: 'auto' as const, env: {}, stdoutIsTTY: true, supportedLevel: 3 as const };
  it('is on for a TTY without NO_COLOR or --no-color', () => {
    expect(colorLevel(tty)).toBe(3);
  });
  it('is 0 when NO_COLOR is set to anything non-empty', () => {
    expect(colorLevel({ ...tty, env: { NO_COLOR: '1' } })).toBe(0);
    expect(colorLevel({ ...tty, env: { NO_COLOR: 'false' } })).toBe(0);
    expect(colorLevel({ ...tty, env: { NO_COLOR: '' } })).toBe(3);
  });
  it('is 0 with --color=never (--no-color) or when stdout is not a TTY', () => {
    expect(colorLevel({ ...tty, color: 'never' })).toBe(0);
    expect(colorLevel({ ...tty, color: 'never', env: { FORCE_COLOR: '1' } })).toBe(0);
    expect(colorLevel({ ...tty, stdoutIsTTY: false })).toBe(0);
  });
  it('FORCE_COLOR colours a pipe (for less -R), unless NO_COLOR; its value picks the level', () => {
    const pipe = { ...tty, stdoutIsTTY: false };
    expect(colorLevel({ ...pipe, env: { FORCE_COLOR: '3' } })).toBe(3);
    expect(colorLevel({ ...pipe, env: { FORCE_COLOR: '1' } })).toBe(1);
    expect(colorLevel({ ...pipe, env: { FORCE_COLOR: 'true' } })).toBe(1);
    expect(colorLevel({ ...pipe, env: { FORCE_COLOR: '0' } })).toBe(0);
    expect(colorLevel({ ...pipe, env: { FORCE_COLOR: 'false' } })).toBe(0);
    expect(colorLevel({ ...pipe, env: { FORCE_COLOR: '1', NO_COLOR: '1' } })).toBe(0);
  });
  it('--color=always colours a pipe, whatever NO_COLOR says', () => {
    expect(colorLevel({ ...tty, color: 'always', stdoutIsTTY: false })).toBe(1);
    expect(colorLevel({ ...tty, color: 'always', stdoutIsTTY: false, env: { NO_COLOR: '1', FORCE_COLOR: '2' } })).toBe(
      2,
    );
    expect(colorLevel({ ...tty, color: 'always', env: { NO_COLOR: '1' } })).toBe(3);
  });
  it('falls back to at least level 1 on a TTY', () => {
    expect(colorLevel({ color: 'auto', env: {}, stdoutIsTTY: true })).toBeGreaterThanOrEqual(1);
  });
});

describe('styles', () => {
  it('produce no escape codes at level 0', () => {
    const s = createStyles(0);
    for (const text of everyStyle(s)) expect(text).not.toMatch(ESC);
    expect(s.badge('frozen')).toBe('frozen');
    expect(s.ok('fine')).toBe('fine');
  });

  it('produce no escape codes when NO_COLOR is set, even on a TTY', () => {
    const s = createStyles(colorLevel({ color: 'auto', env: { NO_COLOR: '1' }, stdoutIsTTY: true, supportedLevel: 3 }));
    for (const text of everyStyle(s)) expect(text).not.toMatch(ESC);
  });

  it('colour when on, keeping the visible text', () => {
    const s = createStyles(1);
    for (const st of ROLLOUT_STATES) {
      expect(s.badge(st)).toMatch(ESC);
      expect(visibleWidth(s.badge(st))).toBe(st.length);
    }
    expect(s.error('x')).toMatch(ESC);
  });
});

describe('tables', () => {
  const columns = [{ header: 'ID' }, { header: 'STATE' }, { header: 'CALLS', align: 'right' as const }];

  it('boxed (cli-table3) measures widths without escape codes', () => {
    const coloured = createStyles(3);
    const rows = [
      [coloured.id('r-0001'), coloured.badge('frozen'), '12'],
      ['r-2', coloured.badge('incomplete'), '3'],
    ];
    const out = renderBoxedTable(columns, rows, coloured.heading);
    const widths = out.split('\n').map(visibleWidth);
    expect(new Set(widths).size).toBe(1); // every line, borders included, is equally wide
    const plainOut = renderBoxedTable(columns, [
      ['r-0001', 'frozen', '12'],
      ['r-2', 'incomplete', '3'],
    ]);
    expect(out.split('\n').map((l) => l.replace(ESC, '')).length).toBe(plainOut.split('\n').length);
    expect(widths[0]).toBe(visibleWidth(plainOut.split('\n')[0]));
  });

  it('boxed adds no colour of its own', () => {
    const out = renderBoxedTable(columns, [['a', 'live', '1']]);
    expect(out).not.toMatch(ESC);
  });

  it('plain is borderless, aligned, without trailing spaces', () => {
    const s = createStyles(0);
    const out = renderPlainTable(columns, [
      ['r-0001', s.badge('frozen'), '12'],
      ['r-2', s.badge('live'), '3'],
    ]);
    expect(out).toBe(['ID      STATE   CALLS', 'r-0001  frozen     12', 'r-2     live        3'].join('\n'));
  });

  it('plain aligns coloured cells by their visible width', () => {
    const c = createStyles(3);
    const out = renderPlainTable(columns, [
      [c.id('r-0001'), c.badge('frozen'), '12'],
      ['r-2', c.badge('live'), '3'],
    ]);
    // eslint-disable-next-line no-control-regex -- ANSI colour sequences
    const stripped = out.split('\n').map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
    expect(stripped).toEqual(['ID      STATE   CALLS', 'r-0001  frozen     12', 'r-2     live        3']);
  });
});
