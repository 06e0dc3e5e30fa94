/**
 * Shared helpers for the library tests (test/src/): real temporary capture directories (never a
 * mocked fs), compact TokenEntry builders, and byte-exact directory listings to prove that an
 * operation changed nothing.
 */
import { useTempDirs as useSharedTempDirs } from './temp-dirs.js';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import { computeTokenDigest } from '../../src/digest/token-digest.js';
import { TokcapError, type ErrorKind } from '../../src/errors.js';
import { JsonFloat, type JsonObject } from '../../src/json/value.js';
import { rolloutPaths, type RolloutPaths } from '../../src/layout/file-names.js';
import { canonicalEntryJson } from '../../src/records/canonical-entry.js';
import { validateTokenEntry } from '../../src/records/token-entry.js';

export function useTempDirs(prefix = 'tokcap-core-'): () => string {
  return useSharedTempDirs(prefix);
}

export interface EntrySpec {
  rollout?: string;
  /** Full prompt. */
  prompt?: number[];
  gen?: number[];
  parent?: string;
  createdAt?: number;
  extra?: JsonObject;
}

/**
 * A writer-shaped entry: ROOT unless `parent` is given (then RESOLVED), cum_len/digest stamped
 * from prompt + gen, one log prob per generated token.
 */
export function entry(callId: string, spec: EntrySpec = {}): JsonObject {
  const prompt = spec.prompt ?? [1, 2, 3];
  const gen = spec.gen ?? [4, 5];
  const cumulative = [...prompt, ...gen];
  return {
    schema_version: 5,
    rollout_id: spec.rollout ?? 'r',
    model_call_id: callId,
    prompt_token_ids: prompt,
    generation_token_ids: gen,
    generation_log_probs: gen.map(() => -0.5),
    created_at: new JsonFloat(spec.createdAt ?? 1700000000),
    parent_call_id: spec.parent ?? null,
    parent_resolution: spec.parent ? 'resolved' : 'root',
    cum_len: cumulative.length,
    digest: computeTokenDigest(cumulative),
    ...(spec.extra ?? {}),
  };
}

/** The canonical line bytes (with LF) the writer would append for `e`. */
export function canonicalLine(e: JsonObject): Buffer {
  return Buffer.from(canonicalEntryJson(validateTokenEntry(e)) + '\n', 'utf8');
}

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function paths(dir: string, id = 'r'): RolloutPaths {
  return rolloutPaths(dir, id);
}

/** The state file parsed with JSON.parse (enough for ints, strings, flags and objects). */
export function stateJson(dir: string, id = 'r'): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(paths(dir, id).state, 'utf8'));
}

export function stateBytes(dir: string, id = 'r'): string {
  return fs.readFileSync(paths(dir, id).state, 'utf8');
}

/** Sorted file names of a directory, dot-files included. */
export function names(dir: string): string[] {
  return fs.readdirSync(dir).sort();
}

export interface FileSnapshot {
  size: number;
  mtimeMs: number;
  mode: number;
  ino: number;
  sha256: string;
}

/** A full listing with sizes, mtimes, modes, inodes and content hashes (dot-files included). */
export function dirSnapshot(dir: string): Record<string, FileSnapshot> {
  const out: Record<string, FileSnapshot> = {};
  for (const name of names(dir)) {
    const p = path.join(dir, name);
    const st = fs.lstatSync(p);
    out[name] = {
      size: st.size,
      mtimeMs: st.mtimeMs,
      mode: st.mode,
      ino: st.ino,
      sha256: st.isFile() ? sha256(fs.readFileSync(p)) : '',
    };
  }
  return out;
}

/** Leftover `.tokens-state-XXXXXXXX` temporary files. */
export function tempStateFiles(dir: string): string[] {
  return names(dir).filter((n) => n.startsWith('.tokens-state-'));
}

/** Sets a file's mtime (and atime) to `seconds` since the epoch. */
export function setMtime(file: string, seconds: number): void {
  fs.utimesSync(file, seconds, seconds);
}

/** Awaits `p` and asserts it rejects with a TokcapError of `kind`; returns the error. */
export async function expectTokcapError(p: Promise<unknown>, kind: ErrorKind): Promise<TokcapError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected a TokcapError of kind ${kind}`).toBeInstanceOf(TokcapError);
  const err = caught as TokcapError;
  expect(err.kind).toBe(kind);
  return err;
}

/** Same as expectTokcapError, for a synchronous call. */
export function expectTokcapErrorSync(fn: () => unknown, kind: ErrorKind): TokcapError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected a TokcapError of kind ${kind}`).toBeInstanceOf(TokcapError);
  const err = caught as TokcapError;
  expect(err.kind).toBe(kind);
  return err;
}

/**
 * docs/format.md#token-digests spelled out: "nemo-gym-tokens", 0x01, u64be(count), u64be(id)... (the empty
 * sequence hashes the domain alone). Throws (a RangeError) for an id with no u64 form.
 */
export function spelledOutTokenDigest(ids: readonly (number | bigint)[]): string {
  const h = createHash('sha256');
  h.update('nemo-gym-tokens', 'ascii');
  if (ids.length === 0) return h.digest('hex');
  const head = Buffer.alloc(9);
  head[0] = 1;
  head.writeBigUInt64BE(BigInt(ids.length), 1);
  h.update(head);
  const b = Buffer.alloc(8);
  for (const id of ids) {
    b.writeBigUInt64BE(BigInt(id));
    h.update(b);
  }
  return h.digest('hex');
}
