import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, tokcap } from '../support/cli-binary.js';
import { QWEN3_TOKENIZER_JSON } from '../support/qwen3.js';

/**
 * `inspect DIR ID --json` carries the first divergences the text view shows, as the same
 * objects `build --json` gives (docs/cli.md#divergences), on a `fixture --mix` store, whose
 * rollouts include unresolved boundaries and retried first calls.
 */
describe('inspect DIR ID --json: the first divergences of a broken chain', () => {
  let root: string;
  let dir: string;
  let ids: string[];
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  beforeAll(async () => {
    ensureBuilt();
    root = mkdtempSync(join(tmpdir(), 'tokcap-inspect-divergence-'));
    dir = join(root, 'store');
    const made = await tokcap([
      'fixture',
      dir,
      '--rollouts',
      '16',
      '--calls',
      '3',
      '--prompt',
      '12',
      '--gen',
      '4',
      '--turn',
      '3',
      '--mix',
    ]);
    expect(made.exitCode).toBe(0);
    ids = Object.keys(JSON.parse(String((await tokcap(['inspect', dir, '--json'])).stdout)).rollouts);
  });

  /** Each rollout's `divergences` as `command` gives it, by id (absent members as undefined). */
  async function divergencesBy(command: 'inspect' | 'build', extra: string[]): Promise<Record<string, unknown>> {
    const r = await tokcap([command, dir, ...ids, '--json', ...extra]);
    expect(r.stderr).not.toMatch(/divergence/);
    const doc = JSON.parse(String(r.stdout));
    const rows: [string, { divergences?: unknown }][] =
      command === 'inspect' ? Object.entries(doc.rollouts) : doc.map((x: { rollout_id: string }) => [x.rollout_id, x]);
    return Object.fromEntries(rows.map(([id, x]) => [id, x.divergences]));
  }

  it("gives every rollout build --json's divergences, decoded with a tokenizer", async () => {
    const tok = ['--tokenizer', QWEN3_TOKENIZER_JSON];
    const inspect = await divergencesBy('inspect', tok);
    expect(inspect).toEqual(await divergencesBy('build', tok));
    const broken = Object.entries(inspect).filter(([, d]) => d !== undefined);
    // --mix writes one rollout in eight with an unresolved boundary: 16 rollouts hold some.
    expect(broken.length).toBeGreaterThan(0);
    expect(broken.length).toBeLessThan(ids.length);
    for (const [, list] of broken) {
      for (const d of list as Record<string, any>[]) {
        expect(d).toHaveProperty('call');
        expect(d).toHaveProperty('candidate_parent');
        expect(d).toHaveProperty('position');
        expect(typeof d.generated.text).toBe('string');
        expect(typeof d.rerendered.text).toBe('string');
        expect(d.generated.ids.length).toBeGreaterThan(0);
      }
    }
  });

  it('gives the ids alone without a tokenizer, and the same objects as build', async () => {
    const inspect = await divergencesBy('inspect', ['--tokenizer', 'none']);
    expect(inspect).toEqual(await divergencesBy('build', ['--tokenizer', 'none']));
    const all = Object.values(inspect).flatMap((d) => (d ?? []) as Record<string, any>[]);
    expect(all.length).toBeGreaterThan(0);
    for (const d of all) {
      expect(d.generated).not.toHaveProperty('text');
      expect(d.rerendered).not.toHaveProperty('text');
    }
  });

  it('keeps the FACTS of a rollout as they were, the divergences a last member', async () => {
    const r = await tokcap(['inspect', dir, ...ids, '--json', '--tokenizer', 'none']);
    const deep = await tokcap(['inspect', dir, '--deep', '--json']);
    const named = JSON.parse(String(r.stdout)).rollouts;
    const listed = JSON.parse(String(deep.stdout)).rollouts;
    for (const id of ids) {
      const { divergences, ...facts } = named[id];
      expect(facts).toEqual(listed[id]);
      if (divergences !== undefined) expect(Object.keys(named[id]).at(-1)).toBe('divergences');
    }
  });
});
