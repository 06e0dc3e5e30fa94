/**
 * One rollout's build as a command writes it out: the result already serialised (`outputJsonBytes`,
 * the `--json` writer) and a small summary for counts and explanations. Plain data, so that a
 * worker thread can compute it (src/rollout-read/build-many.ts) and only bytes cross back. A
 * preview with its status is a view of the one reading of the rollout (read-rollout.ts).
 */
import { outputJsonBytes, type JsonWriter } from '../json/canonical-json.js';
import { IdArrayTexts } from '../json/id-texts.js';
import { takeCopyBuffer } from '../jsonl/copy-buffers.js';
import { JsonFloat } from '../json/value.js';
import type { StoreOptions } from '../ops/store.js';
import type { RolloutStatusAnswer } from '../status/rollout-status.js';
import { verdictOf, type VerdictAnswer } from '../status/verdict.js';
import {
  buildRolloutDetailed,
  localSnapshotSource,
  type BuildRolloutOptions,
  type DetailedBuild,
} from '../chains/build-rollout.js';
import { CopyArena } from '../ops/rollout-copy.js';
import { HeldCopies, readRollout, type RolloutRead } from './read-rollout.js';
import type { CaptureSnapshot, ConsumerResult } from '../chains/consumer-result.js';
import type { MaskCause } from '../chains/mask-causes.js';
import { firstDivergences, type Divergence } from '../divergence/first-divergence.js';

export interface BuildSummary {
  rolloutId: string;
  maskSample: boolean;
  /** A rebuilt response exists (the build did not fail). */
  built: boolean;
  /** The failed build's error string (`<PythonClass>: <message>`). */
  error?: string;
  nCalls: number;
  chains?: number;
  roots?: number;
  quarantinedCalls?: number;
  tokensDelivered?: number;
  tokensCaptured?: number;
  deliveredFraction?: number;
  linkFailures?: Record<string, number>;
  captureSnapshot?: CaptureSnapshot;
}

export interface BuildOutcome {
  summary: BuildSummary;
  /**
   * The result as `--json` writes it, UTF-8 in memory of its own (a worker moves it to the main
   * thread); absent when it cannot be written (`unwritable` says why). In parts once `buildMany`
   * has appended the status members (written one after the other). With a job's writer, the
   * memory comes from copy-buffers.ts and a whole ArrayBuffer of its own, which `release` (set by
   * `buildMany` in the main thread) hands back once written.
   */
  output?: Uint8Array | Uint8Array[];
  /** Gives the memory of `output` back for reuse; call it once the bytes are written (or dropped). */
  release?: () => void;
  unwritable?: string;
  causes: MaskCause[];
  /** Byte offset of a torn final line (preview). */
  tornTailAt?: number;
  /** The consumer verdict (src/status/verdict.ts); its `errorKind` says why a read or freeze failed. */
  verdict: VerdictAnswer;
  /** The rollout's status, when `buildMany` was asked for it. */
  status?: RolloutStatusAnswer;
  /** Where a masked rollout's broken boundaries part from their candidate parents, when asked for (none: absent). */
  divergences?: Divergence[];
}

export function summariseResult(r: ConsumerResult): BuildSummary {
  const s: BuildSummary = {
    rolloutId: r.rollout_id,
    maskSample: r.mask_sample,
    built: r.rebuilt_response !== null,
    nCalls: r.metrics.n_calls,
  };
  if ('error' in r && typeof r.error === 'string') s.error = r.error;
  if (r.rebuilt_response !== null) {
    const m = r.metrics;
    s.chains = m.chains;
    s.roots = m.roots;
    s.quarantinedCalls = m.quarantined_calls;
    s.tokensDelivered = m.generated_tokens_delivered;
    s.tokensCaptured = m.generated_tokens_captured;
    const f: unknown = m.delivered_fraction;
    s.deliveredFraction = f instanceof JsonFloat ? f.value : (f as number);
    s.linkFailures = { ...m.parent_link_failures };
  }
  if (r._capture_snapshot) s.captureSnapshot = { ...r._capture_snapshot };
  return s;
}

type ResultOptions = {
  serialise?: boolean;
  writer?: JsonWriter;
  outputMemory?: (size: number) => Buffer;
  divergences?: boolean;
};

export type OutcomeOptions = Omit<BuildRolloutOptions, 'freeze' | 'source' | 'incompleteContext'> & ResultOptions;

