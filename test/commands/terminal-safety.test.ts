/**
 * docs/cli.md#terminal-safety: text output never writes a raw control character taken from the
 * store. A call id, an intent line and a marker carrying an OSC title change, a screen clear and a
 * bidi override must come out escaped from every text renderer; --json escapes as JSON does.
 */
import { describe, expect, it } from 'vitest';
import { appendEntry, beginCall, markIncomplete } from '../../src/ops/writer.js';
import { terminalSafe } from '../../src/text/terminal-safe.js';
import { entry, useTempDirs } from '../support/store.js';
import { cli, fakeIo } from '../support/cli.js';

const temp = useTempDirs('tokcap-term-');
const TITLE = 'c\x1b]0;pwned\x07';
const CLEAR = 'd\x1b[2J\x1b[H\u009b1m';
const BIDI = 'e\u202eevil\u2066';

// Any character that can move, retitle, clear or reorder a terminal (colour sequences excepted
// where colour is on: checked separately below).
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

async function hostileStore(): Promise<string> {
  const dir = temp();
  const store = { dir, lockWaitMs: 5000 };
  // No digest: verify-digests reports a finding that names the call.
  await appendEntry(store, { ...entry(TITLE, { rollout: 'r' }), digest: null, cum_len: null });
  await appendEntry(store, entry(CLEAR, { rollout: 'r', parent: TITLE, prompt: [1, 2, 3, 4, 5, 6], gen: [7] }));
  await beginCall(store, 'r', BIDI);
  await markIncomplete(store, 'r', BIDI);
  return dir;
}

describe('terminalSafe', () => {
  it('escapes C0, DEL, C1, bidi controls and line separators, and nothing printable', () => {
    expect(terminalSafe('a\x1b]0;x\x07b')).toBe('a\\x1b]0;x\\x07b');
    expect(terminalSafe('\x00\t\n\r\x7f\x85\x9b')).toBe('\\x00\\x09\\x0a\\x0d\\x7f\\x85\\x9b');
    expect(terminalSafe('\u202e\u2066\u2069\u200e\u200f\u061c\u2028\u2029')).toBe(
      '\\u202e\\u2066\\u2069\\u200e\\u200f\\u061c\\u2028\\u2029',
    );
    expect(terminalSafe('a\nb', { keepNewlines: true })).toBe('a\nb');
    expect(terminalSafe('plain ünïcode ✓ 日本 \\x1b')).toBe('plain ünïcode ✓ 日本 \\x1b');
  });

  it('is idempotent', () => {
    const once = terminalSafe(`${TITLE}${CLEAR}${BIDI}`);
    expect(terminalSafe(once)).toBe(once);
    expect(once).not.toMatch(RAW);
  });
});

describe('text output escapes store text', () => {
  // [name, argv, what of the store the text shows, escaped (undefined: it shows no call id)]
  const commands: [string, (dir: string) => string[], string | undefined][] = [
    ['inspect', (dir) => ['inspect', dir], undefined],
    ['inspect ID', (dir) => ['inspect', dir, 'r'], '\\x1b[2J\\x1b[H\\x9b1m'],
    ['build', (dir) => ['build', dir, 'r'], undefined],
    ['verify-digests', (dir) => ['verify-digests', dir, 'r'], 'c\\x1b]0;pwned\\x07'],
    ['watch --once', (dir) => ['watch', dir, '--once'], undefined],
    ['freeze', (dir) => ['freeze', dir, 'r'], 'e\\u202eevil\\u2066'],
  ];
  for (const [name, args, shown] of commands) {
    it(`${name}: no raw control character on stdout or stderr`, async () => {
      const dir = await hostileStore();
      const { stdout, stderr } = await cli(args(dir));
      expect(stdout).not.toMatch(RAW);
      expect(stderr).not.toMatch(RAW);
      if (shown !== undefined) expect(stdout).toContain(shown);
    });
  }

  it('with colour on only colour sequences pass, never a store escape', async () => {
    const dir = await hostileStore();
    for (const args of [
      ['inspect', dir, 'r'],
      ['freeze', dir, 'r'],
    ]) {
      const { stdout } = await cli(args, fakeIo({ stdoutTTY: true }));
      // eslint-disable-next-line no-control-regex
      const withoutColour = stdout.replace(/\x1b\[[0-9;]*m/g, '');
      expect(withoutColour).not.toMatch(RAW);
      expect(stdout).toContain('\\u202e');
    }
  });

  it('an error line naming a hostile file is escaped', async () => {
    const dir = temp();
    const { stderr, code } = await cli(['inspect', `${dir}/no\x1b]0;pwned\x07such`]);
    expect(code).toBe(3);
    expect(stderr).not.toMatch(RAW);
    expect(stderr).toContain('\\x1b]0;pwned\\x07');
  });

  it('--json keeps the strings, escaped as JSON does', async () => {
    const dir = await hostileStore();
    const { stdout } = await cli(['freeze', dir, 'r', '--json']);
    // eslint-disable-next-line no-control-regex
    expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    const doc = JSON.parse(stdout) as { entry_call_ids: string[] }[];
    expect(doc[0].entry_call_ids).toEqual([TITLE, CLEAR]);
  });
});
