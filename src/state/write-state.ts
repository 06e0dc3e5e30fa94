import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { TokcapError, ioError } from '../errors.js';
import { canonicalJsonBytes } from '../json/canonical-json.js';
import type { JsonObject } from '../json/value.js';
import { fsyncDir, fsyncDirAsync } from './fsync-dir.js';

const fsyncAsync = promisify(fsync);

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
 * interleave with anything else in this process.
 */
export function writeState(dir: string, statePath: string, data: JsonObject, variant: StateWriteVariant, rolloutId?: string): void {
  const temp = writeTemp(dir, statePath, data, rolloutId);
  try {
    if (variant !== 'nonDurable') fsyncSync(temp.fd);
    closeSync(temp.fd);
    temp.fd = -1;
    renameSync(temp.path, statePath);
  } catch (e) {
    throw abandonTemp(temp, e, statePath, rolloutId);
  }
  if (variant === 'durable') fsyncDir(dir);
}

/**
 * The durable variant of `writeState` with its two fsyncs waited for on libuv's threads, so that
 * the caller's other work (building the copy it took under the same lock) runs meanwhile. The
 * caller keeps the rollout's lock until this resolves: the state is durable only then.
 */
export async function writeStateDurable(dir: string, statePath: string, data: JsonObject, rolloutId?: string): Promise<void> {
  const temp = writeTemp(dir, statePath, data, rolloutId);
  try {
    await fsyncAsync(temp.fd);
    closeSync(temp.fd);
    temp.fd = -1;
    renameSync(temp.path, statePath);
  } catch (e) {
    throw abandonTemp(temp, e, statePath, rolloutId);
  }
  await fsyncDirAsync(dir);
}

interface TempFile {
  path: string;
  /** Open descriptor, -1 once closed. */
  fd: number;
}

/** The state's bytes written to a new temporary file beside it (not yet fsynced, still open). */
function writeTemp(dir: string, statePath: string, data: JsonObject, rolloutId?: string): TempFile {
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
  let temp: TempFile;
  for (let attempt = 0; ; attempt++) {
    const path = join(dir, tempName());
    try {
      temp = { path, fd: openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600) };
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 100) continue;
      throw ioError(e, path, rolloutId);
    }
  }
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(temp.fd, bytes, off, bytes.length - off);
  } catch (e) {
    throw abandonTemp(temp, e, statePath, rolloutId);
  }
  return temp;
}

/** Closes and removes a temporary file after `e`; returns the error to throw. */
function abandonTemp(temp: TempFile, e: unknown, statePath: string, rolloutId?: string): TokcapError {
  if (temp.fd !== -1) {
    try {
      closeSync(temp.fd);
    } catch {
      /* already failing */
    }
  }
  try {
    unlinkSync(temp.path);
  } catch {
    /* the temp file may not exist any more */
  }
  return ioError(e, statePath, rolloutId);
}
