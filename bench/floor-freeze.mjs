#!/usr/bin/env node
// A floor for `build --all --freeze` (not the one the targets are measured against): the
// node floor's work (bench/floor-scan.mjs: read, split lines, JSON.parse, SHA-256 per line) plus
// what a first freeze must write (docs/format.md#freeze, #state-write), per rollout and one
// rollout at a time: open its lock file (O_RDWR|O_CREAT|O_APPEND) and flock it exclusively; read
// the state file; write the state with `frozen`, a fresh `snapshot_id` and `version` + 1 to a
// new `.tokens-state-XXXXXXXX` file (O_CREAT|O_EXCL, 0600), fsync it, rename it onto the state
// file, fsync the directory; read J as the floor does; unlock and close. Nothing more: no
// reconciliation of an unindexed tail, no validation, no token digests, no build, no output.
// It writes the store: run it on a copy. Prints "<rollouts> <lines> <bytes of J> <states written>".
// Usage: node bench/floor-freeze.mjs DIR
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { closeSync, constants, fsyncSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/floor-freeze.mjs DIR');
  process.exit(2);
}
// flock(2) through libc, as tokcap does (docs/format.md#lock-mechanism); LOCK_EX = 2, LOCK_UN = 8.
const koffi = createRequire(import.meta.url)('koffi');
const flock = koffi.load('libc.so.6').func('int flock(int, int)');

const NAME = /^(.+)\.tokens\.(?:jsonl|state\.json)$/;
const ids = [...new Set(readdirSync(dir).flatMap((f) => NAME.exec(f)?.[1] ?? []))].sort();
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789_';
const decoder = new TextDecoder();
let lines = 0;
let bytes = 0;
let written = 0;
let sink = 0;

function readIfExists(path) {
  try {
    return readFileSync(path);
  } catch (e) {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  }
}

/** docs/format.md#state-write, the durable variant: temporary file, fsync, rename, fsync of the directory. */
function writeStateDurably(path, text) {
  let fd;
  let temp;
  for (;;) {
    temp = join(dir, `.tokens-state-${[...randomBytes(8)].map((b) => ALPHABET[b % ALPHABET.length]).join('')}`);
    try {
      fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
  }
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  const d = openSync(dir, 'r');
  try {
    fsyncSync(d);
  } finally {
    closeSync(d);
  }
  written++;
}

/** Keys sorted at every level, compact, one LF (docs/format.md#state-format; floats aside). */
function sortedJson(v) {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

for (const id of ids) {
  const lock = openSync(
    join(dir, `${id}.tokens.lock`),
    constants.O_RDWR | constants.O_CREAT | constants.O_APPEND,
    0o666,
  );
  try {
    if (flock(lock, 2) !== 0) throw new Error(`flock ${id} failed`);
    const statePath = join(dir, `${id}.tokens.state.json`);
    const stateBytes = readIfExists(statePath);
    const state = stateBytes
      ? JSON.parse(decoder.decode(stateBytes))
      : {
          entry_digests: {},
          frozen: false,
          incomplete: false,
          indexed_size: 0,
          retired: false,
          snapshot_id: '',
          version: 0,
        };
    if (!state.frozen) {
      state.frozen = true;
      state.snapshot_id = randomUUID().replaceAll('-', '');
      state.version = (state.version ?? 0) + 1;
      writeStateDurably(statePath, `${sortedJson(state)}\n`);
    }
    const data = readIfExists(join(dir, `${id}.tokens.jsonl`));
    if (data) {
      bytes += data.length;
      let from = 0;
      for (;;) {
        const nl = data.indexOf(10, from);
        const end = nl === -1 ? data.length : nl;
        if (end > from) {
          const line = data.subarray(from, end);
          lines++;
          sink += createHash('sha256').update(line).digest('hex').length;
          try {
            const v = JSON.parse(decoder.decode(line));
            sink += typeof v === 'object' && v !== null ? 1 : 0;
          } catch {
            sink += 1;
          }
        }
        if (nl === -1) break;
        from = nl + 1;
      }
    }
    flock(lock, 8);
  } finally {
    closeSync(lock);
  }
}
process.stdout.write(`${ids.length} ${lines} ${bytes} ${written}${sink < 0 ? '!' : ''}\n`);
