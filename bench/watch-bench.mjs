// The `watch` section of `npm run bench`: stores of many small rollouts, and on each,
// in the same rounds, `inspect --json` (the yardstick), `watch --once --json` as a whole process,
// and the live view's load in a real 140x40 terminal (bench/watch-live.mjs, tmux): time to the
// first rows, to a screen of read rows, and to "up to date". The goals are printed beside the
// figures; nothing is asserted.
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIVE = join(resolve(dirname(fileURLToPath(import.meta.url))), 'watch-live.mjs');

/** The store shape: one call of 8 prompt tokens, 2 generated, 2 per turn. */
const shape = (n) => ['--rollouts', String(n), '--calls', '1', '--prompt', '8', '--gen', '2', '--turn', '2'];

export const WATCH_STORES = [
  { name: 'watch-10k', args: shape(10_000), what: 'watch' },
  ...(process.env.BENCH_SKIP_100K ? [] : [{ name: 'watch-100k', args: shape(100_000), what: 'watch' }]),
];

function tmuxAvailable() {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The jobs of a watch store. A job with `figures` prints one JSON line of its own timings; the
 * medians of those are reported instead of the process's wall time.
 */
export function watchJobs(dir, tokcap) {
  const jobs = [
    { label: 'inspect --json', argv: tokcap('inspect', dir, '--json') },
    { label: 'watch --once --json', argv: tokcap('watch', dir, '--once', '--json') },
  ];
  if (tmuxAvailable()) {
    jobs.push({ label: 'watch, live (tmux 140x40)', argv: [process.execPath, LIVE, dir], figures: true });
    // The load measured with the pane polled (a tmux process capturing it every 20 ms, on the
    // cores the watch runs on): to compare with figures taken that way.
    jobs.push({
      label: 'watch, live, polled (tmux 140x40)',
      argv: [process.execPath, LIVE, dir, '--polled', '--no-writers', '--no-keys'],
      figures: true,
    });
    jobs.push({
      label: 'floor: a trivial Ink list (tmux 140x40)',
      argv: [process.execPath, LIVE, dir, '--floor'],
      figures: true,
    });
    // The same list loaded as the watch loads Ink (one bundle, React's production build): the
    // floor of the first rows. Without writers: its key times are the floor above's business.
    jobs.push({
      label: 'floor: the same list, bundled (tmux 140x40)',
      argv: [process.execPath, LIVE, dir, '--floor-bundled', '--no-writers'],
      figures: true,
    });
  } else process.stderr.write('watch bench: tmux not installed, the live rows are left out\n');
  return jobs;
}

const fmt = (ms) =>
  ms === undefined || ms === null ? '–' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
const mb = (kb) => (kb ? `${(kb / 1024).toFixed(0)} MB` : '–');
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : '–');

/** Markdown lines for one watch store's results (rows as returned by measureAll). */
export function watchTable(rows) {
  const inspect = rows.find((r) => r.label === 'inspect --json');
  const once = rows.find((r) => r.label === 'watch --once --json');
  const live = rows.find((r) => r.label === 'watch, live (tmux 140x40)');
  const polled = rows.find((r) => r.label === 'watch, live, polled (tmux 140x40)')?.figures;
  const floor = rows.find((r) => r.label === 'floor: a trivial Ink list (tmux 140x40)')?.figures;
  const bundledFloor = rows.find((r) => r.label === 'floor: the same list, bundled (tmux 140x40)')?.figures;
  const out = [];
  out.push('| what | median | × inspect --json | goal (at 100k) | CPU (user+sys) | peak RSS |');
  out.push('|---|---:|---:|---|---:|---:|');
  out.push(`| inspect --json | ${fmt(inspect?.ms)} | 1.00× | | ${fmt(inspect?.cpuMs)} | ${mb(inspect?.rssKb)} |`);
  out.push(
    `| watch --once --json | ${fmt(once?.ms)} | ${ratio(once?.ms, inspect?.ms)} | ≤ 2× inspect; RSS ≤ 250 MB | ${fmt(once?.cpuMs)} | ${mb(once?.rssKb)} |`,
  );
  if (live) {
    const f = live.figures;
    out.push(`| live: first rows listed | ${fmt(f.firstRowsMs)} | ${ratio(f.firstRowsMs, inspect?.ms)} | | | |`);
    out.push(
      `| live: first screen of read rows | ${fmt(f.screenMs)} | ${ratio(f.screenMs, inspect?.ms)} | ≤ 1.5 s | | |`,
    );
    out.push(
      `| live: "up to date" | ${fmt(f.upToDateMs)} | ${ratio(f.upToDateMs, inspect?.ms)} | ≤ 3× inspect | | ${mb(f.rssKb)} |`,
    );
    // Key times: from the key to the pane's output that drew its frame (bench/tmux-control.mjs).
    out.push(`| live: key to frame during the load | ${fmt(f.keyToFrameMs)} | | | | |`);
    out.push(
      `| live: key to frame while 4 writers append, median (max) | ${fmt(f.writersKeyToFrameMs)} (${fmt(f.writersKeyToFrameMaxMs)}) | | < 50 ms | | |`,
    );
  }
  if (polled) {
    out.push(
      `| live, the pane polled every 20 ms: first screen of read rows | ${fmt(polled.screenMs)} | ${ratio(polled.screenMs, inspect?.ms)} | | | |`,
    );
    out.push(
      `| live, the pane polled every 20 ms: "up to date" | ${fmt(polled.upToDateMs)} | ${ratio(polled.upToDateMs, inspect?.ms)} | | | ${mb(polled.rssKb)} |`,
    );
  }
  if (floor) {
    // bench/ink-floor.mjs in the same harness: what start-up, tmux, Node and Ink cost alone
    // (Ink and React from their modules, React's development build).
    out.push(
      `| floor, a trivial Ink list (Ink from its modules): first rows listed | ${fmt(floor.firstRowsMs)} | | | | |`,
    );
    out.push(`| floor, a trivial Ink list: key to frame, idle | ${fmt(floor.keyToFrameMs)} | | | | |`);
    out.push(
      `| floor, a trivial Ink list: key to frame while 4 writers append, median (max) | ${fmt(floor.writersKeyToFrameMs)} (${fmt(floor.writersKeyToFrameMaxMs)}) | | | | |`,
    );
  }
  // The same app loaded as the watch loads Ink: what the first screen is read against.
  if (bundledFloor)
    out.push(
      `| floor, the same list bundled as the live view (Ink from one bundle): first rows listed | ${fmt(bundledFloor.firstRowsMs)} | | | | |`,
    );
  return out;
}
