import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import type { CliIo, CommandContext } from '../../commands/cli/context.js';
import type { CommandLoaders } from '../../commands/cli/program.js';
import { COMMAND_NAMES, type CommandName } from '../../commands/cli/options.js';
import { run } from '../../commands/cli/run.js';
import { stampHolds } from '../../scripts/bundle-stamp.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'tokcap.js');

export interface FakeStream {
  text: string;
  isTTY?: boolean;
  columns?: number;
  write(s: string | Uint8Array): boolean;
}

export function fakeStream(isTTY = false): FakeStream {
  return {
    text: '',
    isTTY,
    columns: 100,
    write(s: string | Uint8Array) {
      this.text += typeof s === 'string' ? s : Buffer.from(s).toString('utf8');
      return true;
    },
  };
}

export interface FakeIo extends CliIo {
  stdout: FakeStream;
  stderr: FakeStream;
}

export function fakeIo(
  opts: { env?: NodeJS.ProcessEnv; stdin?: string; stdoutTTY?: boolean; stderrTTY?: boolean } = {},
): FakeIo {
  return {
    stdout: fakeStream(opts.stdoutTTY ?? false),
    stderr: fakeStream(opts.stderrTTY ?? false),
    stdin: Readable.from(opts.stdin === undefined ? [] : [Buffer.from(opts.stdin)]),
    env: opts.env ?? {},
  };
}

/**
 * A stdout that is a pipe with a slower reader: a Node stream taking `highWaterMark` bytes at
 * once, each chunk written out a timer later. `mostQueued`: the most bytes it ever held unwritten
 * (a writer that ignores its backpressure queues the whole output there).
 */
export class SlowStdout extends Writable implements FakeStream {
  text = '';
  mostQueued = 0;
  isTTY = false;
  columns = 100;
  constructor(highWaterMark = 256) {
    super({
      highWaterMark,
      write: (chunk: Buffer, _encoding, done) => {
        this.mostQueued = Math.max(this.mostQueued, this.writableLength);
        this.text += chunk.toString('utf8');
        setTimeout(done, 1);
      },
    });
  }
}

/** Loaders whose modules record the context they were run with (and optionally act on it). */
export function recordingLoaders(act?: (ctx: CommandContext) => void | Promise<void>): {
  loaders: CommandLoaders;
  loaded: CommandName[];
  contexts: CommandContext[];
} {
  const loaded: CommandName[] = [];
  const contexts: CommandContext[] = [];
  const loaders = Object.fromEntries(
    COMMAND_NAMES.map((name) => [
      name,
      async () => {
        loaded.push(name);
        return {
          run: async (ctx: CommandContext) => {
            contexts.push(ctx);
            await act?.(ctx);
          },
        };
      },
    ]),
  ) as unknown as CommandLoaders;
  return { loaders, loaded, contexts };
}

/** Runs the CLI in-process: `cli(['inspect', 'dir'])`. */
export async function cli(args: string[], io: FakeIo = fakeIo(), loaders?: CommandLoaders) {
  const code = await run(['node', 'tokcap', ...args], { io, loaders });
  return { code, stdout: io.stdout.text, stderr: io.stderr.text, io };
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name))
      newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Makes sure dist/ holds a build of the current sources and bundles made from that build (`npm
 * test` builds both first; a bare `vitest run test/cli` may not have): bin/tokcap.js loads the
 * bundles as built, so a tsc here is followed by the bundle scripts, as are bundles whose stamp no
 * longer holds (scripts/bundle-stamp.mjs). Compile errors elsewhere in src/ do not stop tsc emitting.
 */
export async function ensureBuilt(): Promise<void> {
  const out = join(ROOT, 'dist', 'commands', 'cli', 'run.js');
  const fresh =
    existsSync(out) &&
    statSync(out).mtimeMs >= Math.max(newestMtime(join(ROOT, 'commands')), newestMtime(join(ROOT, 'src')));
  if (!fresh) {
    await execa('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, reject: false });
    if (!existsSync(out)) throw new Error('dist/commands/cli/run.js missing after tsc');
  }
  for (const [script, stamps] of [
    ['bundle-view.mjs', [join('commands', 'watch', 'live.bundle.json')]],
    ['bundle-cli.mjs', [join('cli', 'bundle.json'), join('cli', 'read-worker.json')]],
  ] as const) {
    if (fresh && stamps.every((stamp) => stampHolds(join(ROOT, 'dist', stamp)))) continue;
    const made = await execa('node', [join(ROOT, 'scripts', script)], { cwd: ROOT, reject: false });
    if (made.exitCode !== 0) throw new Error(`scripts/${script} failed: ${made.stderr}`);
  }
}

/** ensureBuilt: the live view's bundle is part of every build. */
export const ensureViewBundle = ensureBuilt;

/** ensureBuilt: the command line's bundle is part of every build. */
export const ensureCliBundle = ensureBuilt;

/** Whether the command line's bundle in dist/cli/ was made from what is in dist/ now. */
export function cliBundleHolds(): boolean {
  return stampHolds(join(ROOT, 'dist', 'cli', 'bundle.json'));
}

/** The environment of a spawned tokcap, without TOKCAP_DIR / NO_COLOR / TOKCAP_DEBUG from the outer shell. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !['TOKCAP_DIR', 'NO_COLOR', 'TOKCAP_DEBUG', 'FORCE_COLOR'].includes(k)) env[k] = v;
  }
  return { ...env, ...extra };
}
