import { withRegularFdSync } from '../layout/safe-open.js';
import {
  computeTokenDigest,
  sha256Hex,
  sharedWithCachedDigest,
  TokenSequence,
  type TokenId,
} from '../digest/token-digest.js';
import { toTokcapError } from '../errors.js';
import { JsonBytesReader } from '../json/parse-json.js';
import { classifyLine } from '../jsonl/classify-line.js';
import { scanBufferLines } from '../jsonl/line-scanner.js';
import { readJsonlBytes, type JsonlBytes } from '../jsonl/read-jsonl-bytes.js';
import { rolloutPaths, type RolloutPaths } from '../layout/file-names.js';
import type { TokenEntry } from '../records/token-entry.js';
import { parseStateBytes, readState } from '../state/read-state.js';
import { entryDigests, indexedSize, type RolloutState } from '../state/rollout-state.js';
import { lockWaitOf, type StoreOptions } from '../ops/store.js';
import { CumulativeSequences } from './cumulative-sequences.js';
import { finding, type Finding } from './findings.js';

interface LineRecord {
  line: number;
  digest: string;
}

/**
 * verify-digests for one rollout (docs/conformance.md#verify-findings; docs/format.md#commands). Read-only: the state
 * is read without a lock (it is replaced atomically), J under a short shared lock on an existing
 * lock file. Damage is reported as findings, never thrown; only a lock timeout or an I/O error
 * reading J is thrown.
 */
export async function verifyRollout(
  store: StoreOptions,
  rolloutId: string,
  options: {
    readJsonl?: (
      paths: RolloutPaths,
      rolloutId: string,
      options: { waitMs: number; from?: number },
    ) => Promise<JsonlBytes | undefined>;
    /** Reads the records' JSON: the calling thread's reader for its job (default: one for this rollout). */
    jsonReader?: JsonBytesReader;
    /**
     * The state's bytes as copied under the lock together with J (src/ops/rollout-copy.ts;
     * `bytes` undefined: no state file), parsed instead of the file. That copy opened the intents
     * and markers as regular files already.
     */
    copiedState?: { bytes: Uint8Array | undefined };
  } = {},
): Promise<Finding[]> {
  const paths = rolloutPaths(store.dir, rolloutId);
  const out: Finding[] = [];
  const add = (f: Finding) => out.push(f);
  // A capture file that is not a regular file or cannot be opened leaves the rollout unchecked
  // (an I/O failure), never verified: the intents and markers too, which the digests do not need.
  const copied = options.copiedState;
  if (!copied) for (const p of [paths.intents, paths.incomplete]) withRegularFdSync(p, rolloutId, () => undefined);

  let state: RolloutState | undefined;
  try {
    const s = copied
      ? copied.bytes === undefined
        ? undefined
        : parseStateBytes(copied.bytes, paths.state, rolloutId)
      : await readState(paths.state, rolloutId);
    if (s?.exists) state = s;
  } catch (e) {
    const err = toTokcapError(e, { rolloutId, file: paths.state });
    if (err.kind !== 'corrupt') throw err;
    add(finding(rolloutId, 'state_unreadable', `state file is unreadable: ${err.message}`));
  }
  const idxValue = state ? indexedSize(state, false) : undefined;
  const digests = state ? entryDigests(state) : undefined;
  // Lines are checked against the index when the state has both its parts.
  const index = digests !== undefined && idxValue !== undefined ? { size: idxValue, digests } : undefined;

  // J is copied under a short shared lock, then parsed with the lock released.
  const read = await (options.readJsonl ?? readJsonlBytes)(paths, rolloutId, { waitMs: lockWaitOf(store) });
  const calls: CallLines = { byCall: new Map(), first: new Map() };
  if (read) {
    checkLines(rolloutId, paths.jsonl, read.bytes, index, options.jsonReader ?? new JsonBytesReader(), calls, add);
    // Nothing above keeps a view of the bytes (entries and findings hold copies): reuse them.
    read.release?.();
  }
  const size = read ? read.size : 0;
  if (state && idxValue !== undefined && idxValue > size) {
    add(finding(rolloutId, 'index_past_end', `indexed_size ${idxValue} is past the end of the JSONL (${size} bytes)`));
  }
  if (index) {
    for (const key of Object.keys(index.digests)) {
      if (!calls.byCall.has(key))
        add(finding(rolloutId, 'index_orphan', 'entry_digests names a call with no valid line', { call_id: key }));
    }
  }
  checkRepeats(rolloutId, calls.byCall, add);
  checkTokens(rolloutId, calls.first, add);
  // The scratch space keeps a typical rollout's size, not an exceptional one's.
  scratchSequence.reset(SCRATCH_KEEP_BYTES);
  return out;
}

