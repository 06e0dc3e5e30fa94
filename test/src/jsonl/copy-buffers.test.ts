import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { copyBuffersKept, giveBackCopyBuffer, takeCopyBuffer } from '../../../src/jsonl/copy-buffers.js';
import { readJsonlBytes } from '../../../src/jsonl/read-jsonl-bytes.js';
import { jsonlViaMain } from '../../../src/jsonl/remote-jsonl.js';
import { readSnapshotReadOnly } from '../../../src/ops/read-snapshot.js';
import { canonicalLine, entry, paths, useTempDirs } from '../../support/store.js';

const tmp = useTempDirs();

describe('copy buffers', () => {
  it('are views at offset 0 of memory of their own, reused once given back', () => {
    const a = takeCopyBuffer(100_000);
    expect(a.length).toBe(100_000);
    expect(a.byteOffset).toBe(0);
    expect(a.buffer.byteLength).toBeGreaterThanOrEqual(100_000);
    giveBackCopyBuffer(a.buffer as ArrayBuffer);
    const b = takeCopyBuffer(50_000);
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(50_000);
    // Taken: not handed out twice.
    expect(takeCopyBuffer(50_000).buffer).not.toBe(a.buffer);
  });

  it('keep a bounded number, not detached or very large ones, and each only once', () => {
    for (let i = 0; i < 40; i++) giveBackCopyBuffer(takeCopyBuffer(70_000 + i).buffer as ArrayBuffer);
    const x = takeCopyBuffer(70_000);
    giveBackCopyBuffer(x.buffer as ArrayBuffer);
    giveBackCopyBuffer(x.buffer as ArrayBuffer);
    const kept = copyBuffersKept();
    expect(kept.count).toBeLessThanOrEqual(24);
    giveBackCopyBuffer(new ArrayBuffer(0));
    giveBackCopyBuffer(new ArrayBuffer(64 * 2 ** 20));
    expect(copyBuffersKept()).toEqual(kept);
  });

  it('let readJsonlBytes reuse one copy for the next J, whose bytes are its own', async () => {
    const dir = tmp();
    const one = paths(dir, 'a');
    const two = paths(dir, 'b');
    fs.writeFileSync(one.jsonl, 'x'.repeat(200_000) + '\n');
    fs.writeFileSync(two.jsonl, 'y'.repeat(150_000) + '\n');
    const first = (await readJsonlBytes(one, 'a', { waitMs: 100 }))!;
    expect(first.bytes.length).toBe(200_001);
    const memory = first.bytes.buffer;
    first.release!();
    first.release!();
    const second = (await readJsonlBytes(two, 'b', { waitMs: 100 }))!;
    expect(second.bytes.buffer).toBe(memory);
    expect(second.bytes.toString()).toBe('y'.repeat(150_000) + '\n');
    expect(second.lastByte).toBe(0x0a);
    // A lock file was neither needed nor created.
    expect(fs.existsSync(one.lock)).toBe(false);
  });

  it('serve one read-only snapshot after another: what the first parsed is untouched by the next copy', async () => {
    const dir = tmp();
    for (const [id, prompt] of [
      ['a', [1, 2, 3]],
      ['b', [7, 8, 9, 10]],
    ] as const) {
      const e = entry('c1', { rollout: id, prompt: [...prompt], gen: [4] });
      fs.writeFileSync(paths(dir, id).jsonl, canonicalLine(e));
    }
    const first = await readSnapshotReadOnly({ dir }, 'a');
    const before = JSON.stringify(first.entries);
    const second = await readSnapshotReadOnly({ dir }, 'b');
    expect(JSON.stringify(first.entries)).toBe(before);
    expect(first.entries[0].prompt_token_ids).toEqual([1, 2, 3]);
    expect(second.entries[0].prompt_token_ids).toEqual([7, 8, 9, 10]);
  });

  it('are given back by a worker once, through the channel to the main thread', async () => {
    const memory = new ArrayBuffer(16);
    const given: ArrayBuffer[] = [];
    const read = jsonlViaMain(
      async () => ({ bytes: new Uint8Array(memory, 0, 4), from: 0, size: 4, lastByte: 10 }),
      (m) => given.push(m),
    );
    const r = (await read(paths(tmp(), 'r'), 'r', { waitMs: 10 }))!;
    expect(r.bytes.length).toBe(4);
    r.release!();
    r.release!();
    expect(given).toEqual([memory]);
  });
});
