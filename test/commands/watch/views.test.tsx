/**
 * Component tests at a fixed width (80 columns): the views render exactly what the model says,
 * nothing more, and never touch the filesystem (every value comes in through props).
 */
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { createStyles } from '../../../commands/render/styles.js';
import type { DirectorySnapshot } from '../../../src/watch/directory-model.js';
import { verdictOf } from '../../../src/status/verdict.js';
import { assembleDetail } from '../../../src/rollout-read/rollout-detail.js';
import {
  directoryTotals,
  NO_FILTER,
  packRow,
  placeholderRow,
  visibleRows,
  type RolloutRow,
} from '../../../src/watch/rows.js';
import { DirectoryView } from '../../../commands/watch/DirectoryView.js';
import { HEADER_HEIGHT } from '../../../commands/watch/list-header.js';
import { RolloutView } from '../../../commands/watch/RolloutView.js';
import { Footer } from '../../../commands/watch/Footer.js';
import { Help } from '../../../commands/watch/Help.js';
import { assembleWithChains, finishConsumerResult } from '../../../src/chains/consumer-result.js';
import { maskCauses } from '../../../src/chains/mask-causes.js';
import type { RolloutFacts } from '../../../src/facts/rollout-facts.js';
import { validateTokenEntry } from '../../../src/records/token-entry.js';
import { computeTokenDigest } from '../../../src/digest/token-digest.js';

const PLAIN = createStyles(0);
const NOW = 1_800_000_000_000;
const W = 80;

function lines(frame: string | undefined): string[] {
  return (frame ?? '').split('\n').map((l) => l.trimEnd());
}

function row(id: string, over: Partial<RolloutRow> = {}): RolloutRow {
  return packRow(placeholderRow(id), {
    loaded: true,
    calls: 3,
    version: 3,
    mtimeMs: NOW - 42_000,
    seq: 1,
    verdict: 'trainable',
    wouldMask: false,
    ...over,
  });
}

function snapshot(rows: RolloutRow[], over: Partial<DirectorySnapshot> = {}): DirectorySnapshot {
  return {
    dir: '/data/run',
    rows,
    totals: directoryTotals(rows, 0, 0),
    invalidNames: [],
    tempStateFiles: [],
    pending: 0,
    lockWaits: new Map(),
    ready: true,
    version: 1,
    ...over,
  };
}

const ROWS: RolloutRow[] = [
  row('rollout-a', { mtimeMs: NOW - 3_000, changedAt: NOW - 1_000, calls: 4, version: 5 }),
  row('rollout-b', {
    conditions: ['dangling', 'incomplete'],
    danglingIntents: ['c9'],
    verdict: 'masked',
    wouldMask: true,
    causes: [
      {
        code: 'dangling_intents',
        message: '1 call(s) were dispatched but never captured (intent without entry): c9',
        calls: ['c9'],
      },
      { code: 'capture_incomplete', message: 'the capture is marked incomplete' },
    ],
    incompleteMarkers: [''],
    incompleteFlag: true,
  }),
  row('rollout-c', { status: 'frozen', frozen: true, mtimeMs: NOW - 7_200_000 }),
  row('rollout-d', {
    status: 'retired',
    retired: true,
    verdict: 'masked',
    unbuilt: true,
    wouldMask: true,
    causes: [
      {
        code: 'build_error',
        message: 'the build failed: RuntimeError: Token capture for rollout rollout-d is retired',
      },
    ],
    calls: 0,
    mtimeMs: NOW - 4 * 86_400_000,
  }),
  row('rollout-e', {
    conditions: ['torn_tail', 'unindexed_tail'],
    tornTail: true,
    verdict: 'masked',
    wouldMask: true,
    causes: [{ code: 'unresolved_retries', message: 'retried calls ...: c2, c2-retry', calls: ['c2', 'c2-retry'] }],
  }),
];

