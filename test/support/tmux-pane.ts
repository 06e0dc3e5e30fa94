/**
 * A real terminal for the watch tests: a tmux server of its own (a socket per test file), one
 * detached session whose pane runs a script, read back with `capture-pane`. Waits are for what
 * the pane shows, bounded only to fail a broken run with the pane in the message (a test never
 * asserts how long something took).
 */
import { execFileSync } from 'node:child_process';
import { cleanEnv } from './cli.js';

export interface TmuxPane {
  /** Runs a tmux command on this server. */
  tmux(...args: string[]): string;
  /** Starts the session `name` running `script` in a `width`x`height` pane (CI=false: Ink renders as for a person). */
  start(name: string, script: string, width: number, height: number): void;
  capture(name: string): string;
  keys(name: string, ...keys: string[]): void;
  /** The pane once `check` holds (fails after `limitMs`, showing the pane). */
  until(name: string, what: string, check: (pane: string) => boolean, limitMs?: number): Promise<string>;
  kill(): void;
}

/** Fails with instructions when tmux is missing (`.ci/run` installs it). */
export function requireTmux(): void {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'tmux is not installed: the watch end-to-end tests drive a real terminal through tmux. Install it (Debian: apt-get install tmux; .ci/run does this).',
    );
  }
}

export function tmuxServer(socket: string): TmuxPane {
  const tmux = (...args: string[]) =>
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], {
      encoding: 'utf8',
      env: cleanEnv({ LANG: 'C.UTF-8' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const capture = (name: string) => tmux('capture-pane', '-p', '-t', name);
  return {
    tmux,
    capture,
    start(name, script, width, height) {
      tmux(
        '-u',
        'new-session',
        '-d',
        '-s',
        name,
        '-x',
        String(width),
        '-y',
        String(height),
        '-e',
        'CI=false',
        '-e',
        'LANG=C.UTF-8',
        '-e',
        'NO_COLOR=',
        script,
      );
    },
    keys(name, ...keys) {
      for (const k of keys) tmux('send-keys', '-t', name, k);
    },
    async until(name, what, check, limitMs = 120_000) {
      const t0 = performance.now();
      for (;;) {
        const pane = capture(name);
        if (check(pane)) return pane;
        if (performance.now() - t0 > limitMs) throw new Error(`the pane never showed ${what}; it shows:\n${pane}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    kill() {
      try {
        tmux('kill-server');
      } catch {
        // no server left
      }
    },
  };
}

/** The line of rollout `id` in the directory view ('' when it is not on screen). */
export function rowOf(pane: string, id: string): string {
  return pane.split('\n').find((l) => new RegExp(`^[ ›][ •]${id} `).test(l)) ?? '';
}
