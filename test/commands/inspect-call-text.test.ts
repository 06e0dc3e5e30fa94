import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChains } from '../../src/chains/chain-builder.js';
import { callTokens } from '../../src/call-text/call-tokens.js';
import { callTextLines, FOLD_AFTER_LINES } from '../../commands/render/call-text-lines.js';
import { createStyles } from '../../commands/render/styles.js';
import { ensureBuilt, tokcap } from '../support/cli-binary.js';
import { makeEntry } from '../support/entry-factory.js';
import { qwen3Store } from '../support/qwen3.js';

describe('inspect DIR ID: the first divergence and a call’s text (real Qwen3 ids)', () => {
  let dir: string;
  let env: Record<string, string>;
  let remove = () => {};
  beforeAll(() => {
    ensureBuilt();
    ({ dir, env, remove } = qwen3Store('tokcap-call-text-', [
      ['r-drift', 'drift'],
      ['r-clean', 'clean'],
    ]));
  });
  afterAll(() => remove());

  it('shows the divergence under the verdict, decoded, with both windows', async () => {
    const r = await tokcap(['inspect', dir, 'r-drift'], { env });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('first divergence (1 broken boundary)');
    expect(r.stdout).toContain('call-002 diverges from call-001 at token');
    expect(r.stdout).toMatch(/generated @\d+ .*`<\/think>` `⏎⏎`/);
    expect(r.stdout).toMatch(/re-rendered @\d+ .*`<\/think>` `⏎` `⏎`/);
  });

  it('--call shows the added prompt and the generation as text, plain with --color never', async () => {
    const r = await tokcap(['inspect', dir, 'r-clean', '--call', 'call-002', '--color', 'never'], { env });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stdout).toMatch(/┆ \d+ tokens from its parent call-001 \(prompt \+ generation\), folded/);
    expect(r.stdout).toContain('<|im_start|>user⏎');
    expect(r.stdout).toContain('And 3+3?<|im_end|>⏎');
    expect(r.stdout).toContain('generation (11 tokens)');
    expect(r.stdout).toContain('Three and three.⏎');
    expect(r.stdout).not.toContain('log-prob:');
  });

  it('--call shades generated tokens by log-probability on a colour terminal, with a legend', async () => {
    const r = await tokcap(['inspect', dir, 'r-clean', '--call', 'call-002', '--color', 'always'], { env });
    expect(r.stdout).toContain('log-prob:');
    expect(r.stdout).toContain('\x1b[33m');
  });

  it('--call names a call the rollout does not have (exit 3)', async () => {
    const r = await tokcap(['inspect', dir, 'r-clean', '--call', 'call-009'], { env });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain('it has no call call-009');
  });
});

describe('callTextLines', () => {
  it('folds a long generation to a count, keeping its head and tail', () => {
    const gen = Array.from({ length: 5000 }, (_, i) => i);
    const build = buildChains([makeEntry({ id: 'a', prompt: [1, 2], gen })]);
    const lines = callTextLines(callTokens(build, 'a')!, null, 80, createStyles(0));
    const folded = lines.find((l) => l.includes('lines folded'));
    expect(folded).toMatch(/┆ … [\d,]+ lines folded \([\d,]+ tokens\) …/);
    expect(lines.length).toBeLessThan(FOLD_AFTER_LINES + 10);
    expect(lines[lines.length - 1]).toContain('4999');
  });
});