function directory(rows: RolloutRow[], props: Partial<Parameters<typeof DirectoryView>[0]> = {}) {
  const snap = props.snapshot ?? snapshot(rows);
  const shown = visibleRows(snap.rows, props.filter ?? NO_FILTER, props.sort ?? 'recent');
  return render(
    <DirectoryView
      snapshot={snap}
      rows={shown}
      selected={0}
      offset={0}
      filter={NO_FILTER}
      sort="recent"
      width={W}
      height={14}
      now={NOW}
      styles={PLAIN}
      {...props}
    />,
  );
}

describe('DirectoryView', () => {
  it('renders the header totals and one line per rollout, recent first', () => {
    const { lastFrame } = directory(ROWS);
    expect(lines(lastFrame())).toEqual([
      'tokcap watch /data/run                                                up to date',
      '5 rollouts  3 live  1 frozen  1 retired  0 unavailable  2 trainable',
      '3 masked (1 could not be built)  0 could not be read  1 dangling  1 incomplete',
      'sort: recent first  filter: none                                        1-5 of 5',
      '  ROLLOUT   STATUS      CALLS DANG INC  VER  AGE WOULD MASK',
      '›•rollout-a live            4    0   0    5   3s no',
      '  rollout-b live            3    1   1    3  42s masked: dangling intents +1',
      '  rollout-e live            3    0   0    3  42s masked: unresolved retry',
      '  rollout-c frozen          3    0   0    3   2h no',
      '  rollout-d retired         0    0   0    3   4d masked: build failed',
      '',
      '',
      '',
      '',
    ]);
  });

  it('keeps every line within the width', () => {
    const long = row('x'.repeat(120), {
      verdict: 'masked',
      wouldMask: true,
      causes: [{ code: 'build_error', message: 'the build failed: ' + 'y'.repeat(200) }],
    });
    const { lastFrame } = directory([long, ...ROWS], { width: 80 });
    for (const l of lines(lastFrame())) expect(l.length).toBeLessThanOrEqual(80);
    expect(lines(lastFrame()).find((l) => l.includes('xxx'))).toMatch(/^ {2}x{29}… live .* masked: b…$/);
  });

  it('shows the mask causes of a masked rollout (first cause, +N more)', () => {
    const { lastFrame } = directory(ROWS, { filter: { ...NO_FILTER, masked: true } });
    const body = lines(lastFrame()).slice(HEADER_HEIGHT).filter(Boolean);
    expect(body).toEqual([
      '› rollout-b live            3    1   1    3  42s masked: dangling intents +1',
      '  rollout-e live            3    0   0    3  42s masked: unresolved retry',
      '  rollout-d retired         0    0   0    3   4d masked: build failed',
    ]);
  });

  it('shows an unreadable rollout with its error in its row', () => {
    const bad = row('broken', {
      status: 'unavailable',
      verdict: 'unavailable',
      error: { kind: 'io', message: 'refusing to read a directory: capture files must be regular files' },
      wouldMask: null,
      mtimeMs: NOW,
    });
    const { lastFrame } = directory([...ROWS, bad]);
    const out = lines(lastFrame());
    expect(out[2]).toContain('1 could not be read');
    expect(out[1]).toContain('1 unavailable');
    // Its values were not read: `-`, never a number (docs/cli.md#faults).
    expect(out.find((l) => l.includes('broken'))).toBe(
      '› broken    unavailable     -    -   -    -   0s could not be read: refusing to…',
    );
  });

  it('shows a rollout waiting for a lock held elsewhere, counting, and the wait in the header', () => {
    const locked = row('locked', { loaded: false, mtimeMs: NOW });
    const waits = new Map([['locked', NOW - 3_400]]);
    const out = lines(
      directory([...ROWS, locked], {
        width: 120,
        snapshot: snapshot([...ROWS, locked], { lockWaits: waits }),
      }).lastFrame(),
    );
    expect(out[0]).toMatch(/up to date, 1 waiting for lock$/);
    expect(out.find((l) => l.includes('locked'))).toMatch(/^› locked +… +0s waiting for lock \(3s\)$/);
    // Waiting again after a wait that ran out: the last failure is still said.
    const failed = row('locked', {
      mtimeMs: NOW,
      status: 'unavailable',
      error: { kind: 'lock_timeout', message: 'timed out after 1s waiting for the lock of rollout locked' },
    });
    const again = lines(
      directory([failed], { width: 140, snapshot: snapshot([failed], { lockWaits: waits }) }).lastFrame(),
    );
    expect(again.find((l) => l.includes('locked'))).toMatch(
      / 0s waiting for lock \(3s\); could not be read: timed out after 1s/,
    );
  });

  it('says so when the directory is empty, or still being listed, or nothing matches', () => {
    expect(lines(directory([]).lastFrame())[5]).toBe(
      '  no rollouts yet: nothing with a capture suffix in this directory (waiting for…',
    );
    expect(lines(directory([], { snapshot: snapshot([], { ready: false }) }).lastFrame())[0]).toMatch(/reading 0\/0$/);
    expect(lines(directory([], { snapshot: snapshot([], { ready: false }) }).lastFrame())[5]).toBe(
      '  listing the directory…',
    );
    expect(lines(directory(ROWS, { filter: { ...NO_FILTER, search: 'zzz' } }).lastFrame())[5]).toBe(
      '  no rollout matches the filter (Esc clears it)',
    );
    expect(
      lines(
        directory([], {
          snapshot: snapshot([], { scanError: { kind: 'io', message: 'ENOENT: no such file' } }),
        }).lastFrame(),
      )[0],
    ).toMatch(/cannot list: ENOENT/);
    // The directory removed while watched: in the words of the error line, from the error's fields.
    const removed = {
      kind: 'io' as const,
      message: 'ENOENT: no such file or directory, opendir',
      system: { code: 'ENOENT', syscall: 'opendir' },
    };
    expect(lines(directory([], { snapshot: snapshot([], { scanError: removed }) }).lastFrame())[0]).toMatch(
      /cannot list: no such directory$/,
    );
  });

  it('renders only the visible window of a huge list', () => {
    const many = Array.from({ length: 10_000 }, (_, i) =>
      row(`r${String(i).padStart(5, '0')}`, { mtimeMs: NOW - i * 1000 }),
    );
    const { lastFrame } = directory(many, { selected: 5000, offset: 4995, sort: 'recent' });
    const out = lines(lastFrame());
    expect(out).toHaveLength(14);
    expect(out[3]).toMatch(/4996-5004 of 10000$/);
    expect(out[5]).toMatch(/^ {2}r04995 /);
    expect(out[10]).toMatch(/^› r05000 /);
  });

  it('adapts to the width (resize): fewer totals per line, narrower mask column', () => {
    const wide = lines(directory(ROWS, { width: 120 }).lastFrame());
    const narrow = lines(directory(ROWS, { width: 60 }).lastFrame());
    expect(wide[1] + wide[2]).toContain('0 invalid names');
    expect(Math.max(...wide.map((l) => l.length))).toBeGreaterThan(80);
    for (const l of narrow) expect(l.length).toBeLessThanOrEqual(60);
    expect(narrow.find((l) => l.includes('rollout-b'))).toMatch(/ masked: da…$/);
  });
});

