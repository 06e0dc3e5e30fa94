/**
 * `appendMembers` joins a serialised result and its status members without copying the result:
 * the parts, written one after the other, are the object with the members as its last keys.
 */
import { describe, expect, it } from 'vitest';
import { appendMembers } from '../../../src/rollout-read/result-status.js';

const joined = (parts: Uint8Array[]) => Buffer.concat(parts).toString('utf8');

describe('appendMembers', () => {
  it('appends after the last key, keeping a final LF, and shares the result bytes', () => {
    const json = Buffer.from('{"rollout_id":"r","x":[1,2]}\n');
    const parts = appendMembers(json, { status: 'live', conditions: [], verdict: 'trainable' });
    expect(joined(parts)).toBe('{"rollout_id":"r","x":[1,2],"status":"live","conditions":[],"verdict":"trainable"}\n');
    expect(parts[0].buffer).toBe(json.buffer);
    expect(JSON.parse(joined(appendMembers(Buffer.from('{"a":1}'), { b: 2 })))).toEqual({ a: 1, b: 2 });
  });

  it('fills an empty object, and leaves a result alone when there is nothing to append', () => {
    expect(joined(appendMembers(Buffer.from('{}'), { status: 'frozen' }))).toBe('{"status":"frozen"}');
    expect(joined(appendMembers(Buffer.from('{"a":1}'), {}))).toBe('{"a":1}');
  });

  it('refuses bytes that are not a serialised object', () => {
    expect(() => appendMembers(Buffer.from('[1]'), { status: 'live' })).toThrow(/not a serialised JSON object/);
  });
});
