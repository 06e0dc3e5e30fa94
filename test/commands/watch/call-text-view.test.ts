import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initialUi, keyOf, PLAIN_KEY, reduceKey, type KeyContext, type UiState } from '../../../commands/watch/keys.js';
import { rolloutViewLines } from '../../../commands/watch/RolloutView.js';
import { createStyles } from '../../../commands/render/styles.js';
import { loadRolloutDetail, type RolloutDetail } from '../../../src/rollout-read/rollout-detail.js';
import { TokenizerSource } from '../../../src/tokenizer/tokenizer-source.js';
import type { TokenText } from '../../../src/tokenizer/token-text.js';
import { QWEN3_TOKENIZER_JSON, writeQwen3Rollout } from '../../support/qwen3.js';

const ctx: KeyContext = { rows: () => ['r-drift'], page: 3, detailPage: 10, detailMax: 25, callCount: 2 };
const press = (ui: UiState, input: string, key = input.length === 1 ? keyOf(input) : PLAIN_KEY) =>
  reduceKey(ui, input, key, ctx);

describe('the rollout view: a call as text (t, T, Esc)', () => {
  it('steps through the calls and closes back to the rollout, then to the list', () => {
    let ui: UiState = { ...initialUi(), screen: 'detail', openId: 'r-drift', detailOffset: 7 };
    ui = press(ui, 't');
    expect(ui).toMatchObject({ callIndex: 0, detailOffset: 0 });
    expect(press(ui, 't').callIndex).toBe(1);
    expect(press(press(ui, 't'), 't').callIndex).toBe(0);
    expect(press(ui, 'T').callIndex).toBe(1);
    ui = press(ui, '', { ...PLAIN_KEY, escape: true });
    expect(ui).toMatchObject({ screen: 'detail', callIndex: null });
    expect(press(ui, '', { ...PLAIN_KEY, escape: true }).screen).toBe('list');
  });

  describe('with real Qwen3 ids', () => {
    let root: string;
    let detail: RolloutDetail;
    let texts: Map<string, TokenText | null>;
    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'tokcap-watch-text-'));
      writeQwen3Rollout(root, 'r-drift', 'drift');
      detail = await loadRolloutDetail({ dir: root, lockWaitMs: 10_000 }, 'r-drift');
      const answer = await new TokenizerSource({ explicit: QWEN3_TOKENIZER_JSON, hubCaches: [] }).forModel(
        'Qwen/Qwen3-8B',
      );
      texts = new Map([['Qwen/Qwen3-8B', answer.text]]);
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const base = { id: 'r-drift', loading: false, width: 200, now: Date.now(), styles: createStyles(0) };

    it('shows the decoded divergence in the rollout view', () => {
      const lines = rolloutViewLines({ ...base, detail: { ...detail, texts } as RolloutDetail }).join('\n');
      expect(lines).toContain('first divergence (1 broken boundary)');
      expect(lines).toContain('generated `</think>` `⏎⏎` [151668, 271], re-rendered `</think>` `⏎` `⏎`');
    });

    it("shows a call's generation as text, and ids when no tokenizer was loaded", () => {
      const decoded = rolloutViewLines({ ...base, detail: { ...detail, texts } as RolloutDetail, callIndex: 1 });
      expect(decoded[0]).toContain('call 2 of 2');
      expect(decoded.join('\n')).toContain('Three and three.⏎');
      const ids = rolloutViewLines({ ...base, detail, callIndex: 1 });
      expect(ids[0]).toContain('ids: no tokenizer loaded');
      expect(ids.join('\n')).toContain('151668 271');
    });
  });
});
