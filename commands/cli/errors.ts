/**
 * The ONE place that maps errors to exit codes and formats them (docs/cli.md#exit-codes,
 * docs/cli.md#errors). Nothing else in commands/ decides an exit code for an error.
 */
import {
  errorFromFacts,
  systemErrorOf,
  TokcapError,
  type ErrorFacts,
  type ErrorKind,
  type SystemError,
} from '../../src/errors.js';
import { terminalSafe } from '../../src/text/terminal-safe.js';

export const EXIT_OK = 0;
/** The command ran and reports a negative outcome (findings, drop returned false, masked). */
export const EXIT_NEGATIVE = 1;
export const EXIT_USAGE = 2;
export const EXIT_FAILURE = 3;
export type ExitCode = 0 | 1 | 2 | 3;

const EXIT_BY_KIND: { readonly [K in ErrorKind]: ExitCode } = {
  usage: EXIT_USAGE,
  invalid_rollout_id: EXIT_USAGE,
  corrupt: EXIT_FAILURE,
  conflict: EXIT_FAILURE,
  frozen: EXIT_FAILURE,
  retired: EXIT_FAILURE,
  index_offset: EXIT_FAILURE,
  schema: EXIT_FAILURE,
  lock_timeout: EXIT_FAILURE,
  io: EXIT_FAILURE,
  not_found: EXIT_FAILURE,
  other: EXIT_FAILURE,
};

export function exitCodeForKind(kind: ErrorKind): ExitCode {
  return EXIT_BY_KIND[kind];
}

/** Exit code for anything thrown: TokcapErrors by kind; everything else is 3. */
export function exitCodeFor(e: unknown): ExitCode {
  return e instanceof TokcapError ? exitCodeForKind(e.kind) : EXIT_FAILURE;
}

/** Shorthand for a usage error (exit 2). */
export function usageError(message: string): TokcapError {
  return new TokcapError('usage', message);
}

/**
 * Collapses a message onto one line (errors are one line each on stderr) and shows every control
 * character left in it escaped: messages quote store text (call ids, file names).
 */
function oneLine(s: string): string {
  return terminalSafe(s.replace(/\s*[\r\n]+\s*/g, ' ').trim());
}

function isErrnoException(e: unknown): e is NodeJS.ErrnoException {
  return systemErrorOf(e) !== undefined;
}

/**
 * The system errors a person can act on, in words: a DIR that does not exist, is not a directory
 * or cannot be read. Node's text ("ENOENT: no such file or directory, opendir '/x'") names the
 * syscall and repeats the path; the JSON message keeps it (kind `io`), the line says what is wrong.
 */
function errnoWords(e: SystemError): string | undefined {
  switch (e.code) {
    case 'ENOENT':
      return e.syscall === 'opendir' || e.syscall === 'scandir' ? 'no such directory' : 'no such file or directory';
    case 'ENOTDIR':
      return 'not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOSPC':
      return 'no space left on device';
    case 'EISDIR':
      return 'is a directory';
    case 'ENAMETOOLONG':
      return 'file name too long';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EROFS':
      return 'read-only file system';
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files';
    case 'EIO':
      return 'input/output error';
    case 'EEXIST':
      return 'already exists';
    case 'EXDEV':
      return 'on another file system (cannot be renamed there)';
    case 'EBUSY':
      return 'busy (in use by the system or another process)';
    case 'ENOTEMPTY':
      return 'directory not empty';
    case 'EFBIG':
      return 'file too large';
    case 'ETXTBSY':
      return 'text file busy';
    case 'EAGAIN':
      return 'resource temporarily unavailable';
    case 'ENXIO':
      return 'no such device or address (a FIFO without a writer, or a device)';
    case 'ENODEV':
      return 'no such device';
    case 'EINVAL':
      return 'invalid argument';
    case 'ESTALE':
      return 'stale file handle (the file changed on the file server)';
    case 'ENOTSUP':
    case 'EOPNOTSUPP':
      return 'operation not supported by the file system';
    case 'ENOMEM':
      return 'out of memory';
    default:
      return errnoFallback(e.code);
  }
}

/**
 * Any other system error code (`E...`): named by its code, is still a one-line reason,
 * never Node's raw `ECODE: message, syscall 'path'`.
 */
function errnoFallback(code: string): string | undefined {
  return /^E[A-Z0-9]+$/.test(code) ? `system error ${code}` : undefined;
}

