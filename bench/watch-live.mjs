#!/usr/bin/env node
// The live view's load as a person sees it: `tokcap watch DIR` (the built binary) in a detached
// tmux terminal of 140x40 on a private server, the pane captured every few milliseconds from
// the moment the session is started. Prints one JSON line:
//   firstRowsMs   first pane that lists rollout rows (ids, states possibly still "…")
//   screenMs      first pane whose whole list area shows read rows (every visible row has a state)
//   upToDateMs    first pane whose status line says "up to date" (every rollout read)
//   rssKb         the watch process's peak RSS (VmHWM) when "up to date" showed
//   keyToFrameMs  median time from a key (j/k) to the pane showing its effect, during the load
//   writersKeyToFrameMs  the same (median and max), once up to date, while 4 Python writers
//                 (test/support/py_store.py) append to 8 new rollouts each; those rollouts' files
//                 are removed afterwards, so DIR is left as it was
// The pane is watched through a tmux control-mode client (bench/tmux-control.mjs): each time the
// pane writes output it is captured on that connection, and a stage's time is the output after
// which the capture shows it; a key is sent on the same connection, and its time runs to the
// output after which the selection has moved. So times include tmux's own passing of the key and
// of the output (~1 ms), not a poll's interval, and the harness spends no CPU while the pane is
// still. --polled captures the pane with a tmux process every 20 ms instead (~50 such processes
// a second on the cores the watch runs on), which adds ~70 ms to each key's time (the floor's
// too) and slows the load: kept to compare with figures taken that way.
// Times include Node's start-up, as a person's wait does. Not a test: nothing is asserted.
// With --floor the terminal runs bench/ink-floor.mjs (the smallest Ink list, reading no files)
// instead of the watch, and only the key times are taken (keyToFrameMs: with nothing else
// running): the harness's own floor, to read the watch's key times against. It loads Ink and
// React from their ~600 modules, and React's development build (~0.3 s more than the watch pays
// before its first frame). With --floor-bundled it runs the same app from a bundle made as the
// live view's is (scripts/bundle-settings.mjs, built here before the clock starts) with React's
// production build, as `tokcap watch` loads them: the floor of the watch's first rows.
// With --no-keys no key is pressed during the load (keyToFrameMs stays null): each key costs the
// view a frame, and with rows on screen sooner (a first screen of the listing's first part) keys
// come sooner, while the rest of the load runs; this tells that cost apart from the load's own.
// Usage: node bench/watch-live.mjs DIR [--timeout SECONDS] [--no-writers] [--floor | --floor-bundled] [--no-keys] [--polled]   (needs tmux,
// python3 and the compiled build)
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TmuxControl } from './tmux-control.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'tokcap.js');
const WIDTH = 140;
const HEIGHT = 40;
/** Rows of the list area: the frame is HEIGHT - 1 lines, minus the footer and 5 header lines. */
const LIST_ROWS = HEIGHT - 1 - 1 - 5;

const FLOOR_APP = join(ROOT, 'bench', 'ink-floor.mjs');
/** Key presses the floor takes with nothing else running. */
const FLOOR_KEYS = 15;

const PY_STORE = join(ROOT, 'test', 'support', 'py_store.py');
/** The writers' rollouts: a prefix no fixture uses, removed before and after. */
const WRITER_PREFIX = 'zzbenchw';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    timeout: { type: 'string', default: '600' },
    'no-writers': { type: 'boolean', default: false },
    'no-keys': { type: 'boolean', default: false },
    floor: { type: 'boolean', default: false },
    'floor-bundled': { type: 'boolean', default: false },
    polled: { type: 'boolean', default: false },
  },
});
const floor = values.floor || values['floor-bundled'];
const dir = positionals[0];
if (!dir) {
  console.error('usage: node bench/watch-live.mjs DIR [--timeout SECONDS]');
  process.exit(2);
}
const timeoutMs = Number(values.timeout) * 1000;
const socket = `tokcap-bench-watch-${process.pid}`;
const env = { ...process.env, LANG: 'C.UTF-8' };
delete env.TMUX;
const TMUX_ARGS = ['-L', socket, '-f', '/dev/null'];
const tmux = (...args) => execFileSync('tmux', [...TMUX_ARGS, ...args], { encoding: 'utf8', env });
/** --polled: between two captures (the poller must not take a core from the view it measures). */
const POLL_MS = 20;
/** Without output, the pane is captured again after this long (for the timeout). */
const STILL_MS = 250;

