/**
 * The reports of one sharded run, combined (docs/cli.md#merge): the `--json` documents that the
 * N tasks of a job array printed (`verify-digests`, `inspect`, `build`, `export`, `freeze`), each
 * carrying `"shard": {"index", "count", "selected"}`. They combine only when they are exactly
 * shards 0..N-1 of one N, of one command; otherwise the answer is which shards are missing,
 * repeated or of another count. The combined report is the one an unsharded run would have
 * given (verify: `ok`, findings in id order; inspect and build: a summary; export: the counts),
 * with the exit code that run would have had.
 */
import { compareCodePoints } from '../json/canonical-json.js';
import { compareFindings, type Finding } from '../verify/findings.js';

export type ReportCommand = 'verify-digests' | 'inspect' | 'build' | 'export' | 'freeze';
/** `results` is an empty `results` array (build or freeze, of an empty shard). */
type Shape = ReportCommand | 'results';

export interface ShardReport {
  /** Where it came from (a file name), for messages. */
  source: string;
  doc: Record<string, unknown>;
}

export interface ShardProblems {
  count: number | undefined;
  missing: number[];
  duplicated: { index: number; sources: string[] }[];
  /** Reports of another count than the most common one. */
  otherCount: { source: string; count: number }[];
  /** Reports without a `shard` (not from a sharded run) or that are not a tokcap report. */
  unsharded: string[];
  /** Reports of more than one command. */
  commands: ReportCommand[];
}

/** Which command printed `doc`, by its shape (docs/cli.md#json-output). */
export function reportCommand(doc: Record<string, unknown>): Shape | undefined {
  if (Array.isArray(doc.findings) && typeof doc.ok === 'boolean') return 'verify-digests';
  if (typeof doc.format === 'string' && typeof doc.out === 'string') return 'export';
  if (doc.rollouts !== null && typeof doc.rollouts === 'object' && Array.isArray(doc.invalid_names)) return 'inspect';
  if (Array.isArray(doc.results)) {
    const first = doc.results.find(
      (r: unknown) =>
        r !== null &&
        typeof r === 'object' &&
        !('error' in (r as object) && typeof (r as { error: unknown }).error === 'object'),
    ) as Record<string, unknown> | undefined;
    // An empty shard's `results` say nothing of the command: it goes with the others.
    if (first === undefined) return doc.results.length === 0 ? 'results' : 'freeze';
    return 'entry_call_ids' in first ? 'freeze' : 'build';
  }
  return undefined;
}

interface ShardMember {
  index: number;
  count: number;
  selected: number;
}

function shardOfReport(doc: Record<string, unknown>): ShardMember | undefined {
  const s = doc.shard as Partial<ShardMember> | undefined;
  if (s === null || typeof s !== 'object') return undefined;
  if (!Number.isSafeInteger(s.index) || !Number.isSafeInteger(s.count)) return undefined;
  return { index: s.index!, count: s.count!, selected: Number.isSafeInteger(s.selected) ? s.selected! : 0 };
}

/** What keeps the reports from being one whole run (nothing: `isWhole`). */
export function shardProblems(reports: readonly ShardReport[]): ShardProblems {
  const p: ShardProblems = {
    count: undefined,
    missing: [],
    duplicated: [],
    otherCount: [],
    unsharded: [],
    commands: [],
  };
  const counts = new Map<number, number>();
  const sharded: { source: string; shard: ShardMember }[] = [];
  const commands = new Set<ReportCommand>();
  for (const r of reports) {
    const shard = shardOfReport(r.doc);
    const command = reportCommand(r.doc);
    if (shard === undefined || command === undefined) {
      p.unsharded.push(r.source);
      continue;
    }
    if (command !== 'results') commands.add(command);
    sharded.push({ source: r.source, shard });
    counts.set(shard.count, (counts.get(shard.count) ?? 0) + 1);
  }
  p.commands = [...commands].sort();
  p.count = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0];
  const byIndex = new Map<number, string[]>();
  for (const { source, shard } of sharded) {
    if (shard.count !== p.count) {
      p.otherCount.push({ source, count: shard.count });
      continue;
    }
    const list = byIndex.get(shard.index) ?? [];
    list.push(source);
    byIndex.set(shard.index, list);
  }
  if (p.count !== undefined) for (let k = 0; k < p.count; k++) if (!byIndex.has(k)) p.missing.push(k);
  for (const [index, sources] of [...byIndex].sort((a, b) => a[0] - b[0]))
    if (sources.length > 1) p.duplicated.push({ index, sources });
  return p;
}

