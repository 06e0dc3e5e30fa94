/**
 * `--ids-from -` is read only after every usage check, the command's own included (export's
 * `--out`): a usage error exits 2 while standard input is still open, never waiting for it. The
 * binary gets a pipe for its standard input that is never closed; each line must end by itself.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { BIN, cleanEnv, ensureBuilt } from '../support/cli.js';

const ROOT = mkdtempSync(join(tmpdir(), 'tokcap-usage-stdin-'));
const DIR = join(ROOT, 'store');

/** Runs the binary with a standard input that stays open until it exits, or that gets `input`. */
function tokcap(args: string[], env: Record<string, string> = {}, input?: string) {
  const child = spawn('node', [BIN, ...args], { env: cleanEnv(env), stdio: ['pipe', 'ignore', 'pipe'] });
  if (input !== undefined) child.stdin.end(input);
  const stderr = new Promise<string>((done) => {
    let text = '';
    child.stderr.on('data', (b: Buffer) => (text += b.toString()));
    child.stderr.on('end', () => done(text));
  });
  const exited = new Promise<number | null>((done, fail) => {
    child.on('error', fail);
    child.on('exit', (code) => {
      child.stdin.destroy();
      done(code);
    });
  });
  return Promise.all([exited, stderr]).then(([code, text]) => ({ code, stderr: text }));
}

beforeAll(async () => {
  await ensureBuilt();
  await generateStore({ dir: DIR }, { rollouts: 3, calls: 1, prompt: 4, gen: 2, turn: 1, seed: 2 });
  writeFileSync(join(ROOT, 'exists.jsonl'), '');
  mkdirSync(join(ROOT, 'dataset', 'calls'), { recursive: true });
  writeFileSync(join(ROOT, 'dataset', 'calls', 'part-00000-of-00001.parquet'), '');
});

describe('a usage error with --ids-from - does not wait for standard input', () => {
  const lines: [string, string[], Record<string, string>, RegExp][] = [
    ['an unknown option', ['build', DIR, '--ids-from', '-', '--bogus'], {}, /unknown option '--bogus'/],
    [
      'an unknown option, with a worker started before the line is checked',
      ['build', DIR, '--ids-from', '-', '--bogus'],
      { TOKCAP_WORKERS: '2' },
      /unknown option '--bogus'/,
    ],
    ["a check of the command's table", ['freeze', DIR, '--ids-from', '-', '--all'], {}, /--all cannot be combined/],
    [
      'an export into the store it reads',
      ['export', DIR, '--ids-from', '-', '--out', join(DIR, 'out.jsonl')],
      {},
      /inside the capture directory/,
    ],
    [
      'an export onto an existing file',
      ['export', DIR, '--ids-from', '-', '--out', join(ROOT, 'exists.jsonl')],
      {},
      /already exists; use --force/,
    ],
    [
      "an export onto a dataset's existing part",
      ['export', DIR, '--ids-from', '-', '--format', 'parquet', '--out', join(ROOT, 'dataset')],
      {},
      /part-00000-of-00001\.parquet already exists/,
    ],
  ];
  for (const [what, args, env, message] of lines) {
    it(what, async () => {
      const r = await tokcap(args, env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    });
  }

  it('and a line without one reads the ids from it', async () => {
    const r = await tokcap(['export', DIR, '--ids-from', '-', '--out', join(ROOT, 'r1.jsonl')], {}, 'r1\n');
    expect(r).toEqual({ code: 0, stderr: '' });
  });
});
