/**
 * The `CommandContext` handed to every command module's `run(ctx)`: the resolved inputs (dir,
 * ids, typed options) and the only ways a command talks to the outside world (stdout, stderr,
 * progress, styles, exit code). Commands never touch process.stdout, process.exit or chalk.
 */
import type { CommandName, CommandOptionsMap, GlobalOptions } from './options.js';
import { EXIT_OK, errorJson, exitCodeFor, formatErrorReport, type ErrorJson, type ExitCode } from './errors.js';
import { createStyles, colorLevel, safeOutput, type Styles } from '../render/styles.js';
import { ProgressLine, noProgress, type ProgressFactory } from '../render/progress.js';
import {
  byteStream,
  JsonDocument,
  type ByteStream,
  type JsonArrayWriter,
  type JsonMapWriter,
  type OutStream,
} from './json-output.js';

export type { OutStream } from './json-output.js';
import { renderTable, type Column } from '../render/table.js';
import type { Shard } from '../../src/layout/shard.js';
import type { ThreadOptions } from '../../src/threads/parallel-rollouts.js';
import type { StoreOptions } from '../../src/ops/store.js';
import { readSettings, type Settings } from './settings.js';

/** Everything the CLI uses from the process; injectable for in-process tests. */
export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}

/** Exit-code accumulator: the highest code raised wins (docs/cli.md#exit-codes). */
export class ExitCodeAccumulator {
  private code: ExitCode = EXIT_OK;
  get value(): ExitCode {
    return this.code;
  }
  raise(code: ExitCode): void {
    if (code > this.code) this.code = code;
  }
}

export type { ByteStream, JsonArrayWriter, JsonMapWriter };

export interface CommandContext<N extends CommandName = CommandName> {
  readonly command: N;
  /** The capture directory (DIR, else $TOKCAP_DIR). Empty string only for `completion`. */
  readonly dir: string;
  /**
   * Rollout ids: positional ones, then those of --ids-from, duplicates dropped, order kept.
   * Already batch-validated unless the command's idValidation says otherwise (build; freeze
   * --json), in which case the command must validate them itself.
   */
  readonly ids: readonly string[];
  /** Ids were given (positionally or by --ids-from). When false, read-only commands cover every rollout. */
  readonly idsGiven: boolean;
  /**
   * `--shard`, resolved (`auto` already replaced by K/N from the environment); `ids` are already
   * those of the shard. Undefined: no --shard (the whole store).
   */
  readonly shard: Shard | undefined;
  /** The raw positional arguments as commander parsed them (completion: [SHELL]). */
  readonly positionals: readonly string[];
  readonly options: Readonly<GlobalOptions & CommandOptionsMap[N]>;
  /** DIR and --lock-wait as the library takes them (the wait in whole milliseconds). */
  readonly store: StoreOptions & { readonly lockWaitMs: number };
  /** The environment's settings (./settings.ts). */
  readonly settings: Settings;
  readonly env: NodeJS.ProcessEnv;
  readonly stdin: NodeJS.ReadableStream;
  readonly tty: { readonly stdout: boolean; readonly stderr: boolean };
  /** Standard output's size when it is a terminal that says (undefined otherwise). */
  readonly terminal: { readonly columns: number | undefined; readonly rows: number | undefined };
  readonly styles: Styles;
  readonly exitCode: ExitCodeAccumulator;
  /**
   * How many threads the library's jobs may use (TOKCAP_WORKERS), and, under TOKCAP_DEBUG=1, a
   * stderr line saying how many worker threads each job started. Passed to the library as is.
   */
  readonly threads: ThreadOptions;

  /**
   * Writes one line (a newline is added) of human output to stdout. No-op under --json and under
   * --quiet (docs/cli.md#quiet: only error lines; the exit code carries the outcome).
   * Control characters in it are shown escaped (docs/cli.md#terminal-safety); colour from
   * `styles` passes.
   */
  out(text: string): void;
  /** Writes THE json document to stdout (compact, one line) under --json; no-op otherwise. Once per run. */
  json(value: unknown): void;
  /**
   * THE json document as an array written element by element (the same bytes as `json(array)`),
   * so a large result set is never held whole. `push` serialises first and throws before
   * writing anything if the element cannot be written. Under --json only; no-op otherwise.
   * `end()` must be called (an empty array prints `[]`). Instead of `json`, once per run.
   * With `within`, the array is the member `key` of an object whose other members are `head`'s
   * (a sharded run's report: `{"shard": ..., "results": [...]}`).
   */
  jsonArray(within?: { head: Record<string, unknown>; key: string }): JsonArrayWriter;
  /**
   * THE json document as an object one member of which, `key`, is a map written entry by entry:
   * `head`'s members, then `key`, then the members given to `end` (the same bytes as
   * `json({ ...head, [key]: Object.fromEntries(entries), ...tail })`, entries in the order
   * given), so a map of every rollout is never held whole. Under --json only; no-op otherwise.
   * Instead of `json`, once per run.
   */
  jsonMap(head: Record<string, unknown>, key: string): JsonMapWriter;
  /**
   * Standard output as a byte stream, for a command whose data goes there (`export --out -`)
   * instead of human or JSON output: `write` resolves once stdout can take more (after 'drain'
   * when it buffers), so a slow reader slows the producer instead of filling memory.
   */
  stdoutStream(): ByteStream;
  /** Writes one line to stderr, always (even with --quiet). */
  err(line: string): void;
  /** `tokcap: warning: <line>` on stderr; suppressed by --quiet. */
  warn(line: string): void;
  /** Starts a progress bar on stderr (no-op unless stderr is a TTY and not --quiet/--json). */
  progress: ProgressFactory;
  /** Raises the exit code (highest wins). Same as `exitCode.raise`. */
  raise(code: ExitCode): void;
  /**
   * Reports a per-rollout failure and keeps going: writes the one-line error on stderr, raises
   * the exit code for its kind, and returns the inline JSON form to put in the --json output.
   */
  fail(e: unknown, rolloutId?: string): ErrorJson;
  /** A table in the layout that fits stdout (boxed on a TTY, plain otherwise). */
  table(columns: readonly Column[], rows: readonly (readonly string[])[]): string;
}

