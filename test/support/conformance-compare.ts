import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JsonFloat } from '../../src/json/value.js';

/**
 * Comparison rules of docs/conformance.md#running: JSON deep equality ignoring key order, numbers by
 * value, and the "<snapshot_id>" placeholder, which matches a non-empty id minted during the case
 * and must stand for the same id per rollout until that rollout is deleted.
 */
export class SnapshotPlaceholders {
  private minted = new Map<string, string>();
  constructor(private readonly inputIds: Set<string>) {}

  check(rolloutId: string, actual: unknown): string | undefined {
    if (typeof actual !== 'string' || actual === '')
      return `expected a minted snapshot id, got ${JSON.stringify(actual)}`;
    if (this.inputIds.has(actual)) return `snapshot id ${actual} was already in the input store`;
    const known = this.minted.get(rolloutId);
    if (known !== undefined && known !== actual)
      return `snapshot id of ${rolloutId} changed from ${known} to ${actual}`;
    this.minted.set(rolloutId, actual);
    return undefined;
  }

  forget(rolloutId: string): void {
    this.minted.delete(rolloutId);
  }
}

export function normalize(v: unknown): unknown {
  if (v instanceof JsonFloat) return v.value;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = normalize(x);
    return out;
  }
  return v;
}

export interface CompareOptions {
  placeholders: SnapshotPlaceholders;
  /** Rollout the compared value belongs to (for placeholder consistency). */
  rolloutId?: string;
  /** Keys of actual objects that expected does not list are allowed (contract-added fields). */
  allowExtraKeys?: boolean;
  /** Called for object keys to switch the rollout context (facts `rollouts`, state files). */
}

/** Returns a list of differences (empty when equal). */
export function diff(expected: unknown, actual: unknown, opts: CompareOptions, path = '$'): string[] {
  actual = normalize(actual);
  if (expected === '<snapshot_id>') {
    const why = opts.placeholders.check(opts.rolloutId ?? '?', actual);
    return why ? [`${path}: ${why}`] : [];
  }
  if (typeof expected === 'number' || typeof actual === 'number') {
    return expected === actual || (typeof expected === 'number' && typeof actual === 'number' && expected === actual)
      ? []
      : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
  }
  if (expected === null || typeof expected !== 'object') {
    return expected === actual ? [] : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    if (expected.length !== actual.length) {
      return [
        `${path}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual).slice(0, 400)}`,
      ];
    }
    return expected.flatMap((e, i) => diff(e, actual[i], opts, `${path}[${i}]`));
  }
  if (!actual || typeof actual !== 'object' || Array.isArray(actual))
    return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
  const a = actual as Record<string, unknown>;
  const out: string[] = [];
  for (const [k, e] of Object.entries(expected)) {
    if (!(k in a)) {
      out.push(`${path}.${k}: missing`);
      continue;
    }
    out.push(...diff(e, a[k], opts, `${path}.${k}`));
  }
  if (!opts.allowExtraKeys) {
    for (const k of Object.keys(a)) if (!(k in (expected as object))) out.push(`${path}.${k}: unexpected key`);
  }
  return out;
}

/** Compares the directory with a step's `files_after` (locks and temp state files excluded). */
export function diffFiles(
  dir: string,
  expected: Record<string, unknown>,
  placeholders: SnapshotPlaceholders,
): string[] {
  const names = readdirSync(dir)
    .filter((n) => !n.endsWith('.tokens.lock') && !/^\.tokens-state-/.test(n))
    .sort();
  const want = Object.keys(expected).sort();
  const out: string[] = [];
  if (JSON.stringify(names) !== JSON.stringify(want))
    out.push(`files: expected ${JSON.stringify(want)}, got ${JSON.stringify(names)}`);
  for (const name of want) {
    if (!names.includes(name)) continue;
    const bytes = readFileSync(join(dir, name));
    const e = expected[name] as Record<string, unknown>;
    const isHashForm =
      e && typeof e === 'object' && !Array.isArray(e) && 'sha256' in e && 'size' in e && Object.keys(e).length === 2;
    if (name.endsWith('.tokens.state.json') && !isHashForm) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(bytes.toString('utf8'));
      } catch {
        out.push(`${name}: expected JSON state, file is not JSON`);
        continue;
      }
      const rolloutId = name.slice(0, -'.tokens.state.json'.length);
      out.push(...diff(e, parsed, { placeholders, rolloutId }, name));
    } else {
      const sha = createHash('sha256').update(bytes).digest('hex');
      if (sha !== e.sha256 || bytes.length !== e.size)
        out.push(`${name}: expected sha ${e.sha256} size ${e.size}, got sha ${sha} size ${bytes.length}`);
    }
  }
  return out;
}