// A small rollout in the form the detail model builds: root, a resolved call, a retry pair.
function entryOf(id: string, prompt: number[], gen: number[], parent: string | null, createdAt: number) {
  return validateTokenEntry(
    {
      schema_version: 5,
      rollout_id: 'demo',
      model_call_id: id,
      prompt_token_ids: prompt,
      generation_token_ids: gen,
      generation_log_probs: gen.map(() => -0.5),
      created_at: createdAt,
      parent_call_id: parent,
      parent_resolution: parent ? 'resolved' : 'root',
      cum_len: prompt.length + gen.length,
      digest: computeTokenDigest([...prompt, ...gen]),
    },
    { rolloutId: 'demo' },
  );
}

function facts(over: Partial<RolloutFacts> = {}): RolloutFacts {
  return {
    files: ['.tokens.incomplete', '.tokens.intents', '.tokens.jsonl', '.tokens.state.json'],
    frozen: false,
    retired: false,
    incomplete_flag: true,
    incomplete_marker_calls: ['', 'c7'],
    intents: ['c0', 'c1', 'c2', 'c2b', 'c3'],
    dangling_intents: ['c3'],
    version: 6,
    snapshot_id: '',
    entries: 4,
    indexed_size: 100,
    file_size: 100,
    refusals: [],
    entries_source: 'index',
    torn_tail: false,
    missing_final_newline: false,
    unindexed_bytes: 0,
    bad_lines: 0,
    mtime_ms: NOW - 5_000,
    errors: [],
    ...over,
  };
}

