import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyName, scanDirectory, sortedRolloutIds } from '../../../src/layout/scan-directory.js';
import { useTempDirs } from '../../support/store.js';

const tmp = useTempDirs();

describe('classifyName (docs/format.md#classifying-names)', () => {
  it('recognizes temporary state files: ".tokens-state-" + exactly 8 of [a-z0-9_]', () => {
    for (const name of ['.tokens-state-abcd1234', '.tokens-state-________', '.tokens-state-0a_b9z_q']) {
      expect(classifyName(name), name).toEqual({ kind: 'temp_state', name });
    }
    for (const name of [
      '.tokens-state-abcd123',
      '.tokens-state-abcd12345',
      '.tokens-state-ABCD1234',
      '.tokens-state-abcd-123',
      'x.tokens-state-abcd1234',
    ]) {
      expect(classifyName(name).kind, name).toBe('foreign');
    }
  });

  it('maps each of the five suffixes to its rollout and file kind', () => {
    expect(classifyName('r.tokens.jsonl')).toEqual({
      kind: 'capture',
      name: 'r.tokens.jsonl',
      rolloutId: 'r',
      file: 'jsonl',
    });
    expect(classifyName('r.tokens.state.json')).toMatchObject({ kind: 'capture', rolloutId: 'r', file: 'state' });
    expect(classifyName('r.tokens.intents')).toMatchObject({ kind: 'capture', rolloutId: 'r', file: 'intents' });
    expect(classifyName('r.tokens.incomplete')).toMatchObject({ kind: 'capture', rolloutId: 'r', file: 'incomplete' });
    expect(classifyName('r.tokens.lock')).toMatchObject({ kind: 'capture', rolloutId: 'r', file: 'lock' });
  });

  it('accepts odd but valid ids: "..x", "-x_", ".", "..", and "a.tokens" owning "a.tokens.tokens.jsonl"', () => {
    expect(classifyName('..x.tokens.jsonl')).toMatchObject({ kind: 'capture', rolloutId: '..x', file: 'jsonl' });
    expect(classifyName('-x_.tokens.state.json')).toMatchObject({ kind: 'capture', rolloutId: '-x_', file: 'state' });
    expect(classifyName('..tokens.intents')).toMatchObject({ kind: 'capture', rolloutId: '.', file: 'intents' });
    expect(classifyName('...tokens.jsonl')).toMatchObject({ kind: 'capture', rolloutId: '..', file: 'jsonl' });
    expect(classifyName('a.tokens.tokens.jsonl')).toMatchObject({
      kind: 'capture',
      rolloutId: 'a.tokens',
      file: 'jsonl',
    });
    expect(classifyName('a.tokens.jsonl.tokens.state.json')).toMatchObject({
      kind: 'capture',
      rolloutId: 'a.tokens.jsonl',
      file: 'state',
    });
  });

  it('reports capture-suffixed names with an invalid id (including the empty id) as invalid names', () => {
    expect(classifyName('bad id.tokens.jsonl')).toEqual({
      kind: 'invalid_name',
      name: 'bad id.tokens.jsonl',
      file: 'jsonl',
    });
    expect(classifyName('.tokens.jsonl')).toEqual({ kind: 'invalid_name', name: '.tokens.jsonl', file: 'jsonl' });
    expect(classifyName('a+b.tokens.state.json')).toMatchObject({ kind: 'invalid_name', file: 'state' });
    expect(classifyName('é.tokens.intents')).toMatchObject({ kind: 'invalid_name', file: 'intents' });
    expect(classifyName('[r1].tokens.incomplete')).toMatchObject({ kind: 'invalid_name', file: 'incomplete' });
  });

  it('never reports a lock file as an invalid name', () => {
    expect(classifyName('bad id.tokens.lock')).toEqual({ kind: 'foreign', name: 'bad id.tokens.lock' });
    expect(classifyName('.tokens.lock')).toEqual({ kind: 'foreign', name: '.tokens.lock' });
  });

  it('ignores everything else as foreign', () => {
    for (const name of [
      'notes.txt',
      'r.tokens.jsonl.bak',
      'r.jsonl',
      'r.tokens',
      'r.tokens.state',
      'r.TOKENS.JSONL',
      'tokens.jsonl',
      '.tokens-state-',
    ]) {
      expect(classifyName(name), name).toEqual({ kind: 'foreign', name });
    }
  });
});

describe('scanDirectory', () => {
  function populate(files: string[]): string {
    const dir = tmp();
    for (const f of files) fs.writeFileSync(path.join(dir, f), '');
    return dir;
  }

  it('groups capture files by rollout, dot-files included, and sorts invalid names by code point', async () => {
    const dir = populate([
      'r1.tokens.jsonl',
      'r1.tokens.state.json',
      'r1.tokens.lock',
      '..x.tokens.jsonl',
      '-x_.tokens.intents',
      '.hidden.tokens.incomplete',
      'a.tokens.tokens.jsonl',
      'bad id.tokens.jsonl',
      '.tokens.jsonl',
      'a+b.tokens.state.json',
      'Zed id.tokens.intents',
      'bad id.tokens.lock',
      'lonely.tokens.lock',
      '.tokens-state-abcd1234',
      'notes.txt',
      'r1.tokens.jsonl.bak',
    ]);
    fs.mkdirSync(path.join(dir, 'subdir.tokens.jsonl.d'));
    const listing = await scanDirectory(dir);
    const rollouts = Object.fromEntries([...listing.rollouts].map(([id, files]) => [id, [...files].sort()]));
    expect(rollouts).toEqual({
      r1: ['jsonl', 'state'],
      '..x': ['jsonl'],
      '-x_': ['intents'],
      '.hidden': ['incomplete'],
      'a.tokens': ['jsonl'],
    });
    expect(listing.invalidNames).toEqual([
      '.tokens.jsonl',
      'Zed id.tokens.intents',
      'a+b.tokens.state.json',
      'bad id.tokens.jsonl',
    ]);
    expect(listing.tempStateFiles).toEqual(['.tokens-state-abcd1234']);
    expect(listing.lockOnly).toEqual(['lonely']);
    expect(sortedRolloutIds(listing)).toEqual(['-x_', '..x', '.hidden', 'a.tokens', 'r1']);
  });

  it('does not list a rollout that has only a lock file', async () => {
    const listing = await scanDirectory(populate(['gone.tokens.lock']));
    expect(listing.rollouts.size).toBe(0);
    expect(listing.lockOnly).toEqual(['gone']);
    expect(listing.invalidNames).toEqual([]);
  });

  it('fails with kind io for a missing directory', async () => {
    await expect(scanDirectory(path.join(tmp(), 'nope'))).rejects.toMatchObject({ kind: 'io' });
  });
});
