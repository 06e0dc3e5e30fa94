import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { TokcapError, ioError } from '../errors.js';
import { canonicalJsonBytes } from '../json/canonical-json.js';
import type { JsonObject } from '../json/value.js';
import { fsyncDir } from './fsync-dir.js';

/**
 * The three state-write variants of docs/format.md#state-write: they differ only in fsyncs.
 * - durable: fsync the temp file, rename, fsync the directory;
 * - nonDurable: no fsync at all (append's normal path; the state is rebuildable from J);
 * - fence: fsync the temp file, rename, no directory fsync (retire phase 1: one fsync per batch).
 */
export type StateWriteVariant = 'durable' | 'nonDurable' | 'fence';

const TEMP_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789_';

function tempName(): string {
  const bytes = randomBytes(8);
  let s = '.tokens-state-';
  // 37 symbols: modulo bias is irrelevant for a uniqueness-only name.
  for (const b of bytes) s += TEMP_ALPHABET[b % TEMP_ALPHABET.length];
  return s;
}

/**
 * Writes `data` (sorted keys, compact, trailing LF) atomically onto `statePath`. The work is
 * synchronous on purpose: it runs under the rollout's lock, and a half-done state write must not
 * interleave with anything else in this process. Its fsyncs are not overlapped with other work
 * (docs/decisions/0011-synchronous-durable-state-write.md).
 */
export function writeState(
  dir: string,
  statePath: string,
  data: JsonObject,
  variant: StateWriteVariant,
  rolloutId?: string,
): void {
  let body: Uint8Array;
  try {
    body = canonicalJsonBytes(data);
  } catch (e) {
    // e.g. `version` 2^64 - 1 + 1 (orjson refuses it too): name the rollout and its state file,
    // so that a batch reports this rollout and goes on with the others.
    const reason = e instanceof Error ? e.message : String(e);
    throw new TokcapError('corrupt', `cannot write the state of rollout ${rolloutId ?? '?'}: ${reason}`, {
      rolloutId,
      file: statePath,
      cause: e,
    });
  }
  const bytes = Buffer.concat([body, Buffer.from('\n')]);
  let tmp: string;
  let fd: number;
  for (let attempt = 0; ; attempt++) {
    tmp = join(dir, tempName());
    try {
      fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 100) continue;
      throw ioError(e, tmp, rolloutId);
    }
  }
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    if (variant !== 'nonDurable') fsyncSync(fd);
    closeSync(fd);
    fd = -1;
    renameSync(tmp, statePath);
  } catch (e) {
    if (fd !== -1) {
      try {
        closeSync(fd);
      } catch {
        /* already failing */
      }
    }
    try {
      unlinkSync(tmp);
    } catch {
      /* the temp file may not exist any more */
    }
    throw ioError(e, statePath, rolloutId);
  }
  if (variant === 'durable') fsyncDir(dir);
}
