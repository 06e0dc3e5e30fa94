/**
 * A rollout's status and conditions (docs/cli.md#contract-v2): the one answer every command
 * gives to "what state is this rollout in?". Derived from the rollout's facts only
 * (src/facts/rollout-facts.ts), with one precedence; docs/format.md#conditions defines the states.
 *
 * The one rule that makes it the same answer everywhere: status and conditions come from what
 * every command reads the same way, the summary's read (src/facts/rollout-facts.ts without
 * `deep`). That is the state file, the intents and the marker file (no lock: the state is
 * replaced atomically, docs/format.md#lock-modes), J's size against the state's `indexed_size`,
 * and only when J holds bytes past the index, those bytes under a short shared lock (`torn_tail`,
 * `dangling`, `corrupt` need them). The rollout is `unavailable` when that read fails: a lock
 * timeout on the unindexed tail, an I/O error, a capture file that is not a regular file.
 * (`inspect --deep` reads every line, so there `corrupt` can also come from a line inside the
 * index: docs/cli.md#conditions.)
 *
 * A read of the records that goes further (a build or preview, the digests, `--deep`'s count of
 * every line) may still time out on a lock the summary did not need. That failure does not
 * change the status and conditions: the parts that need the records are unavailable with the
 * error's facts (verdict `unavailable`, digests unchecked, counts from the index), the rollout
 * is counted as "could not be read" and the exit code is 3 (src/rollout-read/read-status.ts).
 * Making it `unavailable` instead would make every listing try every rollout's lock: a listing
 * of a running job would then wait on writers, rollouts would turn unavailable while a writer
 * holds its lock for one call, and 100,000 rollouts would cost 100,000 lock files opened.
 */
import { errorFactsOf, type ErrorFacts, type ErrorKind } from '../errors.js';
import type { RolloutFacts } from '../facts/rollout-facts.js';
import { SUFFIX } from '../layout/file-names.js';

/**
 * - `live`: writers may still append (state not frozen, not retired, or no state file).
 * - `frozen`: a snapshot was taken (state `frozen` true, `retired` false).
 * - `retired`: a tombstone (state `retired` true); its records are removed or being removed.
 * - `unavailable`: the rollout could not be read (lock timeout, I/O error, a capture file that
 *   is not a regular file); nothing else is claimed about it.
 */
export const ROLLOUT_STATUSES = ['live', 'frozen', 'retired', 'unavailable'] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];

/**
 * Conditions, sorted; several can apply at once, none to an `unavailable` rollout.
 * - `corrupt`: something read could not be parsed: the state, intents or marker file, or a line
 *   of J that is neither a valid entry nor a torn tail (without `--deep`, inspect reads only the
 *   lines past the index).
 * - `dangling`: an intent has no entry and no refusal (a call dispatched, never captured): a
 *   freeze now would mark the snapshot incomplete (docs/format.md#freeze).
 * - `incomplete`: the state's `incomplete` flag is set, or the marker file names a call.
 * - `missing_state`: record files (J, intents or markers) exist but no state file.
 * - `refused`: the state lists refused calls (refusals).
 * - `retired_with_records`: the state says retired but J, intents or markers still exist
 *   (a retire between its two phases, or one that crashed there; docs/format.md#conditions).
 * - `torn_tail`: J's last line is torn (does not parse; never acknowledged); a freeze truncates it.
 * - `unindexed_tail`: J holds bytes past the state's `indexed_size` (appended, not yet
 *   reconciled into the index; a torn tail is such bytes too).
 */
export const CONDITIONS = [
  'corrupt',
  'dangling',
  'incomplete',
  'missing_state',
  'refused',
  'retired_with_records',
  'torn_tail',
  'unindexed_tail',
] as const;
export type Condition = (typeof CONDITIONS)[number];

export interface RolloutStatusAnswer {
  status: RolloutStatus;
  conditions: Condition[];
  /** Why the rollout is `unavailable` (absent otherwise). */
  error?: ErrorFacts;
}

/** Error kinds that mean "could not be read" rather than "read, and found damaged". */
const UNAVAILABLE_KINDS: ReadonlySet<string> = new Set<ErrorKind>(['lock_timeout', 'io']);

export function isUnavailableKind(kind: string): boolean {
  return UNAVAILABLE_KINDS.has(kind);
}

const RECORD_FILES: readonly string[] = [SUFFIX.jsonl, SUFFIX.intents, SUFFIX.incomplete];

/** The status and conditions of a rollout, from its facts. */
export function rolloutStatus(facts: RolloutFacts): RolloutStatusAnswer {
  const failure = facts.errors.find((e) => isUnavailableKind(e.kind));
  if (failure) return unavailableStatus(failure);
  const conditions: Condition[] = [];
  const hasRecords = facts.files.some((f) => RECORD_FILES.includes(f));
  // In CONDITIONS order, so the array comes out sorted.
  if (facts.bad_lines > 0 || facts.errors.length > 0) conditions.push('corrupt');
  if (facts.dangling_intents.length > 0) conditions.push('dangling');
  if (facts.incomplete_flag || facts.incomplete_marker_calls.length > 0) conditions.push('incomplete');
  if (hasRecords && !facts.files.includes(SUFFIX.state)) conditions.push('missing_state');
  if (facts.refusals.length > 0) conditions.push('refused');
  if (facts.retired && hasRecords) conditions.push('retired_with_records');
  if (facts.torn_tail) conditions.push('torn_tail');
  if (facts.unindexed_bytes > 0) conditions.push('unindexed_tail');
  const status: RolloutStatus = facts.retired ? 'retired' : facts.frozen ? 'frozen' : 'live';
  return { status, conditions };
}

/** The answer for a rollout that could not be read. */
export function unavailableStatus(error: ErrorFacts): RolloutStatusAnswer {
  return { status: 'unavailable', conditions: [], error: errorFactsOf(error) };
}

/**
 * The state's version when it was read: null when the state file could not be read or parsed.
 * The facts' `version` is then the conformance facts' 0 (docs/conformance.md#facts), which text
 * and the live view must not show as a value (docs/cli.md#faults).
 */
export function knownVersion(f: Pick<RolloutFacts, 'version' | 'errors'>): number | null {
  return f.errors.some((e) => e.file.endsWith(SUFFIX.state)) ? null : f.version;
}