/** What J's valid lines say, call by call. */
interface CallLines {
  /** Every valid line of each call id, with its digest. */
  byCall: Map<string, LineRecord[]>;
  /** Each call id's first valid entry. */
  first: Map<string, TokenEntry>;
}

/**
 * Checks every line of J's bytes (`file`): JSON, record, rollout id, and against the index
 * (`index`: the state's indexed size and entry digests, when both are there); notes each valid
 * line in `calls`.
 */
function checkLines(
  rolloutId: string,
  file: string,
  bytes: Buffer,
  index: { size: number; digests: Record<string, string> } | undefined,
  jsonReader: JsonBytesReader,
  calls: CallLines,
  add: (f: Finding) => void,
): void {
  const { byCall, first } = calls;
  let pendingBad: number | undefined;
  scanBufferLines(bytes, (line) => {
    if (line.stripped.length === 0) return;
    if (pendingBad !== undefined) {
      add(
        finding(rolloutId, 'malformed_line', 'line is not valid JSON and more content follows it', {
          line: pendingBad,
        }),
      );
      pendingBad = undefined;
    }
    const v = classifyLine(line.stripped, { rolloutId, file }, jsonReader);
    if (v.kind === 'bad_json') {
      pendingBad = line.lineNo;
      return;
    }
    if (v.kind === 'invalid') {
      add(
        finding(rolloutId, 'invalid_entry', `line is not a valid token record: ${v.error.message}`, {
          line: line.lineNo,
        }),
      );
      return;
    }
    const e = v.entry;
    const callId = e.model_call_id;
    if (e.rollout_id !== rolloutId) {
      add(
        finding(rolloutId, 'rollout_id_mismatch', `record names rollout ${JSON.stringify(e.rollout_id)}`, {
          call_id: callId,
          line: line.lineNo,
        }),
      );
    }
    const d = sha256Hex(line.stripped);
    let recs = byCall.get(callId);
    if (!recs) byCall.set(callId, (recs = []));
    recs.push({ line: line.lineNo, digest: d });
    if (!first.has(callId)) first.set(callId, e);
    if (index) checkIndexed(rolloutId, index, callId, d, line.end, line.lineNo, add);
  });
  if (pendingBad !== undefined) {
    add(
      finding(rolloutId, 'torn_tail', 'final line is not valid JSON (a torn write; freeze will truncate it)', {
        line: pendingBad,
      }),
    );
  }
}

/** A valid line (its digest `d`, ending at byte `end`) against the index. */
function checkIndexed(
  rolloutId: string,
  index: { size: number; digests: Record<string, string> },
  callId: string,
  d: string,
  end: number,
  line: number,
  add: (f: Finding) => void,
): void {
  if (end > index.size) {
    add(
      finding(rolloutId, 'unindexed_tail', 'valid line past indexed_size (pending reconciliation)', {
        call_id: callId,
        line,
      }),
    );
    return;
  }
  const want = index.digests[callId];
  if (want === undefined) {
    add(
      finding(rolloutId, 'entry_not_indexed', 'indexed line whose call id is not in entry_digests', {
        call_id: callId,
        line,
      }),
    );
  } else if (want !== d) {
    add(
      finding(rolloutId, 'entry_digest_mismatch', `entry digest ${d} differs from the index (${want})`, {
        call_id: callId,
        line,
      }),
    );
  }
}

