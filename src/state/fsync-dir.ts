import { closeSync, fsyncSync, openSync, constants } from 'node:fs';
import { ioError } from '../errors.js';

/** "fsync the directory": open it read-only, fsync(2) the descriptor, close it (docs/format.md#terms). */
export function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (e) {
    throw ioError(e, dir);
  }
  try {
    fsyncSync(fd);
  } catch (e) {
    throw ioError(e, dir);
  } finally {
    closeSync(fd);
  }
}
