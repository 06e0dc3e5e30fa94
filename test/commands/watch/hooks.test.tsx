/**
 * The hooks, each through a small harness component, with fake timers (setTimeout/setInterval
 * and Date are faked; setImmediate stays real so React and Ink can flush effects).
 */
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateStore } from '../../../src/fixture/generate-store.js';
import { beginCall } from '../../../src/ops/writer.js';
import { DEFAULT_READERS, DirectoryModel, type DirectorySnapshot } from '../../../src/watch/directory-model.js';
import { useDirectoryModel } from '../../../commands/watch/hooks/use-directory-model.js';
import {
  useDirectoryWatcher,
  type DirectoryWatcherOptions,
  type WatchFunction,
  type WatchTarget,
} from '../../../commands/watch/hooks/use-directory-watcher.js';
import { useTerminalSize } from '../../../commands/watch/hooks/use-terminal-size.js';
import { useNow } from '../../../commands/watch/hooks/use-now.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

function fakeFsWatch() {
  let listener: ((event: string, filename: string | Buffer | null) => void) | undefined;
  const emitter = new EventEmitter();
  const close = vi.fn();
  const calls: { dir: string; persistent: boolean }[] = [];
  const watch: WatchFunction = (dir, options, l) => {
    calls.push({ dir, persistent: options.persistent });
    listener = l;
    return { close, on: (event: string, fn: (...a: unknown[]) => void) => emitter.on(event, fn) } as never;
  };
  return {
    watch,
    close,
    calls,
    emit: (filename: string | null, event = 'change') => listener!(event, filename),
    fail: (e: Error) => emitter.emit('error', e),
  };
}

function fakeTarget(lastRescanMs = 0) {
  const refresh = vi.fn<(ids: readonly string[]) => void>();
  const rescan = vi.fn<() => void>();
  const target: WatchTarget = { refresh, rescan, lastRescanMs };
  return { target, refresh, rescan };
}

function WatcherHarness({
  dir,
  target,
  options,
}: {
  dir: string;
  target: WatchTarget;
  options: DirectoryWatcherOptions;
}) {
  useDirectoryWatcher(dir, target, options);
  return <Text>watching</Text>;
}