function sampleDetail() {
  const e0 = entryOf('c0', [1, 2, 3], [4, 5], null, 1);
  const e1 = entryOf('c1', [1, 2, 3, 4, 5, 6], [7], 'c0', 2);
  const e2 = entryOf('c2', [1, 2, 3, 4, 5, 6, 7, 8], [9], 'c1', 3);
  const e2b = entryOf('c2b', [1, 2, 3, 4, 5, 6, 7, 8], [10], 'c1', 4);
  const entries = [e0, e1, e2, e2b];
  const { result, chains } = assembleWithChains('demo', entries);
  const finished = { ...finishConsumerResult(result, { incomplete: true }), preview: true as const };
  const f = facts();
  const causes = maskCauses(finished, {
    danglingIntents: ['c3'],
    incompleteMarkers: f.incomplete_marker_calls,
    incompleteFlag: true,
    chains,
  });
  return assembleDetail(
    'demo',
    f,
    {
      kind: 'built',
      result: finished,
      chains,
      danglingIntents: ['c3'],
      causes,
      verdict: verdictOf({ result: finished, causes }),
    },
    [{ rollout_id: 'demo', code: 'missing_digest', severity: 'warning', call_id: 'c2b', message: 'no digest' }],
    undefined,
    [],
  );
}

describe('RolloutView', () => {
  it('draws the chain tree, dangling intents, incomplete markers ("" shown) and every mask cause', () => {
    const { lastFrame } = render(
      <RolloutView
        id="demo"
        detail={sampleDetail()}
        loading={false}
        offset={0}
        width={W}
        height={30}
        now={NOW}
        styles={PLAIN}
      />,
    );
    expect(lines(lastFrame()).filter(Boolean)).toEqual([
      'rollout demo live  v6  4 calls  files incomplete+intents+jsonl+state  changed 5…',
      'conditions: dangling incomplete',
      '── chain tree (4 placed calls, 1 chain) ────────────────────────────────────────',
      '● c0  root  prompt 3 full  gen 2  digest ok  [main]',
      '└─ c1  resolved  prompt 6 full  gen 1  digest ok  [main]',
      '   ├─ c2  resolved  prompt 8 full  gen 1  digest ok  [main] [unresolved retry]',
      '   └─ c2b  resolved  prompt 8 full  gen 1  digest missing_digest  [quarantined …',
      '── dangling intents (1) ────────────────────────────────────────────────────────',
      '  c3  intent without entry (dispatched, never captured)',
      '── incomplete markers (2) · state flag set ─────────────────────────────────────',
      '  ""  (a call lost before its id was known)',
      '  c7',
      '── build verdict (preview, nothing written) ────────────────────────────────────',
      '  masked (would be)  roots 1  chains 1  calls 4  delivered 4/5 (80.0%)',
      '  • dangling_intents: 1 call(s) were dispatched but never captured (intent',
      '      without entry): c3',
      '  • capture_incomplete: the capture is marked incomplete (a call was lost or a',
      '      payload conflicted); marked calls: "", c7',
      '  • unresolved_retries: retried calls with no later call to tell which attempt',
      '      was kept: c2, c2b',
    ]);
  });

  it('scrolls by line and says what is above and below', () => {
    const { lastFrame } = render(
      <RolloutView
        id="demo"
        detail={sampleDetail()}
        loading={false}
        offset={3}
        width={W}
        height={8}
        now={NOW}
        styles={PLAIN}
      />,
    );
    const out = lines(lastFrame());
    expect(out).toHaveLength(8);
    expect(out[0]).toBe('  ↑ 4 lines above');
    expect(out[7]).toMatch(/^ {2}↓ \d+ more lines$/);
  });

  it('shows a loading line, then an error when the detail cannot be read', () => {
    expect(
      lines(
        render(
          <RolloutView id="x" detail={null} loading offset={0} width={W} height={3} now={NOW} styles={PLAIN} />,
        ).lastFrame(),
      )[0],
    ).toBe('rollout x: reading…');
    expect(
      lines(
        render(
          <RolloutView
            id="x"
            detail={null}
            loading={false}
            error="EACCES"
            offset={0}
            width={W}
            height={3}
            now={NOW}
            styles={PLAIN}
          />,
        ).lastFrame(),
      )[0],
    ).toBe('rollout x: EACCES');
  });

  it('says why a rollout not read yet is not shown: a lock held elsewhere, a read that failed', () => {
    const view = (p: { lockWaitSince?: number; rowError?: { kind: 'lock_timeout'; message: string } }) =>
      lines(
        render(
          <RolloutView
            id="x"
            detail={null}
            loading
            offset={0}
            width={120}
            height={3}
            now={NOW}
            styles={PLAIN}
            {...p}
          />,
        ).lastFrame(),
      );
    expect(view({ lockWaitSince: NOW - 2_500 })[0]).toBe('rollout x: reading… waiting for lock (2s)');
    const rowError = { kind: 'lock_timeout' as const, message: 'timed out after 1s waiting for the lock of rollout x' };
    expect(view({ rowError })[0]).toBe(
      'rollout x: could not be read: timed out after 1s waiting for the lock of rollout x',
    );
  });
});

