import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TokcapError } from '../../src/errors.js';
import { collectIds, parseIdLines, readIdsFrom } from '../../commands/cli/ids.js';
import { BIN, ensureBuilt } from '../support/cli-binary.js';

describe('parseIdLines', () => {
  it('takes one id per line, skipping blank and # lines', () => {
    expect(parseIdLines('r1\n\n# a comment\nr2\n   \n\t\nr3')).toEqual(['r1', 'r2', 'r3']);
  });
  it('handles CRLF and a missing final newline', () => {
    expect(parseIdLines('r1\r\nr2\r\n# c\r\n\r\nr3')).toEqual(['r1', 'r2', 'r3']);
  });
  it('keeps lines verbatim (surrounding spaces make an invalid id, not a different one)', () => {
    expect(parseIdLines(' r1\nr2 \n-rf\n.\n')).toEqual([' r1', 'r2 ', '-rf', '.']);
  });
  it('only treats # at the start of a line as a comment', () => {
    expect(parseIdLines('a#b\n #c\n')).toEqual(['a#b', ' #c']);
  });
  it('keeps duplicates (deduplication happens on the whole batch)', () => {
    expect(parseIdLines('r1\nr1\n')).toEqual(['r1', 'r1']);
  });
  it('returns nothing for empty input', () => {
    expect(parseIdLines('')).toEqual([]);
  });
});

describe('readIdsFrom', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokcap-ids-'));

  it('reads a file', async () => {
    const file = join(dir, 'ids.txt');
    writeFileSync(file, '# done\nr1\nr2\n');
    expect(await readIdsFrom(file, Readable.from([]))).toEqual(['r1', 'r2']);
  });

  it('reads standard input for -', async () => {
    const stdin = Readable.from([Buffer.from('r3\n# x\n'), Buffer.from('r4\n')]);
    expect(await readIdsFrom('-', stdin)).toEqual(['r3', 'r4']);
  });

  it('fails with a usage error naming the file when it cannot be read', async () => {
    const missing = join(dir, 'missing.txt');
    const err = await readIdsFrom(missing, Readable.from([])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokcapError);
    expect((err as TokcapError).kind).toBe('usage');
    expect((err as TokcapError).file).toBe(missing);
    expect((err as TokcapError).message).toBe('cannot read --ids-from file: ENOENT: no such file or directory');
  });
});

describe('collectIds', () => {
  it('puts positional ids first, then --ids-from ones, deduplicated in order', async () => {
    const stdin = Readable.from([Buffer.from('b\nd\na\ne\nd\n')]);
    expect(await collectIds(['a', 'b', 'c', 'a'], '-', stdin)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
  it('works without --ids-from', async () => {
    expect(await collectIds(['x', 'x'], undefined, Readable.from([]))).toEqual(['x']);
  });
});

describe('--ids-from - after a usage error', () => {
  // The usage checks come first: the process exits 2 while standard input is still open.
  it('exits 2 at once, without reading standard input', async () => {
    ensureBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'tokcap-ids-usage-'));
    const lines = [
      ['freeze', dir, '--all', '--ids-from', '-'],
      ['export', dir, '--out', join(dir, 'out'), '--format', 'tinker', '--fields', 'a', '--ids-from', '-'],
      ['delete', dir, 'not/an/id', '--ids-from', '-'],
    ];
    for (const args of lines) {
      const child = spawn(process.execPath, [BIN, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, TOKCAP_DIR: '' },
      });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      child.stdin.destroy();
      expect(code, args.join(' ')).toBe(2);
      expect(stderr, args.join(' ')).toMatch(/^tokcap: .*\n$/);
    }
  });
});
