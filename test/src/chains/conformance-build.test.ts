import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { consumerResultFor, finishConsumerResult } from '../../../src/chains/consumer-result.js';
import { validateTokenEntry, type TokenEntry } from '../../../src/records/token-entry.js';
import { parseJson } from '../../../src/json/parse-json.js';
import type { JsonValue } from '../../../src/json/value.js';
import { plain } from '../../support/entry-factory.js';

/**
 * Every conformance `build` step whose expected result is not a freeze failure, run from the
 * case's input store alone: the valid lines of `store/<R>.tokens.jsonl` in file order (a torn
 * final line, which the freeze would truncate, is left out), then assemble + finish with the
 * expected snapshot identity and incomplete flag.
 */
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..', '..');
const shared = resolve(root, '..', 'shared', 'conformance', 'cases');
const casesDir = existsSync(shared) ? shared : join(root, 'fixtures', 'conformance', 'cases');

type Step = { op: string; rollout?: string; model?: string; expect: { result?: Record<string, unknown> } };

/** Entries a freeze of the untouched input store would return; undefined if not reproducible. */
function loadEntries(storeDir: string, rolloutId: string): TokenEntry[] | undefined {
  const file = join(storeDir, `${rolloutId}.tokens.jsonl`);
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, ''))
    .filter((l) => l !== '');
  const entries: TokenEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    let value: JsonValue;
    try {
      // The store's own JSON rules: token ids up to 2^64 - 1 stay exact (JSON.parse would round them).
      value = parseJson(lines[i]);
    } catch {
      if (i === lines.length - 1) break; // torn tail: truncated by the freeze
      return undefined;
    }
    try {
      entries.push(validateTokenEntry(value));
    } catch {
      return undefined;
    }
  }
  return entries;
}

type BuildStep = { name: string; caseDir: string; step: Step };
const buildSteps: BuildStep[] = [];
for (const dirName of readdirSync(casesDir).sort()) {
  const c = JSON.parse(readFileSync(join(casesDir, dirName, 'case.json'), 'utf8')) as { steps: Step[] };
  c.steps.forEach((step, i) => {
    if (step.op !== 'build') return;
    buildSteps.push({ name: `${dirName} #${i} build(${step.rollout})`, caseDir: join(casesDir, dirName), step });
  });
}

/** A result carrying no `_capture_snapshot` is one where the freeze itself failed (docs/conformance.md#build). */
const isFreezeFailure = ({ step }: BuildStep): boolean => {
  const r = step.expect.result;
  return r === undefined || ('error' in r && !('_capture_snapshot' in r));
};
const selected = buildSteps.filter((b) => !isFreezeFailure(b));
const skipped = buildSteps.filter(isFreezeFailure);

describe('conformance build steps (from the input store)', () => {
  it('skips exactly the build steps whose expected result is a freeze failure', () => {
    expect(buildSteps.length).toBeGreaterThan(0);
    expect(selected.length + skipped.length).toBe(buildSteps.length);
    // Every skipped step has the README's freeze-failure shape, nothing more: a result that
    // merely carries an error (no entries, builder failure) is still run.
    for (const { name, step } of skipped) {
      expect(step.expect.result, name).toEqual({
        rollout_id: step.rollout,
        builder: 'prefix_merging',
        rebuilt_response: null,
        mask_sample: true,
        error: expect.stringMatching(/^(RuntimeError|ValueError|JSONDecodeError|ValidationError): /),
        metrics: { n_calls: 0 },
      });
    }
    // And every step that is run has a snapshot to compare against.
    for (const { name, step } of selected) {
      expect(step.expect.result, name).toHaveProperty('_capture_snapshot');
    }
  });

  it.each(selected)('$name', ({ caseDir, step }) => {
    const expected = step.expect.result as Record<string, unknown> & {
      metrics: Record<string, unknown>;
      _capture_snapshot: { snapshot_id: string; version: number };
    };
    const rolloutId = step.rollout as string;
    const entries = loadEntries(join(caseDir, 'store'), rolloutId);
    expect(entries, 'store lines reproducible').toBeDefined();
    const result = finishConsumerResult(consumerResultFor(rolloutId, entries as TokenEntry[], step.model ?? ''), {
      incomplete: expected.metrics.capture_incomplete === true,
      snapshot_id: expected._capture_snapshot.snapshot_id,
      version: expected._capture_snapshot.version,
    });
    expect(plain(result)).toEqual(plain(expected));
    // Key order: top level, metrics, and the projection's objects.
    expect(Object.keys(result)).toEqual(Object.keys(expected));
    expect(Object.keys(result.metrics)).toEqual(Object.keys(expected.metrics));
    if (result.rebuilt_response !== null) {
      const exp = expected.rebuilt_response as { output: Record<string, unknown>[]; usage: object };
      expect(Object.keys(result.rebuilt_response)).toEqual(Object.keys(exp));
      expect(Object.keys(result.rebuilt_response.usage)).toEqual(Object.keys(exp.usage));
      expect(result.rebuilt_response.output.map((o) => Object.keys(o))).toEqual(exp.output.map((o) => Object.keys(o)));
    }
  });
});
