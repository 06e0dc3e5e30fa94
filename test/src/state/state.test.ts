import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonFloat, type JsonObject } from '../../../src/json/value.js';
import { markIncomplete } from '../../../src/ops/writer.js';
import { readState } from '../../../src/state/read-state.js';
import { writeState, type StateWriteVariant } from '../../../src/state/write-state.js';
import {
  expectTokcapError,
  expectTokcapErrorSync,
  names,
  paths,
  stateBytes,
  stateJson,
  tempStateFiles,
  useTempDirs,
} from '../../support/store.js';

const tmp = useTempDirs();

function statePathIn(dir: string, id = 'r'): string {
  return paths(dir, id).state;
}

describe('writeState (docs/format.md#state-format, docs/format.md#state-write)', () => {
  it('writes sorted keys (code-point order, every level), compact, with one trailing LF', () => {
    const dir = tmp();
    const data: JsonObject = {
      version: 2,
      frozen: false,
      entry_digests: { c2: 'bb', c1: 'aa' },
      indexed_size: 1280,
      '😀': 2,
      '\uffff': 1,
      é: 5,
      a: 3,
      _: 6,
      B: 4,
      snapshot_id: '',
      x: new JsonFloat(1),
      y: [new JsonFloat(-0), 0.5, 2],
      s: 'a"b\\c\n\u2028/',
    };
    writeState(dir, statePathIn(dir), data, 'durable', 'r');
    expect(stateBytes(dir)).toBe(
      '{"B":4,"_":6,"a":3,"entry_digests":{"c1":"aa","c2":"bb"},"frozen":false,"indexed_size":1280,' +
        '"s":"a\\"b\\\\c\\n\u2028/","snapshot_id":"","version":2,"x":1.0,"y":[-0.0,0.5,2],"é":5,"\uffff":1,"😀":2}\n',
    );
  });

  for (const variant of ['durable', 'nonDurable', 'fence'] as StateWriteVariant[]) {
    it(`${variant}: creates the file with mode 0600 and leaves no .tokens-state-* temp behind`, () => {
      const dir = tmp();
      writeState(dir, statePathIn(dir), { version: 1 }, variant, 'r');
      expect(names(dir)).toEqual(['r.tokens.state.json']);
      expect(fs.statSync(statePathIn(dir)).mode & 0o777).toBe(0o600);
      expect(stateBytes(dir)).toBe('{"version":1}\n');
    });
  }

  it('replaces an existing state by rename (new inode), never in place, and fixes its mode to 0600', () => {
    const dir = tmp();
    const p = statePathIn(dir);
    fs.writeFileSync(p, '{"version":1}\n', { mode: 0o644 });
    fs.chmodSync(p, 0o644);
    const before = fs.statSync(p).ino;
    writeState(dir, p, { version: 2 }, 'durable', 'r');
    expect(fs.statSync(p).ino).not.toBe(before);
    expect(fs.statSync(p).mode & 0o777).toBe(0o600);
    expect(stateBytes(dir)).toBe('{"version":2}\n');
    expect(tempStateFiles(dir)).toEqual([]);
  });

  it('on a failed rename fails with kind io and unlinks its temporary file', () => {
    const dir = tmp();
    const p = statePathIn(dir);
    // A non-empty directory where the state file should be: rename(2) fails.
    fs.mkdirSync(p);
    fs.writeFileSync(path.join(p, 'keep'), 'x');
    const err = expectTokcapErrorSync(() => writeState(dir, p, { version: 1 }, 'durable', 'r'), 'io');
    expect(err.rolloutId).toBe('r');
    expect(tempStateFiles(dir)).toEqual([]);
    expect(fs.readdirSync(p)).toEqual(['keep']);
  });
});

describe('readState (docs/format.md#state-defaults)', () => {
  it('reads a missing state as the defaults, marked as not existing', async () => {
    const dir = tmp();
    const s = await readState(statePathIn(dir), 'r');
    expect(s.exists).toBe(false);
    expect(s.data).toEqual({
      entry_digests: {},
      frozen: false,
      incomplete: false,
      indexed_size: 0,
      retired: false,
      snapshot_id: '',
      version: 0,
    });
    expect(names(dir)).toEqual([]);
  });

  it('fails with corrupt / JSONDecodeError when the file is not JSON (or empty, or has a BOM)', async () => {
    const dir = tmp();
    for (const content of ['{"version": 1', '', '\ufeff{}', '{"a":1} x', 'NaN']) {
      fs.writeFileSync(statePathIn(dir), content);
      const err = await expectTokcapError(readState(statePathIn(dir), 'r'), 'corrupt');
      expect(err.pyClass, JSON.stringify(content)).toBe('JSONDecodeError');
      expect(err.rolloutId).toBe('r');
    }
  });

  it('fails with corrupt / ValueError "Invalid token-capture state for rollout R" for JSON that is not an object', async () => {
    const dir = tmp();
    for (const content of ['[]', '[{"version":1}]', '"x"', '3', 'null', 'true']) {
      fs.writeFileSync(statePathIn(dir, 'r-7'), content);
      const err = await expectTokcapError(readState(statePathIn(dir, 'r-7'), 'r-7'), 'corrupt');
      expect(err.message).toBe('Invalid token-capture state for rollout r-7');
      expect(err.pyClass).toBe('ValueError');
    }
  });

  it('accepts surrounding whitespace and keeps every key as parsed', async () => {
    const dir = tmp();
    fs.writeFileSync(statePathIn(dir), ' \n{"version": 3, "x": 1.0, "frozen": 1}\n\n');
    const s = await readState(statePathIn(dir), 'r');
    expect(s.exists).toBe(true);
    expect(s.data.version).toBe(3);
    expect(s.data.x).toBeInstanceOf(JsonFloat);
    expect(s.data.frozen).toBe(1);
  });
});

describe('state round trip', () => {
  it('read then write preserves unknown keys, their int/float kinds and big integers', async () => {
    const dir = tmp();
    fs.writeFileSync(
      statePathIn(dir),
      '{"version":3,"zz":{"b":1,"a":1e-7},"x":1.0,"y":[1.0,2,-0.0,0.25],"big":18446744073709551615,"neg":-9223372036854775808,"refusals":[]}\n',
    );
    const s = await readState(statePathIn(dir), 'r');
    writeState(dir, statePathIn(dir), s.data, 'durable', 'r');
    expect(stateBytes(dir)).toBe(
      '{"big":18446744073709551615,"neg":-9223372036854775808,"refusals":[],"version":3,"x":1.0,"y":[1.0,2,-0.0,0.25],"zz":{"a":1e-7,"b":1}}\n',
    );
  });

  it('an operation that rewrites the state (mark_incomplete) keeps "x": 1.0 as 1.0 and turns version 2.0 into int 3', async () => {
    const dir = tmp();
    fs.writeFileSync(statePathIn(dir), '{"version":2.0,"x":1.0,"note":"keep me","frozen":false}\n');
    await markIncomplete({ dir }, 'r', 'c1');
    expect(stateBytes(dir)).toBe('{"frozen":false,"incomplete":true,"note":"keep me","version":3,"x":1.0}\n');
    expect(stateJson(dir).version).toBe(3);
    expect(tempStateFiles(dir)).toEqual([]);
  });
});
