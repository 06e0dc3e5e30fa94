import { closeSync, fsync, fsyncSync, openSync, constants } from 'node:fs';
import { promisify } from 'node:util';
import { ioError } from '../errors.js';

const fsyncAsync = promisify(fsync);

/** "fsync the directory": open it read-only, fsync(2) the descriptor, close it (docs/format.md#terms). */
export function fsyncDir(dir: string): void {
  const fd = openDir(dir);
  try {
    fsyncSync(fd);
  } catch (e) {
    throw ioError(e, dir);
  } finally {
    closeSync(fd);
  }
}

/** `fsyncDir` with the fsync on libuv's threads (the caller does other work meanwhile). */
export async function fsyncDirAsync(dir: string): Promise<void> {
  const fd = openDir(dir);
  try {
    await fsyncAsync(fd);
  } catch (e) {
    throw ioError(e, dir);
  } finally {
    closeSync(fd);
  }
}

function openDir(dir: string): number {
  try {
    return openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (e) {
    throw ioError(e, dir);
  }
}
