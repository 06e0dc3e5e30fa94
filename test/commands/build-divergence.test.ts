import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, tokcap } from '../support/cli-binary.js';
import { firstCall, hfHomeWithQwen3, QWEN3_TOKENIZER_JSON, THINK_END, writeQwen3Rollout } from '../support/qwen3.js';

describe('build explains where a broken chain’s tokens part (real Qwen3 ids, Python writer)', () => {
  let dir: string;
  let hfHome: string;
  let emptyHome: string;
  let root: string;
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  beforeAll(() => {
    ensureBuilt();
    root = mkdtempSync(join(tmpdir(), 'tokcap-divergence-'));
    dir = join(root, 'store');
    mkdirSync(dir);
    writeQwen3Rollout(dir, 'r-clean', 'clean');
    writeQwen3Rollout(dir, 'r-drift', 'drift');
    writeQwen3Rollout(dir, 'r-dropped', 'dropped-reasoning');
    hfHome = hfHomeWithQwen3(root);
    emptyHome = join(root, 'empty-home');
    mkdirSync(emptyHome);
  });

  const at = () => firstCall().prompt.length + firstCall().generation.indexOf(THINK_END) + 1;

  it('names the call, the candidate parent, the position and both decoded runs, the tokenizer found through HF_HOME', async () => {
    const r = await tokcap(['build', dir, 'r-drift'], { env: { HF_HOME: hfHome, HF_HUB_CACHE: '', HOME: emptyHome } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(
      `call-002 diverges from call-001 at token ${at().toLocaleString('en-US')}: generated \`</think>\` \`⏎⏎\` [151668, 271], re-rendered \`</think>\` \`⏎\` \`⏎\` [151668, 198, 198]`,
    );
  });

  it('shows the ids alone without a tokenizer, and says which paths it tried', async () => {
    const r = await tokcap(['build', dir, 'r-drift'], {
      env: { HF_HOME: join(emptyHome, 'none'), HF_HUB_CACHE: '', HOME: emptyHome },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(
      `call-002 diverges from call-001 at token ${at().toLocaleString('en-US')}: generated [151668, 271], re-rendered [151668, 198, 198]`,
    );
    expect(r.stdout).toContain('no tokenizer for Qwen/Qwen3-8B in the Hugging Face cache (tried ');
    expect(r.stdout).toContain(
      join(emptyHome, 'none', 'hub', 'models--Qwen--Qwen3-8B', 'snapshots', '*', 'tokenizer.json'),
    );
    // Nobody asked for text: a model missing from the cache is said beside the ids, never on stderr.
    expect(r.stderr).toBe('');
  });

  it('carries the divergence in --json: position, both id windows, both texts and the candidate parent', async () => {
    const r = await tokcap(['build', dir, '--json', '--tokenizer', QWEN3_TOKENIZER_JSON], { env: { HOME: emptyHome } });
    expect(r.exitCode).toBe(0);
    const results = JSON.parse(String(r.stdout)) as any[];
    const byId = Object.fromEntries(results.map((x) => [x.rollout_id, x]));
    expect(byId['r-clean'].divergences).toBeUndefined();
    const [d] = byId['r-drift'].divergences;
    expect(d).toMatchObject({
      call: 'call-002',
      kind: 'boundary',
      reason: 'parent_unresolved',
      candidate_parent: 'call-001',
      position: at(),
      shared_tokens: at(),
      candidate_part: 'generation',
    });
    expect(d.hunk).toEqual({ start: at() - 1, generated: [151668, 271], rerendered: [151668, 198, 198] });
    expect(d.generated.start).toBe(at() - 8);
    expect(d.generated.ids).toHaveLength(16);
    expect(d.generated.text).toContain('</think>\n\nThe answer');
    expect(d.rerendered.text).toContain('</think>\n\nThe answer');
    // The dropped reasoning: the re-rendered prompt goes straight to the answer where <think> was generated.
    const [dropped] = byId['r-dropped'].divergences;
    expect(dropped).toMatchObject({
      call: 'call-002',
      candidate_parent: 'call-001',
      position: firstCall().prompt.length,
    });
    expect(dropped.generated.text).toMatch(/assistant\n<think>\nAdd/);
    expect(dropped.rerendered.text).toMatch(/assistant\nThe answer is 4\./);
  });

  it('keeps ids only with --tokenizer none', async () => {
    const none = await tokcap(['build', dir, 'r-drift', '--tokenizer', 'none'], { env: { HF_HOME: hfHome } });
    expect(none.stdout).toContain('generated [151668, 271], re-rendered [151668, 198, 198]');
  });

  it('refuses a --tokenizer path that does not exist (exit 2, one line)', async () => {
    const r = await tokcap(['build', dir, 'r-clean', '--tokenizer', join(emptyHome, 'missing.json')]);
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr).trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('missing.json: no such file or directory');
  });
});
