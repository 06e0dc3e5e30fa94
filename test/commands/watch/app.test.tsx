/**
 * The app through ink-testing-library: keys, screens, filters, sort, resize, live updates. The
 * model reads a real generated store in a temporary directory; the components only see props.
 */
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { render } from 'ink-testing-library';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createStyles } from '../../../commands/render/styles.js';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { beginCall } from '../../../src/ops/writer.js';
import { appendEntry } from '../../../src/ops/writer.js';
import { DEFAULT_READERS, DirectoryModel, type WatchReaders } from '../../../src/watch/directory-model.js';
import { entry } from '../../support/store.js';
import { WatchApp } from '../../../commands/watch/App.js';
import type { WatchFunction } from '../../../commands/watch/hooks/use-directory-watcher.js';

const PLAIN = createStyles(0);
let DIR = '';

beforeAll(async () => {
  DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-watch-app-'));
  await generateStore({ dir: DIR }, { rollouts: 8, calls: 3, prompt: 12, gen: 3, turn: 2, mix: true });
  return () => fs.rmSync(DIR, { recursive: true, force: true });
});

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

class FakeTerminal extends EventEmitter {
  constructor(
    public columns: number,
    public rows: number,
  ) {
    super();
  }
  resize(columns: number, rows: number) {
    this.columns = columns;
    this.rows = rows;
    this.emit('resize');
  }
}

function fakeWatch() {
  const close = vi.fn();
  const watch: WatchFunction = () => ({ close, on: () => undefined as never }) as never;
  return { watch, close };
}

/**
 * Waits for what the app shows (the bound only fails a broken run: no test here asserts how soon
 * a key or a read reaches the frame; bench/watch-live.mjs measures that).
 */
