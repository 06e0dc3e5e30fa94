/**
 * `tokcap watch DIR` on a terminal starts its read worker, the worker's listing of DIR, and the
 * loading of the live view (Ink, React) before the command line is parsed: loading commander and
 * the command modules takes this thread ~0.2-0.4 s, and the listing (~0.6 s at 100,000 rollouts)
 * and the view (~0.3 s) are on the first screen's path.
 *
 * Only when DIR is plain to see in the plan (../cli/plan.ts), with no option but those that leave
 * the live view a live view. The command takes the worker if its DIR is that same string
 * (`takeEarlyWorkers`); otherwise the worker is stopped, and nothing was read but names and
 * mtimes. The view is the live view's whatever its DIR (`takeEarlyView`).
 */
import { createWorkerReaders, type WorkerReaders } from '../../src/watch/worker-readers.js';
import { loadLiveView } from './view-loader.js';
import { plainDir, type Plan } from '../cli/plan.js';
import type { Settings } from '../cli/settings.js';
import type { GlobalOptions, WatchCommandOptions } from '../cli/options.js';
import { readWorkerUrl } from './read-worker-url.js';

/** Options that change nothing of the above. */
const KEEPS: readonly (keyof (GlobalOptions & WatchCommandOptions))[] = ['allowEmpty', 'quiet', 'color', 'lockWait'];

let early: { dir: string; workers: WorkerReaders; at: number } | undefined;
let earlyView: ReturnType<typeof loadLiveView> | undefined;

/** `env`: the process's, where NODE_ENV is set for React. */
export function startEarly(plan: Plan, settings: Settings, env: NodeJS.ProcessEnv, stdoutIsTTY: boolean): void {
  if (!stdoutIsTTY || settings.threads === 1) return;
  const dir = plainDir(plan, settings, KEEPS);
  if (dir === undefined) return;
  const workers = createWorkerReaders(readWorkerUrl());
  workers.prefetch(dir);
  early = { dir, workers, at: performance.now() };
  // The view (Ink and React) loads meanwhile as well: this thread reads and compiles it while the
  // command modules' files are read. React picks its build from NODE_ENV when it is first
  // loaded, so the live view's default (see ./watch.ts) is set here already.
  env.NODE_ENV ??= 'production';
  earlyView = loadLiveView();
  // Not taken (the command failed first): nobody waits for it.
  earlyView.catch(() => undefined);
}

/** The live view, loading since `startEarly` (once), or undefined. */
export function takeEarlyView(): ReturnType<typeof loadLiveView> | undefined {
  const taken = earlyView;
  earlyView = undefined;
  return taken;
}

/**
 * The workers started early for `dir` (once), or undefined; workers started for another DIR are
 * stopped. `trace` (TOKCAP_TRACE) is told when their listing was asked for.
 */
export function takeEarlyWorkers(dir: string, trace?: (event: string) => void): WorkerReaders | undefined {
  const taken = early;
  early = undefined;
  if (taken === undefined) return undefined;
  if (taken.dir === dir) {
    trace?.(`watch: listing asked for at ${taken.at.toFixed(1)} ms`);
    return taken.workers;
  }
  void taken.workers.close(0);
  return undefined;
}