export interface ContextInit<N extends CommandName> {
  command: N;
  dir: string;
  ids: readonly string[];
  idsGiven: boolean;
  shard?: Shard;
  positionals: readonly string[];
  options: GlobalOptions & CommandOptionsMap[N];
  io: CliIo;
  exitCode?: ExitCodeAccumulator;
  /** Read from `io.env` when not given. */
  settings?: Settings;
}

export function createContext<N extends CommandName>(init: ContextInit<N>): CommandContext<N> {
  const { io, options } = init;
  const settings = init.settings ?? readSettings(io.env);
  const stdoutIsTTY = io.stdout.isTTY === true;
  const stderrIsTTY = io.stderr.isTTY === true;
  const styles = createStyles(colorLevel({ color: options.color, env: io.env, stdoutIsTTY }));
  const exitCode = init.exitCode ?? new ExitCodeAccumulator();
  const line = new ProgressLine(io.stderr);
  const progressOn = stderrIsTTY && !options.quiet && !options.json;
  const document = new JsonDocument(io.stdout);

  // Error and warning lines carry store text (ids, messages) and are never coloured.
  const writeErr = (raw: string) => {
    const text = safeOutput(raw, 0);
    line.clear();
    io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
    line.restore();
  };

  const ctx: CommandContext<N> = {
    command: init.command,
    dir: init.dir,
    ids: init.ids,
    idsGiven: init.idsGiven,
    shard: init.shard,
    positionals: init.positionals,
    options,
    store: { dir: init.dir, lockWaitMs: Math.round(options.lockWait * 1000) },
    settings,
    env: io.env,
    stdin: io.stdin,
    tty: { stdout: stdoutIsTTY, stderr: stderrIsTTY },
    terminal: {
      columns: stdoutIsTTY && io.stdout.columns ? io.stdout.columns : undefined,
      rows: stdoutIsTTY && io.stdout.rows ? io.stdout.rows : undefined,
    },
    styles,
    exitCode,
    threads: threadOptions(settings, writeErr),
    out(text) {
      if (options.json || options.quiet) return;
      io.stdout.write(`${safeOutput(text, styles.level)}\n`);
    },
    json(value) {
      // Commands call json() unconditionally with their document; it only prints under --json.
      if (options.json) document.value(value);
    },
    jsonArray(within) {
      return options.json ? document.array(within) : { push: () => undefined, end() {} };
    },
    jsonMap(head, key) {
      return options.json ? document.map(head, key) : { entry: () => undefined, end() {} };
    },
    stdoutStream() {
      return byteStream(io.stdout);
    },
    err(text) {
      writeErr(text);
    },
    warn(text) {
      if (options.quiet) return;
      writeErr(`tokcap: warning: ${text}`);
    },
    progress: (o) => (progressOn ? line.start(o) : noProgress()),
    raise(code) {
      exitCode.raise(code);
    },
    fail(e, rolloutId) {
      for (const l of formatErrorReport(e, io.env)) writeErr(l);
      exitCode.raise(exitCodeFor(e));
      return errorJson(e, rolloutId);
    },
    table(columns, rows) {
      // A cell is one line: a line break from the store inside it is shown escaped too.
      const safeRows = rows.map((r) => r.map((cell) => safeOutput(cell, styles.level, false)));
      return renderTable(columns, safeRows, { layout: stdoutIsTTY ? 'boxed' : 'plain', headingStyle: styles.heading });
    },
  };
  return ctx;
}

/**
 * TOKCAP_WORKERS (threads in all, or each job decides by its size: ./settings.ts) and
 * TOKCAP_DEBUG (say how many workers each job started; tests check that they ran).
 */
export function threadOptions(settings: Settings, err: (line: string) => void): ThreadOptions {
  return {
    threads: settings.threads,
    onWorkers: settings.debug
      ? (n, items) => err(`tokcap: debug: ${n} worker thread(s) for ${items} rollouts`)
      : undefined,
  };
}