/** A call id on more than one valid line: the same bytes each time, or different payloads. */
function checkRepeats(rolloutId: string, byCall: Map<string, LineRecord[]>, add: (f: Finding) => void): void {
  for (const [callId, recs] of byCall) {
    if (recs.length < 2) continue;
    const same = recs.every((r) => r.digest === recs[0].digest);
    const lines = recs.map((r) => r.line).join(', ');
    add(
      same
        ? finding(rolloutId, 'duplicate_identical', `call appears on ${recs.length} identical lines (${lines})`, {
            call_id: callId,
          })
        : finding(
            rolloutId,
            'conflicting_payload',
            `call appears on ${recs.length} lines with different payloads (${lines})`,
            { call_id: callId },
          ),
    );
  }
}

/** Reused by every rollout's checks (they run synchronously, one at a time). */
const scratchSequence = new TokenSequence();
const SCRATCH_KEEP_BYTES = 16 * 2 ** 20;

/** What the token checks of a rollout share. */
interface TokenChecks {
  readonly rolloutId: string;
  /** Each call id's first valid entry. */
  readonly first: Map<string, TokenEntry>;
  readonly cums: CumulativeSequences;
  /**
   * Full records whose stamped digest and cum_len are those of their own tokens. A child's link to
   * such a parent is checked by comparing tokens (digest(Q[:len_P]) == digest_P exactly when
   * Q[:len_P] is P's prompt + generation), so a rollout's tokens are hashed once, not once per
   * record and again per child (quadratic in the rollout's length for growing prompts).
   */
  readonly ownDigestOk: Map<string, boolean>;
  /**
   * The digest cache compares each sequence with the one before it (token-digest.ts): when that
   * was the parent's, its answer is the link's, and the ids are not compared a second time.
   */
  readonly sharedWithPrevious: Map<string, { previous: string; shared: number }>;
  readonly add: (f: Finding) => void;
}

/** Per-call token checks on the first valid line of each call id. */
function checkTokens(rolloutId: string, first: Map<string, TokenEntry>, add: (f: Finding) => void): void {
  const t: TokenChecks = {
    rolloutId,
    first,
    cums: new CumulativeSequences(first, scratchSequence),
    ownDigestOk: new Map(),
    sharedWithPrevious: new Map(),
    add,
  };
  let previous: string | null = null;
  for (const [callId, e] of first) {
    if (e.prompt_is_delta || !e.digest) continue;
    t.ownDigestOk.set(callId, t.cums.info(callId)!.digest === e.digest);
    const shared = sharedWithCachedDigest();
    if (shared !== -1 && previous !== null) t.sharedWithPrevious.set(callId, { previous, shared });
    previous = shared === -1 ? null : callId;
  }
  for (const [callId, e] of first) {
    checkOwnTokens(t, callId, e);
    const parentId = e.parent_call_id;
    if (e.parent_resolution === 'resolved' && parentId !== null && !first.has(parentId)) {
      add(
        finding(rolloutId, 'parent_missing', 'resolved parent is not among the valid entries', {
          call_id: callId,
          parent_call_id: parentId,
        }),
      );
    }
    if (parentId !== null && first.has(parentId)) checkParentLink(t, callId, e, parentId);
    if (!e.digest || e.cum_len === null) {
      add(finding(rolloutId, 'missing_digest', 'digest or cum_len is missing', { call_id: callId }));
    }
  }
}

/** A record's own digest and cum_len: of its tokens (a full record), or of its rebuilt sequence (a delta). */
function checkOwnTokens({ rolloutId, cums, ownDigestOk, add }: TokenChecks, callId: string, e: TokenEntry): void {
  const digest = e.digest;
  if (!e.prompt_is_delta) {
    if (digest && !ownDigestOk.get(callId))
      add(
        finding(rolloutId, 'token_digest_mismatch', 'stamped digest is not the digest of prompt + generation', {
          call_id: callId,
        }),
      );
    const len = e.prompt_token_ids.length + e.generation_token_ids.length;
    if (e.cum_len !== null && e.cum_len !== len) {
      add(finding(rolloutId, 'cum_len_mismatch', `cum_len ${e.cum_len} is not ${len}`, { call_id: callId }));
    }
    return;
  }
  const cum = cums.info(callId);
  if (cum === null) {
    add(
      finding(rolloutId, 'delta_unreconstructable', 'the delta parent chain cannot be walked to a full record', {
        call_id: callId,
      }),
    );
  } else if ((digest && cum.digest !== digest) || (e.cum_len !== null && e.cum_len !== cum.length)) {
    add(
      finding(
        rolloutId,
        'delta_digest_mismatch',
        'reconstructed cumulative sequence does not match the stamped digest or cum_len',
        { call_id: callId },
      ),
    );
  }
}