/** A row line: selection mark, change mark, id, then a state word or the not-yet-read "…". */
const ROW = /^[ ›][ •](\S+) +(live|frozen|retired|unavailable|…) /;
const rowsOf = (pane) => pane.split('\n').flatMap((l) => (ROW.test(l) ? [ROW.exec(l)] : []));

/** bench/ink-floor.mjs bundled as scripts/bundle-view.mjs bundles the live view (a temporary file). */
async function bundledFloor() {
  const [{ build }, { inkInBundle, NODE_BUNDLE }] = await Promise.all([
    import('esbuild'),
    import('../scripts/bundle-settings.mjs'),
  ]);
  const out = join(mkdtempSync(join(tmpdir(), 'tokcap-bench-floor-')), 'ink-floor.bundle.mjs');
  await build({
    entryPoints: [FLOOR_APP],
    ...NODE_BUNDLE,
    metafile: false,
    absWorkingDir: ROOT,
    outfile: out,
    plugins: [{ name: 'ink', setup: inkInBundle }],
  });
  return out;
}

const removeWriterFiles = () => {
  for (const n of readdirSync(dir)) if (n.startsWith(WRITER_PREFIX)) rmSync(join(dir, n), { force: true });
};
removeWriterFiles();

const result = {
  firstRowsMs: null,
  screenMs: null,
  upToDateMs: null,
  rssKb: null,
  keyToFrameMs: null,
  writersKeyToFrameMs: null,
  writersKeyToFrameMaxMs: null,
};
// Before the clock starts.
const floorApp = values['floor-bundled'] ? await bundledFloor() : FLOOR_APP;
const t0 = performance.now();
const app = floor
  ? `${JSON.stringify(floorApp)} ${LIST_ROWS}`
  : `${JSON.stringify(BIN)} watch ${JSON.stringify(resolve(dir))}`;
