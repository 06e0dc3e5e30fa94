import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { TokcapError, ioError } from '../errors.js';

/**
 * Opens a capture file for reading without following a symlink (a name in DIR must never lead
 * outside it) and without blocking on a FIFO; anything but a regular file is refused.
 * Returns undefined when the file does not exist.
 */
export async function openRegularForRead(path: string, rolloutId?: string): Promise<FileHandle | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw notRegular(path, 'a symbolic link', rolloutId);
    throw ioError(e, path, rolloutId);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile())
      throw notRegular(
        path,
        st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO' : 'not a regular file',
        rolloutId,
      );
  } catch (e) {
    await fh.close();
    throw e instanceof TokcapError ? e : ioError(e, path, rolloutId);
  }
  return fh;
}

function notRegular(path: string, what: string, rolloutId?: string): TokcapError {
  return new TokcapError('io', `refusing to read ${what}: capture files must be regular files`, {
    file: path,
    rolloutId,
    pyClass: 'OSError',
  });
}

/**
 * Reads a whole capture file safely; undefined when missing. Same checks as
 * `openRegularForRead` (no symlink, no FIFO, regular files only), done with synchronous calls:
 * state, intents and marker files are small, and for them the four thread-pool round trips of
 * the promise API cost far more than the syscalls (inspect of 100,000 rollouts reads 200,000).
 */
export async function readRegularFile(path: string, rolloutId?: string): Promise<Buffer | undefined> {
  return readRegularFileSync(path, rolloutId);
}

/**
 * `openRegularForRead` with synchronous calls: the descriptor, or undefined when the file does
 * not exist. The caller closes it. (Per rollout, the promise API's round trips through the
 * thread pool cost more than the syscalls themselves.)
 */
export function openRegularFdSync(path: string, rolloutId?: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw notRegular(path, 'a symbolic link', rolloutId);
    throw ioError(e, path, rolloutId);
  }
  return fd;
}

/**
 * Opens a capture file synchronously with the checks of `openRegularForRead` and runs `use` on
 * the descriptor and its stat; undefined when the file does not exist. Always closes.
 */
function withRegularFileSync<T>(
  path: string,
  rolloutId: string | undefined,
  use: (fd: number, size: number, mtimeMs: number) => T,
): T | undefined {
  const fd = openRegularFdSync(path, rolloutId);
  if (fd === undefined) return undefined;
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      throw notRegular(
        path,
        st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO' : 'not a regular file',
        rolloutId,
      );
    return use(fd, st.size, st.mtimeMs);
  } catch (e) {
    throw e instanceof TokcapError ? e : ioError(e, path, rolloutId);
  } finally {
    closeSync(fd);
  }
}

/**
 * Runs `use` on a regular capture file's descriptor and size (synchronous open and checks as
 * `openRegularForRead`); undefined when the file does not exist. Always closes. Errors thrown
 * by `use` pass through unchanged.
 */
export function withRegularFdSync<T>(
  path: string,
  rolloutId: string | undefined,
  use: (fd: number, size: number) => T,
): T | undefined {
  const fd = openRegularFdSync(path, rolloutId);
  if (fd === undefined) return undefined;
  try {
    let size: number;
    try {
      const st = fstatSync(fd);
      if (!st.isFile())
        throw notRegular(
          path,
          st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO' : 'not a regular file',
          rolloutId,
        );
      size = st.size;
    } catch (e) {
      throw e instanceof TokcapError ? e : ioError(e, path, rolloutId);
    }
    return use(fd, size);
  } finally {
    closeSync(fd);
  }
}

export function readRegularFileSync(path: string, rolloutId?: string): Buffer | undefined {
  return readRegularFileWithMtimeSync(path, rolloutId)?.bytes;
}

/**
 * `readRegularFileSync` plus the file's mtime from the same `fstat` (callers that need both
 * save an `lstat` per file).
 */
export function readRegularFileWithMtimeSync(
  path: string,
  rolloutId?: string,
): { bytes: Buffer; mtimeMs: number } | undefined {
  return withRegularFileSync(path, rolloutId, (fd, size, mtimeMs) => {
    // Read to EOF (the size is a hint: the file may grow or shrink meanwhile). A short read of
    // a regular file means end of file, so the common case is one read.
    let buf = Buffer.allocUnsafe(Math.max(size + 1, 64));
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const want = buf.length - n;
      const r = readSync(fd, buf, n, want, null);
      n += r;
      if (r === 0 || r < want) break;
    }
    // Small reads come from Node's shared pool: copy them out so a kept state file does not
    // pin an 8 KiB slab; large ones own their memory already.
    return { bytes: buf.length > 4096 ? buf.subarray(0, n) : Buffer.from(buf.subarray(0, n)), mtimeMs };
  });
}

const ONE_BYTE = Buffer.alloc(1);

/**
 * Size, last byte and mtime of a capture file, with the checks of `openRegularForRead`,
 * synchronously and without reading anything else. Undefined when the file does not exist.
 */
export function regularFileSizeAndLastByte(
  path: string,
  rolloutId?: string,
): { size: number; lastByte?: number; mtimeMs: number } | undefined {
  return withRegularFileSync(path, rolloutId, (fd, size, mtimeMs) => {
    if (size === 0) return { size: 0, mtimeMs };
    const r = readSync(fd, ONE_BYTE, 0, 1, size - 1);
    return { size, lastByte: r === 1 ? ONE_BYTE[0] : undefined, mtimeMs };
  });
}
