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
  const indexed = state !== undefined && digests !== undefined && idxValue !== undefined;

  const byCall = new Map<string, LineRecord[]>();
  const first = new Map<string, TokenEntry>();
  let size = 0;

  // J is copied under a short shared lock, then parsed with the lock released.
  const read = await (options.readJsonl ?? readJsonlBytes)(paths, rolloutId, { waitMs: lockWaitOf(store) });
  if (read) {
    size = read.size;
    let pendingBad: number | undefined;
    const jsonReader = options.jsonReader ?? new JsonBytesReader();
    scanBufferLines(read.bytes, (line) => {
      if (line.stripped.length === 0) return;
      if (pendingBad !== undefined) {
        add(
          finding(rolloutId, 'malformed_line', 'line is not valid JSON and more content follows it', {
            line: pendingBad,
          }),
        );
        pendingBad = undefined;
      }
      const v = classifyLine(line.stripped, { rolloutId, file: paths.jsonl }, jsonReader);
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
      if (indexed) {
        if (line.end <= idxValue!) {
          const want = digests![callId];
          if (want === undefined) {
            add(
              finding(rolloutId, 'entry_not_indexed', 'indexed line whose call id is not in entry_digests', {
                call_id: callId,
                line: line.lineNo,
              }),
            );
          } else if (want !== d) {
            add(
              finding(rolloutId, 'entry_digest_mismatch', `entry digest ${d} differs from the index (${want})`, {
                call_id: callId,
                line: line.lineNo,
              }),
            );
          }
        } else {
          add(
            finding(rolloutId, 'unindexed_tail', 'valid line past indexed_size (pending reconciliation)', {
              call_id: callId,
              line: line.lineNo,
            }),
          );
        }
      }
    });
    if (pendingBad !== undefined) {
      add(
        finding(rolloutId, 'torn_tail', 'final line is not valid JSON (a torn write; freeze will truncate it)', {
          line: pendingBad,
        }),
      );
    }
    // Nothing above keeps a view of the bytes (entries and findings hold copies): reuse them.
    read.release?.();
  }

  if (state && idxValue !== undefined && idxValue > size) {
    add(finding(rolloutId, 'index_past_end', `indexed_size ${idxValue} is past the end of the JSONL (${size} bytes)`));
  }
  if (indexed) {
    for (const key of Object.keys(digests!)) {
      if (!byCall.has(key))
        add(finding(rolloutId, 'index_orphan', 'entry_digests names a call with no valid line', { call_id: key }));
    }
  }
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
  checkTokens(rolloutId, first, add);
  // The scratch space keeps a typical rollout's size, not an exceptional one's.
  scratchSequence.reset(SCRATCH_KEEP_BYTES);
  return out;
}

/** Reused by every rollout's checks (they run synchronously, one at a time). */
const scratchSequence = new TokenSequence();
const SCRATCH_KEEP_BYTES = 16 * 2 ** 20;

/** Per-call token checks on the first valid line of each call id. */
function checkTokens(rolloutId: string, first: Map<string, TokenEntry>, add: (f: Finding) => void): void {
  const cums = new CumulativeSequences(first, scratchSequence);
  const digestOr = (ids: readonly TokenId[], length?: number): string | null => {
    try {
      return computeTokenDigest(ids, length);
    } catch {
      return null;
    }
  };

  // Full records whose stamped digest and cum_len are those of their own tokens. A child's link to
  // such a parent is checked by comparing tokens (digest(Q[:len_P]) == digest_P exactly when
  // Q[:len_P] is P's prompt + generation), so a rollout's tokens are hashed once, not once per
  // record and again per child (quadratic in the rollout's length for growing prompts).
  const ownDigestOk = new Map<string, boolean>();
  // The digest cache compares each sequence with the one before it (token-digest.ts): when that
  // was the parent's, its answer is the link's, and the ids are not compared a second time.
  const sharedWithPrevious = new Map<string, { previous: string; shared: number }>();
  let previous: string | null = null;
  for (const [callId, e] of first) {
    if (e.prompt_is_delta || !e.digest) continue;
    ownDigestOk.set(callId, cums.info(callId)!.digest === e.digest);
    const shared = sharedWithCachedDigest();
    if (shared !== -1 && previous !== null) sharedWithPrevious.set(callId, { previous, shared });
    previous = shared === -1 ? null : callId;
  }
  const tokensExtend = (child: readonly TokenId[], p: TokenEntry, childId: string, parentId: string): boolean => {
    const a = p.prompt_token_ids;
    const b = p.generation_token_ids;
    if (a.length + b.length > child.length) return false;
    const known = sharedWithPrevious.get(childId);
    if (known !== undefined && known.previous === parentId) return known.shared >= a.length + b.length;
    for (let i = 0; i < a.length; i++) if (child[i] !== a[i]) return false;
    for (let i = 0, j = a.length; i < b.length; i++, j++) if (child[j] !== b[i]) return false;
    return true;
  };
  const linkMismatch = (callId: string, parentId: string) =>
    add(
      finding(
        rolloutId,
        'parent_link_mismatch',
        "the child's prompt does not start with the parent's cumulative tokens",
        { call_id: callId, parent_call_id: parentId },
      ),
    );

  for (const [callId, e] of first) {
    const digest = e.digest;
    if (!e.prompt_is_delta) {
      if (digest) {
        if (!ownDigestOk.get(callId))
          add(
            finding(rolloutId, 'token_digest_mismatch', 'stamped digest is not the digest of prompt + generation', {
              call_id: callId,
            }),
          );
      }
      const len = e.prompt_token_ids.length + e.generation_token_ids.length;
      if (e.cum_len !== null && e.cum_len !== len) {
        add(finding(rolloutId, 'cum_len_mismatch', `cum_len ${e.cum_len} is not ${len}`, { call_id: callId }));
      }
    } else {
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
    const parentId = e.parent_call_id;
    if (e.parent_resolution === 'resolved' && parentId !== null && !first.has(parentId)) {
      add(
        finding(rolloutId, 'parent_missing', 'resolved parent is not among the valid entries', {
          call_id: callId,
          parent_call_id: parentId,
        }),
      );
    }
    if (parentId !== null && first.has(parentId)) {
      const p = first.get(parentId)!;
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
          if (parentLen > promptLength) linkMismatch(callId, parentId);
          else if (parentLen === pc.length) {
            if (pc.digest !== parentDigest) linkMismatch(callId, parentId);
          } else if (digestOr(cums.ids(callId), sliceEnd(parentLen, promptLength)) !== parentDigest)
            linkMismatch(callId, parentId);
        }
      } else if (parentVerified) {
        if (!tokensExtend(e.prompt_token_ids, p, callId, parentId)) linkMismatch(callId, parentId);
      } else if (parentLen !== null && parentDigest !== null) {
        const q = e.prompt_token_ids;
        if (parentLen > q.length || digestOr(q, sliceEnd(parentLen, q.length)) !== parentDigest)
          linkMismatch(callId, parentId);
      }
    }
    if (!digest || e.cum_len === null) {
      add(finding(rolloutId, 'missing_digest', 'digest or cum_len is missing', { call_id: callId }));
    }
  }
}

/** Where `Q[:n]` ends in a sequence of `length` ids, as Python slices it (as the builder does). */
function sliceEnd(n: number, length: number): number {
  return n >= 0 ? n : Math.max(0, length + n);
}