export function isWhole(p: ShardProblems): boolean {
  return (
    p.count !== undefined &&
    p.missing.length === 0 &&
    p.duplicated.length === 0 &&
    p.otherCount.length === 0 &&
    p.unsharded.length === 0 &&
    p.commands.length <= 1
  );
}

/** One line per problem, for stderr. */
export function problemLines(p: ShardProblems): string[] {
  const lines: string[] = [];
  for (const s of p.unsharded) lines.push(`${s}: not the --json report of a sharded run (no "shard")`);
  if (p.commands.length > 1)
    lines.push(`reports of different commands (${p.commands.join(', ')}): merge one run's reports`);
  if (p.count === undefined && p.unsharded.length === 0) lines.push('no reports');
  if (p.missing.length > 0)
    lines.push(`shard${p.missing.length > 1 ? 's' : ''} ${p.missing.join(', ')} of ${p.count} missing`);
  for (const d of p.duplicated)
    lines.push(`shard ${d.index} of ${p.count} given more than once (${d.sources.join(', ')})`);
  for (const o of p.otherCount) lines.push(`${o.source}: a shard of ${o.count}, not of ${p.count} (another run)`);
  return lines;
}

/** The exit code of the unsharded run: 0, 1 (a negative outcome) or 3 (something not read). */
export type MergeExit = 0 | 1 | 3;

export interface MergeOptions {
  /** verify-digests: a warning is a negative outcome too (as `verify-digests --strict`). */
  strict: boolean;
  /** build: a masked rollout is a negative outcome (as `build --fail-on-mask`). */
  failOnMask: boolean;
  /** A run that selected no rollout is an answer (as the commands' `--allow-empty`), not exit 3. */
  allowEmpty: boolean;
}

export interface MergedReport {
  command: ReportCommand;
  count: number;
  doc: Record<string, unknown>;
  exit: MergeExit;
}

type Doc = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

function mergeVerify(docs: Doc[], o: MergeOptions): { doc: Doc; exit: MergeExit } {
  const findings = docs.flatMap((d) => list<Finding>(d.findings)).sort(compareFindings);
  const unchecked = docs.flatMap((d) => list<string>(d.unchecked)).sort(compareCodePoints);
  const errors = docs.flatMap((d) => list<unknown>(d.errors));
  const ok = docs.every((d) => d.ok === true) && unchecked.length === 0;
  const nErrors = findings.filter((f) => f.severity === 'error').length;
  const doc: Doc = {
    ok,
    findings,
    unchecked,
    rollouts: docs.reduce((n, d) => n + (shardOfReport(d)?.selected ?? 0), 0),
  };
  if (errors.length) doc.errors = errors;
  const exit: MergeExit =
    unchecked.length > 0 || errors.length > 0 ? 3 : nErrors > 0 || (o.strict && findings.length > 0) || !ok ? 1 : 0;
  return { doc, exit };
}

function mergeInspect(docs: Doc[]): { doc: Doc; exit: MergeExit } {
  const status: Record<string, number> = {};
  const conditions: Record<string, number> = {};
  const unavailable: string[] = [];
  const damaged: string[] = [];
  let rollouts = 0;
  for (const d of docs) {
    for (const [id, facts] of Object.entries((d.rollouts ?? {}) as Record<string, Doc>)) {
      rollouts++;
      const s = typeof facts.status === 'string' ? facts.status : 'unavailable';
      status[s] = (status[s] ?? 0) + 1;
      for (const c of list<string>(facts.conditions)) conditions[c] = (conditions[c] ?? 0) + 1;
      if (s === 'unavailable' || facts.error !== undefined) unavailable.push(id);
      // A file that did not parse is exit 3 for inspect too, though the rollout was answered.
      else if (list<unknown>(facts.errors).length > 0 || (typeof facts.bad_lines === 'number' && facts.bad_lines > 0))
        damaged.push(id);
    }
  }
  unavailable.sort(compareCodePoints);
  const doc: Doc = {
    dir: docs[0].dir,
    rollouts,
    status: Object.fromEntries(Object.entries(status).sort((a, b) => compareCodePoints(a[0], b[0]))),
    conditions: Object.fromEntries(Object.entries(conditions).sort((a, b) => compareCodePoints(a[0], b[0]))),
    unavailable,
    damaged: damaged.sort(compareCodePoints),
    invalid_names: docs.flatMap((d) => list<string>(d.invalid_names)).sort(compareCodePoints),
  };
  return { doc, exit: unavailable.length > 0 || damaged.length > 0 ? 3 : 0 };
}

