/**
 * Errors are values with a kind. The kinds are the ones of the JSON contract (docs/cli.md#json-errors); the CLI
 * maps them to exit codes and one-line messages in one place (commands/errors).
 *
 * `pyClass` is the Python exception class the reference would raise for the same failure:
 * build results embed it as "<Class>: <message>" (docs/format.md#result-errors).
 */
export type ErrorKind =
  | 'usage'
  | 'invalid_rollout_id'
  | 'corrupt'
  | 'conflict'
  | 'frozen'
  | 'retired'
  | 'index_offset'
  | 'schema'
  | 'lock_timeout'
  | 'io'
  /** Nothing to answer about: a DIR without capture files, a named rollout without any (docs/cli.md#unavailable). */
  | 'not_found'
  | 'other';

export type PyErrorClass =
  | 'ValueError'
  | 'RuntimeError'
  | 'JSONDecodeError'
  | 'ValidationError'
  | 'UnicodeDecodeError'
  | 'KeyError'
  | 'AssertionError'
  | 'OSError'
  | 'TimeoutError';

/**
 * The system error under an error (Node's errno `code`, the `syscall`, the `path`), as plain data:
 * what the error line's words are derived from (commands/errors), also after it crossed a thread.
 */
export interface SystemError {
  code: string;
  syscall?: string;
  path?: string;
}

/**
 * An error as plain data, for what crosses a thread (a worker's row, verdict or reply) or outlives
 * the error (a rollout's facts). JSON outputs show only `kind` and `message`
 * (docs/cli.md#json-errors); `system` is for the human line.
 */
export interface ErrorFacts {
  kind: ErrorKind;
  message: string;
  system?: SystemError;
}

export interface TokcapErrorOptions {
  /** Rollout the failure concerns, when there is one. */
  rolloutId?: string;
  /** File the failure concerns (path as given), when there is one. */
  file?: string;
  pyClass?: PyErrorClass;
  cause?: unknown;
  /** The system error under it; default: the cause's, when the cause is one. */
  system?: SystemError;
}

export class TokcapError extends Error {
  readonly kind: ErrorKind;
  readonly rolloutId?: string;
  readonly file?: string;
  readonly pyClass: PyErrorClass;
  readonly system?: SystemError;

  constructor(kind: ErrorKind, message: string, options: TokcapErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TokcapError';
    this.kind = kind;
    this.rolloutId = options.rolloutId;
    this.file = options.file;
    this.pyClass = options.pyClass ?? defaultPyClass(kind);
    const system = options.system ?? systemErrorOf(options.cause);
    if (system) this.system = system;
  }

  /** This error as plain data (see ErrorFacts). */
  facts(): ErrorFacts {
    return errorFactsOf(this);
  }

  /** "<Class>: <message>", the form the reference consumer puts in a failed build's `error`. */
  pythonString(): string {
    return `${this.pyClass}: ${this.message}`;
  }
}

function defaultPyClass(kind: ErrorKind): PyErrorClass {
  switch (kind) {
    case 'frozen':
    case 'retired':
      return 'RuntimeError';
    case 'corrupt':
      return 'ValueError';
    case 'schema':
      return 'ValidationError';
    case 'io':
      return 'OSError';
    case 'lock_timeout':
      return 'TimeoutError';
    default:
      return 'ValueError';
  }
}

/** The errno facts of a Node system error (ENOENT, EACCES, ...); undefined for anything else. */
export function systemErrorOf(e: unknown): SystemError | undefined {
  const x = e as NodeJS.ErrnoException | null | undefined;
  if (!(x instanceof Error) || typeof x.code !== 'string' || !('errno' in x)) return undefined;
  return {
    code: x.code,
    ...(typeof x.syscall === 'string' ? { syscall: x.syscall } : {}),
    ...(typeof x.path === 'string' ? { path: x.path } : {}),
  };
}

/** Only the ErrorFacts of `x` (without the `file` or anything else it carries). */
export function errorFactsOf(x: ErrorFacts): ErrorFacts {
  return x.system ? { kind: x.kind, message: x.message, system: x.system } : { kind: x.kind, message: x.message };
}

/** The error that `facts` describe, again (on the other side of a thread), about `where`. */
export function errorFromFacts(facts: ErrorFacts, where: { rolloutId?: string; file?: string } = {}): TokcapError {
  return new TokcapError(facts.kind, facts.message, { ...where, ...(facts.system ? { system: facts.system } : {}) });
}

export function isTokcapError(e: unknown): e is TokcapError {
  return e instanceof TokcapError;
}

/** Wraps a Node fs error (ENOENT, EACCES, ...) as an `io` error naming the file. */
export function ioError(err: unknown, file: string, rolloutId?: string): TokcapError {
  if (err instanceof TokcapError) return err;
  const e = err as NodeJS.ErrnoException;
  const code = e?.code ? `${e.code}: ` : '';
  const msg = e?.message ?? String(err);
  return new TokcapError('io', `${code}${msg.replace(/^[A-Z]+: /, '')}`, { file, rolloutId, cause: err });
}

/**
 * A DIR (`file`) or a named rollout (`rolloutId`) without any capture file: nothing there to
 * answer about (docs/cli.md#unavailable, kind `not_found`).
 */
export function noCaptureFilesError(where: { file?: string; rolloutId?: string }): TokcapError {
  return new TokcapError('not_found', 'no capture files', where);
}

/**
 * A rollout named on the command line that has no capture file in `dir`: told apart from an
 * empty DIR (`noCaptureFilesError`) by its words, same kind `not_found`.
 */
export function noSuchRolloutError(rolloutId: string, dir: string): TokcapError {
  return new TokcapError('not_found', `no such rollout in ${dir} (no capture files)`, { rolloutId });
}

/**
 * A selection with no rollout in it (no ids after `--ids-from`, a shard with nothing in it) over
 * DIR (`file`): a command that checked nothing must not pass as having checked everything
 * (docs/cli.md#unavailable, kind `not_found`).
 */
export function noRolloutsSelectedError(where: { file?: string }): TokcapError {
  return new TokcapError('not_found', 'no rollouts selected', where);
}

/**
 * The records hold lines that are neither entries nor a torn tail (the `corrupt` condition without
 * an error of its own): the same line from every command that found them.
 */
export function corruptLinesError(rolloutId: string, file: string): TokcapError {
  return new TokcapError('corrupt', 'the records hold lines that are not valid entries', { rolloutId, file });
}

/** Any thrown value as a TokcapError (unexpected ones become kind `other`). */
export function toTokcapError(e: unknown, context: { rolloutId?: string; file?: string } = {}): TokcapError {
  if (e instanceof TokcapError) return e;
  if ((e as NodeJS.ErrnoException)?.code && context.file) return ioError(e, context.file, context.rolloutId);
  const msg = e instanceof Error ? e.message : String(e);
  return new TokcapError('other', msg, { ...context, cause: e });
}
