import { rmSync } from 'node:fs';
import { diff, diffFiles, normalize, SnapshotPlaceholders } from './conformance-compare.js';
import { inputSnapshotIds, materializeStore, type CaseStep, type ConformanceCase } from './conformance-corpus.js';

/**
 * Keys contract version 2 adds to every `build --json` result (docs/cli.md#contract-v2: `status`,
 * `conditions`; docs/cli.md#verdict and #unavailable: `verdict`, `error_kind`; docs/cli.md#divergences:
 * `divergences`). The reference's
 * dictionary has none of them, and docs/cli.md#conformance-mapping says fields the contract adds
 * are not compared; every other key still is.
 */
const BUILD_CONTRACT_KEYS = ['status', 'conditions', 'verdict', 'error_kind', 'divergences'] as const;

export type StepOutcome = { result: unknown } | { error: { kind: string; message: string } };

/** What a conformance runner drives: the library in-process, or the built binary. */
export interface ConformanceAdapter {
  facts(dir: string): Promise<StepOutcome>;
  verify(dir: string): Promise<StepOutcome>;
  freeze(dir: string, rolloutId: string): Promise<StepOutcome>;
  build(dir: string, rolloutId: string, model: string): Promise<StepOutcome>;
  drop(dir: string, rolloutId: string, snapshotId: string, version: number): Promise<StepOutcome>;
  retire(dir: string, rolloutIds: string[]): Promise<StepOutcome>;
  delete(dir: string, rolloutIds: string[]): Promise<StepOutcome>;
  /** Returns the number of rollouts swept as `result`. */
  sweep(dir: string, olderThanSeconds: number): Promise<StepOutcome>;
}

/** Runs every step of a case against a fresh copy of its store; returns the failures. */
export async function runCase(c: ConformanceCase, adapter: ConformanceAdapter): Promise<string[]> {
  const dir = materializeStore(c);
  const placeholders = new SnapshotPlaceholders(inputSnapshotIds(c));
  const lastSnapshot = new Map<string, string>();
  const failures: string[] = [];
  try {
    for (const [i, step] of c.steps.entries()) {
      const where = `step ${i + 1} (${step.op}${step.rollout ? ' ' + step.rollout : ''})`;
      const problems = await runStep(dir, step, adapter, placeholders, lastSnapshot);
      problems.push(...diffFiles(dir, step.files_after, placeholders).map((p) => `files_after: ${p}`));
      failures.push(...problems.map((p) => `${where}: ${p}`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return failures;
}

async function runStep(
  dir: string,
  step: CaseStep,
  adapter: ConformanceAdapter,
  placeholders: SnapshotPlaceholders,
  lastSnapshot: Map<string, string>,
): Promise<string[]> {
  let outcome: StepOutcome;
  switch (step.op) {
    case 'python_write_refused':
      // Documentation of a refused Python write (docs/conformance.md#running): nothing to run, files unchanged.
      return [];
    case 'facts':
      outcome = await adapter.facts(dir);
      break;
    case 'verify':
      outcome = await adapter.verify(dir);
      break;
    case 'freeze':
      outcome = await adapter.freeze(dir, step.rollout!);
      break;
    case 'build':
      outcome = await adapter.build(dir, step.rollout!, step.model ?? '');
      break;
    case 'drop': {
      const sid = step.snapshot_id === '$last' ? (lastSnapshot.get(step.rollout!) ?? '') : step.snapshot_id!;
      outcome = await adapter.drop(dir, step.rollout!, sid, step.version!);
      break;
    }
    case 'retire':
      outcome = await adapter.retire(dir, step.rollouts!);
      break;
    case 'delete':
      outcome = await adapter.delete(dir, step.rollouts!);
      for (const id of step.rollouts ?? []) placeholders.forget(id);
      break;
    case 'sweep':
      outcome = await adapter.sweep(dir, step.older_than_seconds!);
      break;
    default:
      return [`unknown op ${step.op}`];
  }
  const exp = step.expect;
  if (exp.error) {
    if (!('error' in outcome))
      return [
        `expected error ${exp.error.kind}, got result ${JSON.stringify(normalize(outcome.result)).slice(0, 300)}`,
      ];
    const out: string[] = [];
    if (outcome.error.kind !== exp.error.kind)
      out.push(`expected error kind ${exp.error.kind}, got ${outcome.error.kind} (${outcome.error.message})`);
    if (!outcome.error.message.includes(exp.error.message_contains)) {
      out.push(
        `error message ${JSON.stringify(outcome.error.message)} does not contain ${JSON.stringify(exp.error.message_contains)}`,
      );
    }
    return out;
  }
  if ('error' in outcome) return [`unexpected error ${outcome.error.kind}: ${outcome.error.message}`];
  const actual = normalize(outcome.result) as any;
  const expected = exp.result as any;
  switch (step.op) {
    case 'facts': {
      const out = diff(expected.invalid_names, actual.invalid_names, { placeholders }, '$.invalid_names');
      const want = Object.keys(expected.rollouts).sort();
      const got = Object.keys(actual.rollouts ?? {}).sort();
      if (JSON.stringify(want) !== JSON.stringify(got))
        out.push(`rollouts: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
      for (const id of want) {
        if (!(id in (actual.rollouts ?? {}))) continue;
        out.push(
          ...diff(
            expected.rollouts[id],
            actual.rollouts[id],
            { placeholders, rolloutId: id, allowExtraKeys: true },
            `$.rollouts.${id}`,
          ),
        );
      }
      return out;
    }
    case 'verify': {
      const findings = Array.isArray(actual.findings)
        ? actual.findings.map(({ message: _m, ...rest }: Record<string, unknown>) => rest)
        : actual.findings;
      return diff(expected, { ok: actual.ok, findings }, { placeholders });
    }
    case 'freeze':
    case 'build': {
      let exp2 = expected;
      const out: string[] = [];
      if (step.op === 'build' && actual && typeof actual === 'object') {
        for (const k of BUILD_CONTRACT_KEYS) if (!(k in expected)) delete actual[k];
      }
      if (step.op === 'build' && exp.error_contains !== undefined) {
        if (typeof actual.error !== 'string' || !actual.error.includes(exp.error_contains)) {
          out.push(
            `build error ${JSON.stringify(actual.error)} does not contain ${JSON.stringify(exp.error_contains)}`,
          );
        }
        exp2 = { ...expected, error: actual.error };
      }
      out.push(...diff(exp2, actual, { placeholders, rolloutId: step.rollout }));
      const sid = step.op === 'freeze' ? actual.snapshot_id : actual._capture_snapshot?.snapshot_id;
      if (typeof sid === 'string' && sid) lastSnapshot.set(step.rollout!, sid);
      return out;
    }
    default:
      return diff(expected, actual, { placeholders });
  }
}
