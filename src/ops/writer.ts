import { closeSync, constants, fstatSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { TokcapError, ioError } from '../errors.js';
import { sha256Hex } from '../digest/token-digest.js';
import type { JsonObject } from '../json/value.js';
import { pyRepr } from '../layout/py-repr.js';
import { withRolloutLock } from '../lock/rollout-lock.js';
import { canonicalEntryJson } from '../records/canonical-entry.js';
import { validateTokenEntry, type TokenEntry } from '../records/token-entry.js';
import { readState } from '../state/read-state.js';
import { fsyncDir } from '../state/fsync-dir.js';
import { entryDigests, isFrozen, isRetired, stateVersion } from '../state/rollout-state.js';
import { writeState } from '../state/write-state.js';
import { frozenError, retiredError } from './freeze.js';
import { reconcileIndex } from './reconcile.js';
import { rolloutTarget, type StoreOptions } from './store.js';

/**
 * The writer side of the store (docs/format.md#append, docs/format.md#begin-call, docs/format.md#mark-incomplete). tokcap never appends to a live run's
 * store; these exist so that fixtures, benchmarks and tests make stores byte-compatible with
 * the reference writer's.
 */
export interface AppendResult {
  entryDigest: string;
  /** True when an identical entry was already indexed (an idempotent retry). */
  duplicate: boolean;
}

export interface WriterOptions {
  /** Positive float exponents with `+` (orjson >= 3.11.7, the default) or without. */
  plusExponent?: boolean;
}

/** Appends bytes in one write and fsyncs the file; returns the resulting size. */
function appendDurably(path: string, bytes: Buffer, rolloutId: string): number {
  let fd = -1;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o666);
    // One write call for the whole line: the lock is what keeps it from interleaving.
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
    return fstatSync(fd).size;
  } catch (e) {
    throw ioError(e, path, rolloutId);
  } finally {
    if (fd !== -1) closeSync(fd);
  }
}

export async function appendEntry(
  store: StoreOptions,
  input: JsonObject | TokenEntry,
  options: WriterOptions = {},
): Promise<AppendResult> {
  const entry = validateTokenEntry(input as JsonObject);
  const line = canonicalEntryJson(entry, options);
  const bytes = Buffer.from(line + '\n', 'utf8');
  const d = sha256Hex(bytes.subarray(0, bytes.length - 1));
  const rolloutId = entry.rollout_id;
  const t = rolloutTarget(store, rolloutId);
  return withRolloutLock(t.paths.lock, rolloutId, 'exclusive', { waitMs: t.lockWaitMs }, async () => {
    const state = await readState(t.paths.state, rolloutId);
    if (isRetired(state)) throw retiredError(rolloutId);
    if (isFrozen(state)) throw frozenError(rolloutId);
    const { changed } = await reconcileIndex(
      { dir: t.dir, rolloutId, jsonlPath: t.paths.jsonl, statePath: t.paths.state },
      state,
    );
    const callId = entry.model_call_id;
    const known = entryDigests(state)?.[callId];
    if (known !== undefined) {
      if (known === d) {
        if (changed) writeState(t.dir, t.paths.state, state.data, 'durable', rolloutId);
        return { entryDigest: d, duplicate: true };
      }
      state.data.incomplete = true;
      state.data.version = stateVersion(state, rolloutId) + 1;
      writeState(t.dir, t.paths.state, state.data, 'durable', rolloutId);
      throw new TokcapError(
        'conflict',
        `Model call id ${pyRepr(callId)} was reused with a different payload for rollout ${pyRepr(rolloutId)}`,
        {
          rolloutId,
          pyClass: 'ValueError',
        },
      );
    }
    const size = appendDurably(t.paths.jsonl, bytes, rolloutId);
    state.data.indexed_size = size;
    state.data.entry_digests = { ...(entryDigests(state) ?? {}), [callId]: d };
    state.data.version = stateVersion(state, rolloutId) + 1;
    writeState(t.dir, t.paths.state, state.data, 'nonDurable', rolloutId);
    return { entryDigest: d, duplicate: false };
  });
}

function appendLine(path: string, text: string, rolloutId: string): void {
  appendDurably(path, Buffer.from(text + '\n', 'utf8'), rolloutId);
}

/** begin_call (docs/format.md#begin-call): record the intent before dispatch; no state change. */
export async function beginCall(store: StoreOptions, rolloutId: string, callId: string): Promise<void> {
  const t = rolloutTarget(store, rolloutId);
  await withRolloutLock(t.paths.lock, rolloutId, 'exclusive', { waitMs: t.lockWaitMs }, async () => {
    const state = await readState(t.paths.state, rolloutId);
    if (isRetired(state)) throw retiredError(rolloutId);
    if (isFrozen(state)) throw frozenError(rolloutId);
    appendLine(t.paths.intents, callId, rolloutId);
  });
}

/** mark_incomplete (docs/format.md#mark-incomplete): works after freeze (its version bump invalidates a stale drop). */
export async function markIncomplete(store: StoreOptions, rolloutId: string, callId: string): Promise<void> {
  const t = rolloutTarget(store, rolloutId);
  await withRolloutLock(t.paths.lock, rolloutId, 'exclusive', { waitMs: t.lockWaitMs }, async () => {
    const state = await readState(t.paths.state, rolloutId);
    if (isRetired(state)) throw retiredError(rolloutId);
    state.data.incomplete = true;
    state.data.version = stateVersion(state, rolloutId) + 1;
    writeState(t.dir, t.paths.state, state.data, 'durable', rolloutId);
    appendLine(t.paths.incomplete, callId, rolloutId);
    fsyncDir(t.dir);
  });
}
