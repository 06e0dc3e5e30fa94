import { describe, expect, it } from 'vitest';
import type { RolloutFacts } from '../../../src/facts/rollout-facts.js';
import { failedBuild } from '../../../src/chains/consumer-result.js';
import { ioError, TokcapError } from '../../../src/errors.js';
import { CONDITIONS, ROLLOUT_STATUSES, rolloutStatus } from '../../../src/status/rollout-status.js';
import { summarise } from '../../../src/status/summary.js';
import { verdictOf } from '../../../src/status/verdict.js';

function facts(over: Partial<RolloutFacts> = {}): RolloutFacts {
  return {
    files: ['.tokens.intents', '.tokens.jsonl', '.tokens.state.json'],
    frozen: false,
    retired: false,
    incomplete_flag: false,
    incomplete_marker_calls: [],
    intents: ['a'],
    dangling_intents: [],
    version: 2,
    snapshot_id: '',
    entries: 1,
    indexed_size: 10,
    file_size: 10,
    refusals: [],
    entries_source: 'index',
    torn_tail: false,
    missing_final_newline: false,
    unindexed_bytes: 0,
    bad_lines: 0,
    mtime_ms: 1,
    errors: [],
    ...over,
  };
}

describe('rolloutStatus', () => {
  it('gives one status by precedence: unavailable, retired, frozen, live', () => {
    expect(rolloutStatus(facts())).toEqual({ status: 'live', conditions: [] });
    expect(rolloutStatus(facts({ frozen: true })).status).toBe('frozen');
    expect(rolloutStatus(facts({ frozen: true, retired: true, files: ['.tokens.state.json'] })).status).toBe('retired');
    const locked = rolloutStatus(
      facts({ retired: true, errors: [{ file: 'x', kind: 'lock_timeout', message: 'busy' }] }),
    );
    expect(locked).toEqual({ status: 'unavailable', conditions: [], error: { kind: 'lock_timeout', message: 'busy' } });
    expect(rolloutStatus(facts({ errors: [{ file: 'x', kind: 'io', message: 'not a regular file' }] })).status).toBe(
      'unavailable',
    );
    expect(ROLLOUT_STATUSES).toEqual(['live', 'frozen', 'retired', 'unavailable']);
  });

  it('names every condition that applies, sorted', () => {
    expect([...CONDITIONS]).toEqual([...CONDITIONS].sort());
    const all = rolloutStatus(
      facts({
        files: ['.tokens.incomplete', '.tokens.jsonl'],
        retired: true,
        incomplete_marker_calls: [''],
        dangling_intents: ['a'],
        refusals: ['b'],
        torn_tail: true,
        unindexed_bytes: 5,
        bad_lines: 1,
      }),
    );
    // Retired without a state file cannot happen, but each rule stands on its own.
    expect(all.conditions).toEqual([
      'corrupt',
      'dangling',
      'incomplete',
      'missing_state',
      'refused',
      'retired_with_records',
      'torn_tail',
      'unindexed_tail',
    ]);
    expect(rolloutStatus(facts({ errors: [{ file: 's', kind: 'corrupt', message: 'bad state' }] })).conditions).toEqual(
      ['corrupt'],
    );
    expect(rolloutStatus(facts({ incomplete_flag: true })).conditions).toEqual(['incomplete']);
    // A tombstone alone (state only) is retired, with no condition.
    expect(rolloutStatus(facts({ retired: true, files: ['.tokens.state.json'] }))).toEqual({
      status: 'retired',
      conditions: [],
    });
  });
});

describe('verdictOf and summarise', () => {
  it('counts a rollout that could not be read as unavailable, never trainable or masked', () => {
    const locked = failedBuild('a', 'TimeoutError: busy', 0);
    const v1 = verdictOf({ result: locked, causes: [], readFailure: new TokcapError('lock_timeout', 'busy') });
    expect(v1).toMatchObject({ verdict: 'unavailable', error: { kind: 'lock_timeout', message: 'busy' } });
    // The failure's system error goes with the verdict (it crosses from build workers).
    const denied = Object.assign(new Error("EACCES: permission denied, open '/d/a'"), {
      code: 'EACCES',
      errno: -13,
      syscall: 'open',
      path: '/d/a',
    });
    const v0 = structuredClone(verdictOf({ result: locked, causes: [], readFailure: ioError(denied, '/d/a', 'a') }));
    expect(v0.error).toEqual({
      kind: 'io',
      message: "EACCES: permission denied, open '/d/a'",
      system: { code: 'EACCES', syscall: 'open', path: '/d/a' },
    });
    const retired = failedBuild('b', 'RuntimeError: Token capture for rollout b is retired', 0);
    const v2 = verdictOf({ result: retired, causes: [], readFailure: new TokcapError('retired', 'retired') });
    expect(v2).toMatchObject({ verdict: 'masked', unbuilt: true, error: { kind: 'retired', message: 'retired' } });
    const s = summarise([
      { status: { status: 'unavailable', conditions: [] }, verdict: v1 },
      { status: { status: 'retired', conditions: [] }, verdict: v2 },
      { status: { status: 'live', conditions: ['dangling', 'incomplete'] } },
    ]);
    expect(s.rollouts).toBe(3);
    expect(s.byStatus).toEqual({ live: 1, frozen: 0, retired: 1, unavailable: 1 });
    expect(s.byCondition.dangling).toBe(1);
    expect(s.byVerdict).toEqual({ trainable: 0, masked: 1, unavailable: 1 });
    expect(s.unbuilt).toBe(1);
    expect(s.judged).toBe(2);
  });
});