/** Whether the child's prompt starts with its parent's cumulative tokens (`parentId` among the valid entries). */
function checkParentLink(t: TokenChecks, callId: string, e: TokenEntry, parentId: string): void {
  const { rolloutId, cums, ownDigestOk, add } = t;
  const linkMismatch = () =>
    add(
      finding(
        rolloutId,
        'parent_link_mismatch',
        "the child's prompt does not start with the parent's cumulative tokens",
        { call_id: callId, parent_call_id: parentId },
      ),
    );
  const p = t.first.get(parentId)!;
  let parentLen: number | null = p.cum_len;
  let parentDigest: string | null = p.digest ? p.digest : null;
  if (parentLen === null || parentDigest === null) {
    const pc = cums.info(parentId);
    if (pc !== null) {
      if (parentLen === null) parentLen = pc.length;
      if (parentDigest === null) parentDigest = pc.digest;
    }
  }
  const parentVerified =
    !p.prompt_is_delta &&
    ownDigestOk.get(parentId) === true &&
    p.cum_len === p.prompt_token_ids.length + p.generation_token_ids.length;
  if (e.prompt_is_delta) {
    // A delta child's full prompt is its parent's cumulative sequence followed by its own
    // suffix (that is how it was rebuilt), so the first L tokens are the parent's sequence
    // when L is its length: the link holds when the parent's sequence has the parent's
    // digest, which is known already. (Against a verified full parent it always holds.)
    const cum = cums.info(callId);
    if (cum !== null && !parentVerified && parentLen !== null && parentDigest !== null) {
      const pc = cums.info(parentId)!;
      const promptLength = cum.length - e.generation_token_ids.length;
      if (parentLen > promptLength) linkMismatch();
      else if (parentLen === pc.length) {
        if (pc.digest !== parentDigest) linkMismatch();
      } else if (digestOr(cums.ids(callId), sliceEnd(parentLen, promptLength)) !== parentDigest) linkMismatch();
    }
  } else if (parentVerified) {
    if (!tokensExtend(t, e.prompt_token_ids, p, callId, parentId)) linkMismatch();
  } else if (parentLen !== null && parentDigest !== null) {
    const q = e.prompt_token_ids;
    if (parentLen > q.length || digestOr(q, sliceEnd(parentLen, q.length)) !== parentDigest) linkMismatch();
  }
}

/** Whether `child` starts with the tokens of `p` (its prompt, then its generation). */
function tokensExtend(
  t: TokenChecks,
  child: readonly TokenId[],
  p: TokenEntry,
  childId: string,
  parentId: string,
): boolean {
  const a = p.prompt_token_ids;
  const b = p.generation_token_ids;
  if (a.length + b.length > child.length) return false;
  const known = t.sharedWithPrevious.get(childId);
  if (known !== undefined && known.previous === parentId) return known.shared >= a.length + b.length;
  for (let i = 0; i < a.length; i++) if (child[i] !== a[i]) return false;
  for (let i = 0, j = a.length; i < b.length; i++, j++) if (child[j] !== b[i]) return false;
  return true;
}

/** The digest of `ids[:length]`, null when it cannot be computed. */
function digestOr(ids: readonly TokenId[], length?: number): string | null {
  try {
    return computeTokenDigest(ids, length);
  } catch {
    return null;
  }
}

/** Where `Q[:n]` ends in a sequence of `length` ids, as Python slices it (as the builder does). */
function sliceEnd(n: number, length: number): number {
  return n >= 0 ? n : Math.max(0, length + n);
}