// React's production build for the bundled floor, as `tokcap watch` sets for itself.
const floorEnv = values['floor-bundled'] ? ['-e', 'NODE_ENV=production'] : [];
tmux(
  'new-session',
  '-d',
  '-s',
  'w',
  '-x',
  String(WIDTH),
  '-y',
  String(HEIGHT),
  '-e',
  'CI=false',
  '-e',
  'NO_COLOR=1',
  ...floorEnv,
  `exec ${JSON.stringify(process.execPath)} ${app}`,
);
const pid = Number(tmux('list-panes', '-t', 'w', '-F', '#{pane_pid}').trim());
// If this harness is killed (a SIGTERM, `timeout`) its `finally` does not run, and the tmux server
// and the watch inside would go on reading the directory: a detached watchdog ends them.
spawn(
  'sh',
  ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; tmux -L ${socket} kill-server 2>/dev/null`],
  { detached: true, stdio: 'ignore', env },
).unref();
const peakRssKb = () => {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) || null;
  } catch {
    return null;
  }
};

const keyTimes = [];
let lastKeyAt = 0;
const control = new TmuxControl(TMUX_ARGS, 'w', env);
await control.ready;
const capture = async () => (await control.command('capture-pane -p -t w')).join('\n');
let outputsSeen = -1;

/**
 * The pane once it has changed, and the time it showed that (ms since t0): the output after which
 * it is captured (with --polled: the next poll).
 */
async function nextPane() {
  if (values.polled) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    return { pane: tmux('capture-pane', '-p', '-t', 'w'), at: performance.now() - t0 };
  }
  await control.outputAfter(outputsSeen, STILL_MS);
  outputsSeen = control.outputs;
  const at = (outputsSeen > 0 ? control.lastOutputAt : performance.now()) - t0;
  return { pane: await capture(), at };
}

/**
 * Sends j or k (away from the edge) and resolves with the time until another rollout is
 * selected on screen: until the pane's output after which a capture shows it.
 */
async function pressAndWait() {
  const paneRows = async () => rowsOf(await capture());
  const selected = (rows) => rows.find((r) => r[0].startsWith('›'));
  const rows = await paneRows();
  const before = selected(rows);
  let seen = control.outputs;
  const s = performance.now();
  // Rows move while writers write, the selection stays on its rollout: compare ids, not lines.
  void control.command(`send-keys -t w ${!before || rows.indexOf(before) === 0 ? 'j' : 'k'}`);
  for (;;) {
    await control.outputAfter(seen, 5000);
    seen = control.outputs;
    const outputAt = control.lastOutputAt;
    const now = selected(await paneRows());
    if (now && now[1] !== before?.[1]) return outputAt - s;
    if (performance.now() - s > 5000) return performance.now() - s;
  }
}

/** Key-to-frame once loaded, while 4 writers append (each to 8 rollouts of its own). */
async function underWriters() {
  const log = mkdtempSync(join(tmpdir(), 'tokcap-bench-writers-'));
  const writers = [0, 1, 2, 3].map((w) => {
    const ids = Array.from({ length: 8 }, (_, i) => `${WRITER_PREFIX}${w}x${i}`).join(',');
    return spawn(
      'python3',
      [
        PY_STORE,
        resolve(dir),
        'writer',
        '--rollouts',
        ids,
        '--seconds',
        '6',
        '--seed',
        String(w + 1),
        '--log',
        join(log, `w${w}`),
      ],
      { stdio: 'ignore' },
    );
  });
  const done = Promise.all(writers.map((c) => new Promise((r) => c.once('close', r))));
  const times = [];
  await new Promise((r) => setTimeout(r, 500));
  const until = performance.now() + 4500;
  while (performance.now() < until) {
    times.push(await pressAndWait());
    await new Promise((r) => setTimeout(r, 100));
  }
  await done;
  rmSync(log, { recursive: true, force: true });
  return times;
}

try {
  if (floor) {
    // No load to wait for: the first rows, then keys at the pace the load loop presses them.
    for (;;) {
      const { pane, at } = await nextPane();
      if (rowsOf(pane).length >= 2) {
        result.firstRowsMs = at;
        break;
      }
      if (performance.now() - t0 > timeoutMs) throw new Error('the floor app drew no rows');
    }
    for (let k = 0; k < FLOOR_KEYS; k++) {
      keyTimes.push(await pressAndWait());
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  for (let k = 0; !floor; k++) {
    const { pane, at } = await nextPane();
    const rows = rowsOf(pane);
    if (result.firstRowsMs === null && rows.length > 0) result.firstRowsMs = at;
    if (result.screenMs === null && rows.length >= LIST_ROWS && rows.every((r) => r[2] !== '…')) result.screenMs = at;
    if (pane.includes('up to date')) {
      result.upToDateMs = at;
      result.rssKb = peakRssKb();
      break;
    }
    if (performance.now() - t0 > timeoutMs)
      throw new Error(`no "up to date" after ${timeoutMs} ms; the pane shows:\n${pane}`);
    // During the load, now and then: a key, and the time until the selection moved on screen.
    if (!values['no-keys'] && rows.length >= 2 && performance.now() - t0 - lastKeyAt > 500) {
      keyTimes.push(await pressAndWait());
      lastKeyAt = performance.now() - t0;
    }
  }
  if (!values['no-writers']) {
    const times = (await underWriters()).sort((a, b) => a - b);
    if (times.length > 0) {
      result.writersKeyToFrameMs = times[Math.floor(times.length / 2)];
      result.writersKeyToFrameMaxMs = times[times.length - 1];
    }
  }
  tmux('send-keys', '-t', 'w', 'q');
} finally {
  control.close();
  try {
    tmux('kill-server');
  } catch {
    // the server ended with its session
  }
  removeWriterFiles();
  if (floorApp !== FLOOR_APP) rmSync(dirname(floorApp), { recursive: true, force: true });
}
if (keyTimes.length > 0) result.keyToFrameMs = [...keyTimes].sort((a, b) => a - b)[Math.floor(keyTimes.length / 2)];
for (const k of Object.keys(result))
  if (typeof result[k] === 'number' && k !== 'rssKb') result[k] = Math.round(result[k]);
console.log(JSON.stringify(result));
