import { constants } from 'node:fs';
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
    if (!st.isFile()) throw notRegular(path, st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO' : 'not a regular file', rolloutId);
  } catch (e) {
    await fh.close();
    throw e instanceof TokcapError ? e : ioError(e, path, rolloutId);
  }
  return fh;
}

function notRegular(path: string, what: string, rolloutId?: string): TokcapError {
  return new TokcapError('io', `refusing to read ${what}: capture files must be regular files`, { file: path, rolloutId, pyClass: 'OSError' });
}

/** Reads a whole capture file safely; undefined when missing. */
export async function readRegularFile(path: string, rolloutId?: string): Promise<Buffer | undefined> {
  const fh = await openRegularForRead(path, rolloutId);
  if (!fh) return undefined;
  try {
    return await fh.readFile();
  } catch (e) {
    throw ioError(e, path, rolloutId);
  } finally {
    await fh.close();
  }
}