function mergeBuild(docs: Doc[], o: MergeOptions): { doc: Doc; exit: MergeExit } {
  const verdicts: Record<string, number> = { trainable: 0, masked: 0, unavailable: 0 };
  const failed: string[] = [];
  let rollouts = 0;
  for (const d of docs) {
    for (const r of list<Doc>(d.results)) {
      rollouts++;
      const v = typeof r.verdict === 'string' ? r.verdict : 'unavailable';
      verdicts[v] = (verdicts[v] ?? 0) + 1;
      // A tombstone in a directory-wide preview is expected, not a failure (as build itself says).
      const kind = r.error_kind;
      if (typeof kind === 'string' && !(kind === 'retired' && r.preview === true)) failed.push(String(r.rollout_id));
    }
  }
  failed.sort(compareCodePoints);
  const doc: Doc = { rollouts, ...verdicts, failed };
  const exit: MergeExit = failed.length > 0 ? 3 : o.failOnMask && verdicts.masked > 0 ? 1 : 0;
  return { doc, exit };
}

function mergeExport(docs: Doc[]): { doc: Doc; exit: MergeExit } {
  const sum = (k: string) => docs.reduce((n, d) => n + num(d[k]), 0);
  const outs = [...new Set(docs.map((d) => String(d.out)))];
  const doc: Doc = {
    out: outs.length === 1 ? outs[0] : outs,
    format: docs[0].format,
    rollouts: sum('rollouts'),
    trainable: sum('trainable'),
    masked: sum('masked'),
    failed: sum('failed'),
    exported: sum('exported'),
  };
  const unread = num(doc.rollouts) - num(doc.trainable) - num(doc.masked);
  return { doc, exit: unread > 0 ? 3 : 0 };
}

function mergeFreeze(docs: Doc[]): { doc: Doc; exit: MergeExit } {
  const results = docs.flatMap((d) => list<Doc>(d.results));
  const failed = results
    .filter((r) => r.error !== undefined)
    .map((r) => String(r.rollout_id))
    .sort(compareCodePoints);
  return {
    doc: { rollouts: results.length, frozen: results.length - failed.length, failed },
    exit: failed.length > 0 ? 3 : 0,
  };
}

/** The combined report of a whole run (`isWhole(shardProblems(reports))` must hold). */
export function mergeReports(reports: readonly ShardReport[], options: MergeOptions): MergedReport {
  const docs = [...reports].sort((a, b) => shardOfReport(a.doc)!.index - shardOfReport(b.doc)!.index).map((r) => r.doc);
  const shapes = docs
    .map((d) => reportCommand(d))
    .filter((s): s is ReportCommand => s !== undefined && s !== 'results');
  const command: ReportCommand = shapes[0] ?? 'build';
  const count = shardOfReport(docs[0])!.count;
  const merged =
    command === 'verify-digests'
      ? mergeVerify(docs, options)
      : command === 'inspect'
        ? mergeInspect(docs)
        : command === 'build'
          ? mergeBuild(docs, options)
          : command === 'export'
            ? mergeExport(docs)
            : mergeFreeze(docs);
  // An unsharded run over nothing exits 3 (docs/cli.md#unavailable): so does the merge of its shards.
  const selected = docs.reduce((n, d) => n + (shardOfReport(d)?.selected ?? 0), 0);
  return {
    command,
    count,
    doc: { ...merged.doc, shards: count },
    exit: selected === 0 && !options.allowEmpty ? 3 : merged.exit,
  };
}