/** `<subject>: <words>`, with the errno's own path too when it is not the subject (a file in DIR). */
function describeErrno(subject: string | undefined, e: SystemError): string | undefined {
  const words = errnoWords(e);
  if (words === undefined) return undefined;
  const parts = [subject, e.path !== undefined && e.path !== subject ? e.path : undefined].filter(
    (p): p is string => p !== undefined && p !== '',
  );
  return [...parts.map(oneLine), words].join(': ');
}

/**
 * `<rollout or file>: <reason>` without the `tokcap: ` prefix. The subject is the rollout id if
 * the error names one, else the file. An invalid_rollout_id error carries no subject: its message
 * already shows the id, quoted (an invalid id may contain anything).
 */
export function describeError(e: unknown): string {
  if (e instanceof TokcapError) {
    const subject = e.kind === 'invalid_rollout_id' ? undefined : (e.rolloutId ?? e.file);
    // Only an `io` error is told in the words of its system error (from its fields, also when
    // it crossed a thread: ErrorFacts).
    if (e.kind === 'io' && e.system) {
      const words = describeErrno(subject, e.system);
      if (words) return words;
    }
    const reason = oneLine(e.message) || e.kind;
    return subject === undefined || subject === '' ? reason : `${oneLine(subject)}: ${reason}`;
  }
  if (isErrnoException(e)) {
    // A raw Node fs error that escaped the library: an I/O error about its path.
    const words = describeErrno(e.path, systemErrorOf(e)!);
    if (words !== undefined) return words;
    const msg = oneLine(e.message);
    const path = e.path === undefined ? undefined : oneLine(e.path);
    return path && !msg.includes(path) ? `${path}: ${msg}` : msg;
  }
  if (e instanceof Error) return `unexpected error: ${oneLine(`${e.name}: ${e.message}`)}`;
  return `unexpected error: ${oneLine(String(e))}`;
}

/**
 * What human output says of a rollout that could not be read (docs/cli.md#unavailable), in the
 * words of its error line (`tokcap: ID: <reason>`): never the Python class that a failed build's
 * `error` string starts with (`TimeoutError: ...`, the reference's form, kept in the JSON).
 */
export function couldNotBeRead(error: ErrorFacts): string {
  return `could not be read: ${describeErrorFacts(error)}`;
}

/** An error's reason in the words of its error line, without a subject (the caller names it). */
export function describeErrorFacts(error: ErrorFacts): string {
  return describeError(errorFromFacts(error));
}

/** The one-line stderr message: `tokcap: <rollout or file>: <reason>`. */
export function formatErrorLine(e: unknown): string {
  return `tokcap: ${describeError(e)}`;
}

/** TOKCAP_DEBUG=1 (any non-empty value other than 0/false) prints stack traces. */
export function debugEnabled(env: NodeJS.ProcessEnv): boolean {
  const v = env.TOKCAP_DEBUG;
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}

/** The lines written to stderr for an error: the one-liner, then (debug only) the stack. */
export function formatErrorReport(e: unknown, env: NodeJS.ProcessEnv): string[] {
  const lines = [formatErrorLine(e)];
  if (debugEnabled(env)) {
    let cur: unknown = e;
    let depth = 0;
    while (cur !== undefined && cur !== null && depth < 8) {
      const stack = cur instanceof Error ? (cur.stack ?? `${cur.name}: ${cur.message}`) : String(cur);
      const safe = terminalSafe(stack, { keepNewlines: true });
      lines.push(depth === 0 ? safe : `caused by: ${safe}`);
      cur = cur instanceof Error ? cur.cause : undefined;
      depth += 1;
    }
  }
  return lines;
}

export interface ErrorJson {
  rollout_id: string | null;
  error: { kind: ErrorKind; message: string };
}

/** The inline per-rollout error of the JSON contract: `{"rollout_id", "error": {"kind", "message"}}`. */
export function errorJson(e: unknown, rolloutId?: string): ErrorJson {
  const id = rolloutId ?? (e instanceof TokcapError ? e.rolloutId : undefined) ?? null;
  if (e instanceof TokcapError) return { rollout_id: id, error: { kind: e.kind, message: e.message } };
  if (isErrnoException(e)) return { rollout_id: id, error: { kind: 'io', message: e.message } };
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return { rollout_id: id, error: { kind: 'other', message } };
}
