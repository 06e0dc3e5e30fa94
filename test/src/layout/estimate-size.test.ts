import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateJsonlBytes, firstJsonlSizes } from '../../../src/layout/estimate-size.js';
import {
  earlyWorkerPays,
  EARLY_WORKER_MIN_BYTES,
  EARLY_WORKER_MIN_ROLLOUT_BYTES,
  WORKER_MIN_BYTES,
} from '../../../src/threads/job-workers.js';
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

describe('firstJsonlSizes', () => {
  it('counts the regular JSONL files and their bytes, nothing else', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.tokens.jsonl'), 'x'.repeat(100));
    writeFileSync(join(dir, 'b.tokens.jsonl'), 'x'.repeat(300));
    writeFileSync(join(dir, 'b.tokens.state.json'), 'x'.repeat(1000));
    symlinkSync(join(dir, 'b.tokens.jsonl'), join(dir, 'c.tokens.jsonl'));
    expect(firstJsonlSizes(dir)).toEqual({ files: 2, bytes: 400 });
    expect(firstJsonlSizes(join(dir, 'missing'))).toEqual({ files: 0, bytes: 0 });
  });

  it('looks at the first entries only', () => {
    const dir = tempDir();
    for (let i = 0; i < 40; i++) writeFileSync(join(dir, `r${i}.tokens.jsonl`), 'x'.repeat(10));
    expect(firstJsonlSizes(dir, 10)).toEqual({ files: 10, bytes: 100 });
  });
});

describe('earlyWorkerPays', () => {
  it('from EARLY_WORKER_MIN_BYTES in large rollouts, from WORKER_MIN_BYTES in any', () => {
    const large = EARLY_WORKER_MIN_ROLLOUT_BYTES * 2;
    expect(earlyWorkerPays(EARLY_WORKER_MIN_BYTES, EARLY_WORKER_MIN_BYTES / large)).toBe(true);
    expect(earlyWorkerPays(EARLY_WORKER_MIN_BYTES - 1, EARLY_WORKER_MIN_BYTES / large)).toBe(false);
    // Many small rollouts: the threads would take turns for each one's lock.
    expect(earlyWorkerPays(EARLY_WORKER_MIN_BYTES, EARLY_WORKER_MIN_BYTES / 1024)).toBe(false);
    expect(earlyWorkerPays(WORKER_MIN_BYTES, WORKER_MIN_BYTES / 1024)).toBe(true);
  });
});
