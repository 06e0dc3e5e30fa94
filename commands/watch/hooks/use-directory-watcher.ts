/**
 * Keeps the directory model live: a non-recursive `fs.watch` on DIR, whose events are collected
 * for `debounceMs` after the first one and then turned into one re-read of just the rollouts
 * they name (file names classified with the library's `classifyName`). Events without a file
 * name, or naming an invalid capture file, trigger a full rescan; lock files, temporary state
 * files and foreign names are ignored (a state write shows up as the rename onto the state
 * file). A periodic rescan is the backstop for lost events (and for platforms without
 * `fs.watch`); it is spaced by at least ten times its own duration, so a huge directory does
 * not keep the reader busy (10,000 rollouts: a rescan of about 0.25 s, every 2.5 s). Everything is cleaned up on unmount.
 *
 * The window is not restarted by later events: under a continuous stream of writes a change is
 * still re-read within `debounceMs` of its event.
 */
import { watch as fsWatch, type FSWatcher } from 'node:fs';
import { useEffect, useRef } from 'react';
import { classifyName } from '../../../src/layout/scan-directory.js';

/** A periodic rescan waits at least this many times the duration of the last one. */
export const RESCAN_SPACING_FACTOR = 10;

export interface WatchTarget {
  /** Re-read these rollouts (fire and forget). */
  refresh(ids: readonly string[]): void;
  /** Full rescan; the returned promise (if any) delays the next periodic rescan until it ends. */
  rescan(): void | Promise<void>;
  /** Duration of the last rescan in ms (spaces periodic rescans); 0 when unknown. */
  readonly lastRescanMs?: number;
  /** Still working through the last rescan: the periodic one is skipped (events still count). */
  readonly busy?: boolean;
}

export type WatchFunction = (
  dir: string,
  options: { persistent: boolean },
  listener: (event: string, filename: string | Buffer | null) => void,
) => Pick<FSWatcher, 'close' | 'on'>;

export interface DirectoryWatcherOptions {
  /** Collection window after the first event (default 150 ms). */
  debounceMs?: number;
  /** Backstop rescan interval (default 2000 ms); 0 disables it. */
  rescanMs?: number;
  /** `fs.watch` (replaceable in tests). */
  watch?: WatchFunction;
  /** Called when the watcher cannot be started or fails (the backstop rescan keeps going). */
  onWatchError?: (e: unknown) => void;
  enabled?: boolean;
}

export function useDirectoryWatcher(dir: string, target: WatchTarget, options: DirectoryWatcherOptions = {}): void {
  const debounceMs = options.debounceMs ?? 150;
  const rescanMs = options.rescanMs ?? 2000;
  const enabled = options.enabled ?? true;
  const watchFn = options.watch ?? (fsWatch as unknown as WatchFunction);
  // The latest target and error handler, without restarting the watcher when they change.
  const targetRef = useRef(target);
  targetRef.current = target;
  const onErrorRef = useRef(options.onWatchError);
  onErrorRef.current = options.onWatchError;

  useEffect(() => {
    if (!enabled) return;
    let stopped = false;
    const pending = new Set<string>();
    let full = false;
    let window: ReturnType<typeof setTimeout> | undefined;
    let backstop: ReturnType<typeof setTimeout> | undefined;

    const flush = () => {
      window = undefined;
      if (stopped) return;
      if (full) {
        full = false;
        pending.clear();
        void targetRef.current.rescan();
      } else if (pending.size > 0) {
        const ids = [...pending];
        pending.clear();
        targetRef.current.refresh(ids);
      }
    };

    const onEvent = (_event: string, filename: string | Buffer | null) => {
      if (stopped) return;
      if (filename === null || filename === undefined || filename === '') {
        full = true;
      } else {
        const c = classifyName(typeof filename === 'string' ? filename : filename.toString('utf8'));
        if (c.kind === 'capture') {
          if (c.file === 'lock') return;
          pending.add(c.rolloutId);
        } else if (c.kind === 'invalid_name') {
          full = true;
        } else {
          return;
        }
      }
      window ??= setTimeout(flush, debounceMs);
    };

    let watcher: Pick<FSWatcher, 'close' | 'on'> | undefined;
    // Reported once per outage, not on every retry.
    let failing = false;
    const startWatcher = () => {
      try {
        watcher = watchFn(dir, { persistent: false }, onEvent);
        failing = false;
        watcher.on('error', (e: unknown) => {
          onErrorRef.current?.(e);
          try {
            watcher?.close();
          } catch {
            // already closed
          }
          watcher = undefined;
        });
      } catch (e) {
        if (!failing) onErrorRef.current?.(e);
        failing = true;
      }
    };
    startWatcher();

    const schedule = () => {
      if (stopped || rescanMs <= 0) return;
      const spacing = Math.max(rescanMs, RESCAN_SPACING_FACTOR * (targetRef.current.lastRescanMs ?? 0));
      backstop = setTimeout(() => {
        backstop = undefined;
        if (stopped) return;
        // A DIR that was missing at start (or a watcher that failed) gets another chance on
        // every backstop rescan: once DIR exists, events flow again.
        if (!watcher) startWatcher();
        if (targetRef.current.busy) {
          schedule();
          return;
        }
        let done: void | Promise<void>;
        try {
          done = targetRef.current.rescan();
        } catch {
          done = undefined;
        }
        if (done && typeof done.then === 'function') done.then(schedule, schedule);
        else schedule();
      }, spacing);
    };
    schedule();

    return () => {
      stopped = true;
      if (window !== undefined) clearTimeout(window);
      if (backstop !== undefined) clearTimeout(backstop);
      try {
        watcher?.close();
      } catch {
        // already closed
      }
    };
  }, [dir, debounceMs, rescanMs, enabled, watchFn]);
}