describe('Footer and Help', () => {
  it('lists the keys that fit, always ending with help and quit', () => {
    const at80 = lines(
      render(<Footer screen="list" width={80} filter={NO_FILTER} searchDraft={null} styles={PLAIN} />).lastFrame(),
    )[0];
    expect(at80).toBe('Enter open  / search  m masked  i incomplete  d dangling  s sort  ? help  q quit');
    const at40 = lines(
      render(
        <Footer screen="list" width={40} filter={{ ...NO_FILTER, masked: true }} searchDraft={null} styles={PLAIN} />,
      ).lastFrame(),
    )[0];
    expect(at40).toBe('Enter open  / search  ? help  q quit');
    const wide = lines(
      render(
        <Footer screen="list" width={100} filter={{ ...NO_FILTER, masked: true }} searchDraft={null} styles={PLAIN} />,
      ).lastFrame(),
    )[0];
    expect(wide).toBe('Enter open  / search  m masked*  i incomplete  d dangling  s sort  ↑↓ move  ? help  q quit');
    expect(
      lines(
        render(<Footer screen="detail" width={80} filter={NO_FILTER} searchDraft={null} styles={PLAIN} />).lastFrame(),
      )[0],
    ).toBe('↑↓ scroll  Esc back  PgUp/PgDn page  t/T call text  ? help  q quit');
    expect(
      lines(
        render(<Footer screen="list" width={80} filter={NO_FILTER} searchDraft="r00" styles={PLAIN} />).lastFrame(),
      )[0],
    ).toBe('/r00█  Enter keep  Esc clear');
  });

  it('fits the help in 80x24', () => {
    const out = lines(render(<Help width={80} height={22} styles={PLAIN} />).lastFrame());
    expect(out).toHaveLength(22);
    for (const l of out) expect(l.length).toBeLessThanOrEqual(80);
    expect(out).toContain('press ? or Esc to close');
  });
});