async function until(check: () => boolean, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `expect` on a value the app shows once it has handled what came before (see `until`). */
const soon = <T,>(value: () => T) => expect.poll(value, { timeout: 120_000, interval: 10 });

function lines(frame: string | undefined): string[] {
  return (frame ?? '').split('\n').map((l) => l.trimEnd());
}

function start(dir = DIR, size = new FakeTerminal(80, 24)) {
  const model = new DirectoryModel({ dir });
  const { watch, close } = fakeWatch();
  const app = render(
    <WatchApp model={model} styles={PLAIN} sizeStream={size} watcher={{ watch, rescanMs: 0 }} throttleMs={10} />,
  );
  cleanups.push(() => {
    app.unmount();
    model.dispose();
  });
  const frame = () => app.lastFrame() ?? '';
  // Keys are handled in the order written; what they did is awaited with `soon`.
  const press = async (keys: string) => {
    app.stdin.write(keys);
    await new Promise((r) => setImmediate(r));
  };
  return { app, model, frame, press, size, close };
}

const selectedLine = (frame: string) => lines(frame).find((l) => l.startsWith('›')) ?? '';

describe('WatchApp', () => {
  it('fills 80x24 (one line short, no full-screen redraws) and moves the selection', async () => {
    const { frame, press } = start();
    await until(() => frame().includes('up to date'), 'the first load');
    const out = lines(frame());
    expect(out).toHaveLength(23);
    expect(out[4]).toMatch(/^ {2}ROLLOUT +STATUS +CALLS DANG INC +VER +AGE WOULD MASK$/);
    expect(out.at(-1)).toBe('Enter open  / search  m masked  i incomplete  d dangling  s sort  ? help  q quit');
    await soon(() => selectedLine(frame())).toMatch(/^› r7 /);
    await press('j');
    await soon(() => selectedLine(frame())).toMatch(/^› r6 /);
    await press('jj'); // typed faster than a frame: both count
    await soon(() => selectedLine(frame())).toMatch(/^› r4 /);
    await press('\u001b[A'); // up
    await soon(() => selectedLine(frame())).toMatch(/^› r5 /);
    await press('G');
    await soon(() => selectedLine(frame())).toMatch(/^› r0 /);
    await press('g');
    await soon(() => selectedLine(frame())).toMatch(/^› r7 /);
  });

  it('opens a rollout with Enter and goes back with Esc', async () => {
    const { frame, press } = start();
    await until(() => frame().includes('up to date'), 'the first load');
    await press('jjjjj\r'); // r2 (dangling intent, incomplete marker); one chunk, as a fast typist or tmux sends it
    await until(() => frame().includes('build verdict'), 'the rollout view');
    const out = lines(frame());
    expect(out[0]).toMatch(/^rollout r2 live {2}v\d+/);
    expect(out).toContain('  call-001  intent without entry (dispatched, never captured)');
    expect(out.some((l) => l.startsWith('● call-000  root'))).toBe(true);
    expect(out).toContain('── incomplete markers (1) · state flag set ─────────────────────────────────────');
    expect(out.at(-1)).toBe('↑↓ scroll  Esc back  PgUp/PgDn page  t/T call text  ? help  q quit');
    await press('\u001b');
    await until(() => frame().includes('ROLLOUT'), 'the directory view');
    await soon(() => selectedLine(frame())).toMatch(/^› r2 /);
  });

  it('filters (m, d, /search) and sorts (s)', async () => {
    const { frame, press } = start();
    await until(() => frame().includes('up to date'), 'the first load');
    const ids = () =>
      lines(frame())
        .slice(5, -1)
        .filter(Boolean)
        .map((l) => l.slice(2).split(' ')[0]);
    await press('m');
    await soon(() => ids()).toEqual(['r7', 'r6', 'r4', 'r3', 'r2', 'r1']);
    await soon(() => lines(frame())[3]).toMatch(/filter: masked/);
    await press('d');
    await soon(() => ids()).toEqual(['r7', 'r2', 'r1']);
    await press('\u001b');
    await soon(() => ids()).toHaveLength(8);
    await press('/');
    await press('r3');
    await soon(() => lines(frame()).at(-1)).toBe('/r3█  Enter keep  Esc clear');
    await press('\u001b');
    // A search typed (or pasted) in one go, then Enter to keep it and Enter to open.
    await press('/r4\r\r');
    await until(() => frame().includes('build verdict'), 'the rollout view of r4');
    await soon(() => lines(frame())[0]).toMatch(/^rollout r4 /);
    await press('\u001b'); // back to the list, still searching r4
    await soon(() => ids()).toEqual(['r4']);
    await press('\u001b'); // clears the search
    await press('/');
    await press('r3');
    await soon(() => ids()).toEqual(['r3']);
    await press('\r');
    await soon(() => lines(frame()).at(-1)).toMatch(/^Enter open/);
    await soon(() => ids()).toEqual(['r3']);
    await press('/');
    await press('\u007f'); // backspace
    await press('\u007f');
    await soon(() => ids()).toHaveLength(8);
    await press('\u001b');
    await press('s');
    await soon(() => lines(frame())[3]).toMatch(/^sort: id /);
    await soon(() => ids()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
  });

  it('shows help with ? and quits with q (the watcher is closed)', async () => {
    const { frame, press, close } = start();
    await until(() => frame().includes('up to date'), 'the first load');
    await press('?');
    await soon(() => lines(frame())[0]).toBe('tokcap watch: a live, read-only view of a capture directory');
    await press('?');
    await soon(() => lines(frame())[0]).toMatch(/^tokcap watch \//);
    expect(close).not.toHaveBeenCalled();
    await press('q');
    await soon(() => close.mock.calls.length).toBe(1);
  });

  it('draws one frame at mount when nothing changed (none of its hooks sets an equal state again)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-watch-app-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const model = new DirectoryModel({ dir });
    const { watch } = fakeWatch();
    const app = render(
      <WatchApp
        model={model}
        styles={PLAIN}
        sizeStream={new FakeTerminal(80, 24)}
        watcher={{ watch, rescanMs: 0 }}
        initialScan={false}
      />,
    );
    cleanups.push(() => {
      app.unmount();
      model.dispose();
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(app.frames).toHaveLength(1);
    expect(app.lastFrame()).toContain('listing the directory…');
  });

  it('follows terminal resizes', async () => {
    const { frame, size } = start(DIR, new FakeTerminal(80, 24));
    await until(() => frame().includes('up to date'), 'the first load');
    size.resize(100, 30);
    await until(() => lines(frame()).length === 29, 'the larger frame');
    expect(Math.max(...lines(frame()).map((l) => l.length))).toBeGreaterThan(80);
    size.resize(60, 12);
    await until(() => lines(frame()).length === 11, 'the smaller frame');
    for (const l of lines(frame())) expect(l.length).toBeLessThanOrEqual(60);
    expect(lines(frame()).filter((l) => /^[ ›][ •]r\d /.test(l))).toHaveLength(11 - 1 - 5);
  });

  it('highlights a rollout that just changed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-watch-app-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    await generateStore({ dir }, { rollouts: 3, calls: 2, prompt: 5, gen: 2, turn: 1 });
    const { frame, model } = start(dir);
    await until(() => frame().includes('up to date'), 'the first load');
    expect(lines(frame()).some((l) => l.includes('•'))).toBe(false);
    await beginCall({ dir }, 'r0', 'call-new');
    await model.refresh(['r0']);
    await until(() => lines(frame()).some((l) => /^[ ›]•r0 +live +2 +1 /.test(l)), 'the highlighted row');
  });
});

describe('WatchApp during the first load', () => {
  /** Rollouts a..f with 1..6 calls, and a model whose reads wait for `release` (one batch each). */
  async function pacedLoad() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-watch-app-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const [i, id] of ids.entries())
      for (let c = 0; c <= i; c++) await appendEntry({ dir }, entry(`call-${c}`, { rollout: id }));
    const gates: (() => void)[] = [];
    const readBatch: WatchReaders['readBatch'] = async (store, batch) => {
      await new Promise<void>((resolve) => gates.push(resolve));
      return DEFAULT_READERS.readBatch(store, batch);
    };
    const model = new DirectoryModel({ dir, readers: { readBatch }, concurrency: 1, batchSize: 2, firstBatch: 2 });
    const { watch } = fakeWatch();
    // Most calls first: the order changes wholesale as the rows are read (unread rows have none).
    const app = render(
      <WatchApp
        model={model}
        styles={PLAIN}
        sizeStream={new FakeTerminal(80, 24)}
        watcher={{ watch, rescanMs: 0 }}
        throttleMs={10}
        initialSort="calls"
      />,
    );
    cleanups.push(() => {
      for (const g of gates.splice(0)) g();
      app.unmount();
      model.dispose();
    });
    const frame = () => app.lastFrame() ?? '';
    // One batch read, and on screen: the header counts it.
    const release = async () => {
      await until(() => gates.length > 0, 'a batch read');
      const before = model.snapshot().totals.loaded;
      gates.shift()!();
      await until(() => model.snapshot().totals.loaded > before, 'the batch placed');
      const loaded = model.snapshot().totals.loaded;
      await until(
        () => frame().includes(`reading ${loaded}/`) || frame().includes('up to date'),
        'the batch on screen',
      );
    };
    const press = async (keys: string) => {
      app.stdin.write(keys);
      await new Promise((r) => setImmediate(r));
    };
    await until(() => /^› a /.test(selectedLine(frame())), 'the listing');
    return { frame, model, release, press };
  }

  it('keeps the selection on the rollout the user moved it to while rows are read and re-sorted', async () => {
    const { frame, model, release, press } = await pacedLoad();
    await press('jj');
    await soon(() => selectedLine(frame())).toMatch(/^› c /);
    while (!model.snapshot().ready) {
      await release();
      await soon(() => selectedLine(frame())).toMatch(/^› c /);
    }
    await until(() => frame().includes('up to date'), 'the end of the load');
    const order = lines(frame())
      .filter((l) => /^[ ›][ •][a-f] /.test(l))
      .map((l) => l[2]);
    expect(order).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
    await soon(() => selectedLine(frame())).toMatch(/^› c /);
  });

  it('keeps it on the top row, whichever rollout that becomes, until a key moves it', async () => {
    const { frame, model, release } = await pacedLoad();
    while (!model.snapshot().ready) {
      await release();
      expect(lines(frame()).find((l) => /^[ ›][ •][a-f] /.test(l))).toBe(selectedLine(frame()));
    }
    await until(() => frame().includes('up to date'), 'the end of the load');
    await soon(() => selectedLine(frame())).toMatch(/^› f /);
  });
});