const unmounts: (() => void)[] = [];
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  // React's scheduler hands the rest of its work to a later turn once 5 ms of performance.now()
  // have passed: on a loaded machine an effect could then run after the turn a test awaits. Its
  // clock stands still here, so each turn of the event loop runs every effect due.
  const now = performance.now();
  vi.spyOn(performance, 'now').mockImplementation(() => now);
});
afterEach(() => {
  for (const u of unmounts.splice(0)) u();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

async function mountWatcher(target: WatchTarget, options: DirectoryWatcherOptions) {
  const app = render(<WatcherHarness dir="/captures" target={target} options={options} />);
  unmounts.push(app.unmount);
  await tick();
  return app;
}

describe('useDirectoryWatcher', () => {
  it('watches DIR non-recursively and collects events for 150 ms, then re-reads only the named rollouts', async () => {
    const fw = fakeFsWatch();
    const { target, refresh, rescan } = fakeTarget();
    await mountWatcher(target, { watch: fw.watch, rescanMs: 0 });
    expect(fw.calls).toEqual([{ dir: '/captures', persistent: false }]);

    fw.emit('r1.tokens.jsonl');
    vi.advanceTimersByTime(50);
    fw.emit('r1.tokens.state.json', 'rename');
    fw.emit('r2.tokens.intents');
    fw.emit('r3.tokens.lock'); // lock files never change what the view shows
    fw.emit('.tokens-state-abcd1234', 'rename'); // the temporary copy of a state write
    fw.emit('notes.txt'); // foreign
    vi.advanceTimersByTime(99);
    expect(refresh).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(refresh.mock.calls).toEqual([[['r1', 'r2']]]);
    expect(rescan).not.toHaveBeenCalled();

    // Only ignored names: nothing to do, no timer.
    fw.emit('r3.tokens.lock');
    vi.advanceTimersByTime(1000);
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it('is not starved by a continuous stream of events', async () => {
    const fw = fakeFsWatch();
    const { target, refresh } = fakeTarget();
    await mountWatcher(target, { watch: fw.watch, rescanMs: 0 });
    for (let t = 0; t < 1000; t += 50) {
      fw.emit('busy.tokens.jsonl');
      vi.advanceTimersByTime(50);
    }
    // One re-read per 150 ms window, never more than 150 ms after an event.
    expect(refresh.mock.calls.length).toBeGreaterThanOrEqual(6);
    expect(refresh.mock.calls.every(([ids]) => ids.length === 1 && ids[0] === 'busy')).toBe(true);
  });

  it('rescans the whole directory for nameless events and invalid capture names', async () => {
    const fw = fakeFsWatch();
    const { target, refresh, rescan } = fakeTarget();
    await mountWatcher(target, { watch: fw.watch, rescanMs: 0 });
    fw.emit(null, 'rename');
    fw.emit('r1.tokens.jsonl');
    vi.advanceTimersByTime(150);
    expect(rescan).toHaveBeenCalledTimes(1);
    expect(refresh).not.toHaveBeenCalled(); // the rescan covers r1
    fw.emit('bad id.tokens.jsonl');
    vi.advanceTimersByTime(150);
    expect(rescan).toHaveBeenCalledTimes(2);
  });

  it('rescans every 2 s as a backstop, spaced by ten times the last rescan', async () => {
    const fw = fakeFsWatch();
    const { target, rescan } = fakeTarget();
    await mountWatcher(target, { watch: fw.watch });
    vi.advanceTimersByTime(1999);
    expect(rescan).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(rescan).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(2000);
    expect(rescan).toHaveBeenCalledTimes(2);

    const slow = fakeTarget(1000); // a 1 s rescan (huge directory): every 10 s at most
    await mountWatcher(slow.target, { watch: fakeFsWatch().watch });
    vi.advanceTimersByTime(9999);
    expect(slow.rescan).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(slow.rescan).toHaveBeenCalledTimes(1);
  });

  it('skips the periodic rescan while the last one is still being worked through', async () => {
    const busyTarget = { refresh: vi.fn(), rescan: vi.fn(), busy: true };
    await mountWatcher(busyTarget, { watch: fakeFsWatch().watch });
    vi.advanceTimersByTime(6000);
    expect(busyTarget.rescan).not.toHaveBeenCalled();
    busyTarget.busy = false;
    vi.advanceTimersByTime(2000);
    expect(busyTarget.rescan).toHaveBeenCalledTimes(1);
  });

  it('waits for a running rescan before scheduling the next one', async () => {
    const fw = fakeFsWatch();
    let finish: () => void = () => undefined;
    const rescan = vi.fn(() => new Promise<void>((r) => (finish = r)));
    await mountWatcher({ refresh: vi.fn(), rescan }, { watch: fw.watch, rescanMs: 100 });
    vi.advanceTimersByTime(100);
    expect(rescan).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1000);
    expect(rescan).toHaveBeenCalledTimes(1);
    finish();
    await vi.advanceTimersByTimeAsync(100);
    expect(rescan).toHaveBeenCalledTimes(2);
  });

  it('cleans up on unmount: watcher closed, no timer fires', async () => {
    const fw = fakeFsWatch();
    const { target, refresh, rescan } = fakeTarget();
    const app = await mountWatcher(target, { watch: fw.watch });
    fw.emit('r1.tokens.jsonl');
    app.unmount();
    await tick();
    expect(fw.close).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10_000);
    expect(refresh).not.toHaveBeenCalled();
    expect(rescan).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps the backstop going when the watcher fails or cannot start', async () => {
    const fw = fakeFsWatch();
    const errors: unknown[] = [];
    const { target, rescan } = fakeTarget();
    await mountWatcher(target, { watch: fw.watch, onWatchError: (e) => errors.push(e) });
    fw.fail(new Error('EMFILE'));
    expect(errors).toHaveLength(1);
    expect(fw.close).toHaveBeenCalled();
    vi.advanceTimersByTime(2000);
    expect(rescan).toHaveBeenCalledTimes(1);

    const broken = fakeTarget();
    const throwing: WatchFunction = () => {
      throw new Error('ENOSYS');
    };
    await mountWatcher(broken.target, { watch: throwing, onWatchError: (e) => errors.push(e) });
    expect(errors).toHaveLength(2);
    vi.advanceTimersByTime(2000);
    expect(broken.rescan).toHaveBeenCalledTimes(1);
  });

  it('starts watching once a missing DIR appears, reporting the outage once', async () => {
    const fw = fakeFsWatch();
    const errors: unknown[] = [];
    let exists = false;
    const watch: WatchFunction = (dir, options, l) => {
      if (!exists) throw Object.assign(new Error('ENOENT: no such file or directory'), { code: 'ENOENT' });
      return fw.watch(dir, options, l);
    };
    const { target, refresh } = fakeTarget();
    await mountWatcher(target, { watch, onWatchError: (e) => errors.push(e) });
    vi.advanceTimersByTime(2000);
    vi.advanceTimersByTime(2000);
    expect(errors).toHaveLength(1);
    exists = true;
    vi.advanceTimersByTime(2000);
    expect(fw.calls).toHaveLength(1);
    fw.emit('r1.tokens.jsonl');
    vi.advanceTimersByTime(150);
    expect(refresh).toHaveBeenCalledWith(['r1']);
  });

  it('with the directory model: an event re-reads only the changed rollout', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-watch-hooks-'));
    try {
      await generateStore({ dir }, { rollouts: 5, calls: 2, prompt: 5, gen: 2, turn: 1 });
      const read: string[] = [];
      const model = new DirectoryModel({
        dir,
        readers: {
          readBatch: (store, ids) => {
            read.push(...ids);
            return DEFAULT_READERS.readBatch(store, ids);
          },
        },
      });
      await model.rescan();
      await model.idle();
      expect(read.sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
      read.length = 0;

      const fw = fakeFsWatch();
      await mountWatcher(model, { watch: fw.watch });
      await beginCall({ dir }, 'r3', 'call-late');
      fw.emit('r3.tokens.intents');
      fw.emit('r3.tokens.lock');
      await vi.advanceTimersByTimeAsync(149);
      expect(read).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      await model.idle();
      expect(read).toEqual(['r3']);
      expect(model.row('r3')!.danglingIntents).toEqual(['call-late']);
      model.dispose();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('useDirectoryModel', () => {
  function fakeModel() {
    const listeners = new Set<() => void>();
    let version = 0;
    const state = { ready: true, size: 0, loaded: 0 };
    const model = {
      state,
      dir: '/x',
      get ready() {
        return state.ready;
      },
      get size() {
        return state.size;
      },
      get loaded() {
        return state.loaded;
      },
      subscribe: (l: () => void) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
      snapshot: () => ({ version, ready: state.ready, rows: [] }) as unknown as DirectorySnapshot,
      rescan: vi.fn(async () => undefined),
      refresh: vi.fn(async () => undefined),
      change: () => {
        version++;
        for (const l of listeners) l();
      },
      listeners,
    };
    return model;
  }

  it('hands the view at most one snapshot per throttle window and starts the first scan', async () => {
    const m = fakeModel();
    const seen: number[] = [];
    function Harness() {
      const { snapshot } = useDirectoryModel(m as unknown as DirectoryModel, { throttleMs: 100 });
      seen.push(snapshot.version);
      return <Text>v{snapshot.version}</Text>;
    }
    const app = render(<Harness />);
    unmounts.push(app.unmount);
    await tick();
    expect(m.rescan).toHaveBeenCalledTimes(1);
    const rendersBefore = seen.length;
    for (let i = 0; i < 500; i++) m.change(); // a burst of reads
    await vi.advanceTimersByTimeAsync(0);
    await tick();
    expect(app.lastFrame()).toBe('v500');
    for (let i = 0; i < 500; i++) m.change();
    await vi.advanceTimersByTimeAsync(50);
    await tick();
    expect(app.lastFrame()).toBe('v500'); // inside the window
    await vi.advanceTimersByTimeAsync(50);
    await tick();
    expect(app.lastFrame()).toBe('v1000');
    expect(seen.length - rendersBefore).toBeLessThanOrEqual(4);

    // During the first load (not ready), snapshots are spaced by 250 ms.
    m.state.ready = false;
    await vi.advanceTimersByTimeAsync(300);
    m.change();
    await vi.advanceTimersByTimeAsync(0);
    await tick();
    expect(app.lastFrame()).toBe('v1001'); // the window had passed: at once
    m.change();
    await vi.advanceTimersByTimeAsync(200);
    await tick();
    expect(app.lastFrame()).toBe('v1001');
    await vi.advanceTimersByTimeAsync(50);
    await tick();
    expect(app.lastFrame()).toBe('v1002');
    app.unmount();
    await tick();
    expect(m.listeners.size).toBe(0);
  });

  it('during a load of many rollouts, shows the first rows read at once, not a throttle window later', async () => {
    const m = fakeModel();
    m.state.ready = false;
    m.state.size = 100_000; // snapshots a second apart while loading
    function Harness() {
      const { snapshot } = useDirectoryModel(m as unknown as DirectoryModel, { throttleMs: 100 });
      return <Text>v{snapshot.version}</Text>;
    }
    const app = render(<Harness />);
    unmounts.push(app.unmount);
    await tick();
    m.change(); // the listing: placeholders
    await vi.advanceTimersByTimeAsync(0);
    await tick();
    expect(app.lastFrame()).toBe('v1');
    m.change(); // the stat pass: a snapshot due a window after the last one
    await vi.advanceTimersByTimeAsync(10);
    await tick();
    expect(app.lastFrame()).toBe('v1');
    m.state.loaded = 48; // the first batch read: the first screen's rows
    m.change();
    await vi.advanceTimersByTimeAsync(0);
    await tick();
    expect(app.lastFrame()).toBe('v3');
    // Then the window again.
    m.state.loaded = 176;
    m.change();
    await vi.advanceTimersByTimeAsync(500);
    await tick();
    expect(app.lastFrame()).toBe('v3');
    await vi.advanceTimersByTimeAsync(500);
    await tick();
    expect(app.lastFrame()).toBe('v4');
  });
});

describe('useTerminalSize', () => {
  it('follows resize events and unsubscribes on unmount', async () => {
    const stream = Object.assign(new EventEmitter(), { columns: 80, rows: 24 });
    function Harness() {
      const { columns, rows } = useTerminalSize(stream);
      return (
        <Text>
          {columns}x{rows}
        </Text>
      );
    }
    const app = render(<Harness />);
    await tick();
    expect(app.lastFrame()).toBe('80x24');
    stream.columns = 132;
    stream.rows = 40;
    stream.emit('resize');
    await vi.advanceTimersByTimeAsync(0);
    await tick();
    expect(app.lastFrame()).toBe('132x40');
    app.unmount();
    expect(stream.listenerCount('resize')).toBe(0);
  });
});

describe('useNow', () => {
  it('ticks every interval while ticking, renders nothing each second while not, and reads the clock afresh when ticking starts', async () => {
    let clock = 1000;
    const read = () => clock;
    let renders = 0;
    function Harness({ ticking }: { ticking: boolean }) {
      renders++;
      return <Text>{useNow(read, 1000, ticking)}</Text>;
    }
    const app = render(<Harness ticking={false} />);
    await tick();
    expect(app.lastFrame()).toBe('1000');
    const idle = renders;
    clock = 4000;
    await vi.advanceTimersByTimeAsync(3000);
    await tick();
    // No rows, no ages: not drawn again.
    expect(renders).toBe(idle);
    app.rerender(<Harness ticking />);
    await tick();
    expect(app.lastFrame()).toBe('4000');
    // Between two ticks the value stays (every frame of that second shows the same ages).
    clock = 4500;
    app.rerender(<Harness ticking />);
    await tick();
    expect(app.lastFrame()).toBe('4000');
    await vi.advanceTimersByTimeAsync(1000);
    await tick();
    expect(app.lastFrame()).toBe('4500');
    app.unmount();
  });
});
