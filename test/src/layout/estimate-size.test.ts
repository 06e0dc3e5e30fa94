import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateJsonlBytes } from '../../../src/layout/estimate-size.js';
import { useTempDirs } from '../../support/temp-dirs.js';

const tempDir = useTempDirs('tokcap-estimate-');

describe('estimateJsonlBytes', () => {
  it('is exact when every JSONL file is sampled; missing and non-regular files count as empty', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.tokens.jsonl'), 'x'.repeat(100));
    writeFileSync(join(dir, 'b.tokens.jsonl'), 'x'.repeat(300));
    symlinkSync(join(dir, 'b.tokens.jsonl'), join(dir, 'c.tokens.jsonl'));
    expect(estimateJsonlBytes(dir, ['a', 'b'])).toBe(400);
    expect(estimateJsonlBytes(dir, ['a', 'b', 'c', 'missing'])).toBe(400);
    expect(estimateJsonlBytes(dir, [])).toBe(0);
  });

  it('scales the mean of an evenly spaced sample to all ids', () => {
    const dir = tempDir();
    const ids = Array.from({ length: 200 }, (_, i) => `r${i}`);
    for (const id of ids) writeFileSync(join(dir, `${id}.tokens.jsonl`), 'x'.repeat(50));
    expect(estimateJsonlBytes(dir, ids, 16)).toBe(200 * 50);
  });
});
