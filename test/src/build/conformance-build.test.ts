import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { consumerResultFor, finishConsumerResult } from '../../../src/build/consumer-result.js';
import { validateTokenEntry, type TokenEntry } from '../../../src/records/token-entry.js';
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
      value = JSON.parse(lines[i]) as JsonValue;
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

const selected: { name: string; caseDir: string; step: Step }[] = [];
const skipped: string[] = [];
for (const dirName of readdirSync(casesDir).sort()) {
  const c = JSON.parse(readFileSync(join(casesDir, dirName, 'case.json'), 'utf8')) as { steps: Step[] };
  c.steps.forEach((step, i) => {
    if (step.op !== 'build') return;
    const r = step.expect.result;
    const label = `${dirName} #${i} build(${step.rollout})`;
    if (r === undefined || ('error' in r && !('_capture_snapshot' in r))) {
      skipped.push(`${label}: freeze failure`);
      return;
    }
    selected.push({ name: label, caseDir: join(casesDir, dirName), step });
  });
}

describe('conformance build steps (from the input store)', () => {
  it('skips exactly the build steps whose expected result is a freeze failure', () => {
    expect(selected.length).toBe(30);
    expect(skipped).toEqual([
      '019-corrupt-middle-line #4 build(t19-r0-a0): freeze failure',
      '020-conflicting-durable-payloads #4 build(t20-r0-a0): freeze failure',
      '022-already-frozen #14 build(t22-r0-a0): freeze failure',
      '024-retire-mix #6 build(t24-r0-a0): freeze failure',
      '027-schema-versions #4 build(t27-r1-a0): freeze failure',
      '029-rollout-id-names #6 build(bad id): freeze failure',
      '030-state-not-an-object #4 build(t29-r0-a0): freeze failure',
      '036-invalid-entry-line #4 build(t35-r0-a0): freeze failure',
      '037-index-past-end #4 build(t36-r0-a0): freeze failure',
    ]);
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