/**
 * A rollout's outcome for `buildMany` (build-many.ts, build-worker.ts): with `status`, a preview
 * is the one reading of the rollout (`readRollout`: its status from the copy it is built from);
 * a freeze, or a preview without status, is a build alone (build-many.ts reads a freeze's status
 * after it).
 */
export function outcomeOf(
  store: StoreOptions,
  rolloutId: string,
  options: OutcomeOptions & { freeze: boolean; status: boolean },
): Promise<BuildOutcome> {
  const { freeze, status, ...rest } = options;
  return status && !freeze
    ? previewOutcome(store, rolloutId, rest)
    : buildOutcome(store, rolloutId, { ...rest, freeze });
}

/**
 * Copy memory for the rollouts in flight in this thread (a few at a time: parallel-rollouts.ts),
 * each reused once its rollout's result is written (the id texts view it until then).
 */
const idleArenas: CopyArena[] = [];

/** The result of `readRollout`'s preview as `build` writes it, with the rollout's status. */
async function previewOutcome(store: StoreOptions, rolloutId: string, options: OutcomeOptions): Promise<BuildOutcome> {
  const texts = idTextsFor(options);
  const arena = idleArenas.pop() ?? new CopyArena();
  let read: RolloutRead | undefined;
  try {
    read = await readRollout(store, rolloutId, { ...options, arena, idTexts: texts, deep: false, digests: false });
    if (read.build === undefined) throw read.crash;
    const out = resultOutcome(read.build, options, texts);
    out.status = read.status;
    return out;
  } finally {
    texts?.clear();
    read?.release?.();
    arena.used = 0;
    idleArenas.push(arena);
  }
}

/**
 * With the job's writer and reader, the result's id arrays are written as J's copy has them
 * (id-texts.ts): the copy is then kept until the result is written, not given back once parsed.
 */
function idTextsFor(options: ResultOptions & { jsonReader?: unknown }): IdArrayTexts | undefined {
  return options.serialise !== false && options.writer && options.jsonReader ? new IdArrayTexts() : undefined;
}

/**
 * Builds one rollout (`buildRolloutDetailed`) and serialises its result (unless `serialise` is
 * false), with `writer` when given: the thread's writer for the whole job, into `outputMemory`
 * (default: this thread's reused copy buffers).
 */
export async function buildOutcome(
  store: StoreOptions,
  rolloutId: string,
  options: BuildRolloutOptions & ResultOptions,
): Promise<BuildOutcome> {
  const texts = idTextsFor(options);
  const held = new HeldCopies();
  if (texts && options.jsonReader) options.jsonReader.idTexts = texts;
  try {
    const source = texts ? held.of(options.source ?? localSnapshotSource(store)) : options.source;
    const d = await buildRolloutDetailed(store, rolloutId, { ...options, source });
    if (options.jsonReader) options.jsonReader.idTexts = undefined;
    return resultOutcome(d, options, texts);
  } finally {
    if (texts && options.jsonReader) options.jsonReader.idTexts = undefined;
    texts?.clear();
    held.release();
  }
}

/** A build as a command writes it: its summary, verdict and causes, and its result serialised. */
function resultOutcome(d: DetailedBuild, options: ResultOptions, texts: IdArrayTexts | undefined): BuildOutcome {
  const out: BuildOutcome = { summary: summariseResult(d.result), causes: d.causes, verdict: verdictOf(d) };
  if (d.tornTailAt !== undefined) out.tornTailAt = d.tornTailAt;
  // Only a masked rollout has a boundary to explain: a trainable one costs nothing more.
  if (options.divergences && d.result.mask_sample && d.chains) {
    const divergences = firstDivergences(d.chains);
    if (divergences.length > 0) out.divergences = divergences;
  }
  if (options.serialise === false) return out;
  try {
    // A job's results come from reused memory: new memory for each (hundreds of KB) cost page
    // faults and collections.
    out.output = options.writer
      ? options.writer.outputBytesInto(d.result, options.outputMemory ?? takeCopyBuffer, undefined, texts)
      : outputJsonBytes(d.result);
  } catch (e) {
    // A token id past 2^64 in a root record, which no digest check rejects.
    out.unwritable = e instanceof Error ? e.message : String(e);
  }
  return out;
}
