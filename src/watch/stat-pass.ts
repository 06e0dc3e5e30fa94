/**
 * Which rollouts changed since their rows were read, for the directory model's rescans: a
 * signature of each rollout's files (a few lstat calls) compared with the one its row was read
 * with, and for a rollout never read the mtime that gives it its place in the queue and on screen.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { rolloutFileName, rolloutPaths, type FileKind } from '../layout/file-names.js';
import type { DirectoryListing } from '../layout/scan-directory.js';
import { SIGNATURE_KINDS, SignatureBuilder, type FileStat, type Signature } from './file-signature.js';
import type { Queued } from './recent-order.js';
import type { RowStore } from './row-store.js';

/** Rollouts stat'ed between two yields to the event loop during a rescan. */
const STAT_BATCH = 256;

export interface StatPassOptions {
  dir: string;
  stat(path: string): Promise<FileStat | null>;
  /** Stat a rollout not read yet for its mtime (false: 0, the listing's order). */
  statUnread: boolean;
  /** Stats in flight at once. */
  concurrency: number;
}

export class StatPass {
  constructor(
    private readonly options: StatPassOptions,
    private readonly rows: RowStore,
  ) {}

  /**
   * The rollouts of `ids` to read (`listing` names their files): each not read yet, with its
   * mtime (placed on its row), and each read whose files changed since. Stops early once
   * `stopped()` says so.
   */
  async changed(listing: DirectoryListing, ids: readonly string[], stopped: () => boolean): Promise<Queued[]> {
    const changed: Queued[] = [];
    let next = 0;
    const worker = async () => {
      while (next < ids.length && !stopped()) {
        const id = ids[next++];
        // Let input and rendering in between batches.
        if (next % STAT_BATCH === 0) await yieldToEventLoop();
        // Only the files the listing shows (a file created since is found by the read).
        const found = await this.check(id, listing.rollouts.get(id)!);
        if (found) changed.push(found);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, ids.length) }, worker));
    return changed;
  }

  /**
   * Whether a rollout named again can be skipped: it was read, and none of its files changed
   * since (one stat each); a rollout never read, or whose read failed, is read.
   */
  async unchanged(id: string): Promise<boolean> {
    const prev = this.rows.get(id);
    if (!prev?.loaded || prev.error || prev.readKey === null) return false;
    try {
      const sig = await this.signature(id);
      return this.rows.get(id)?.readKey === sig.key;
    } catch {
      return false;
    }
  }

  /** The rollout to read, if it is one: not read yet, or changed since it was read. */
  private async check(id: string, listed: ReadonlySet<FileKind>): Promise<Queued | undefined> {
    const settled = this.rows.get(id);
    if (!settled?.loaded) {
      // A rollout never read is read anyway: one stat (J's, or the first file's) gives the
      // mtime its place in the queue and on screen (100,000 of them at the start of a load:
      // nothing else done here).
      const mtimeMs = this.options.statUnread ? await this.firstMtime(id, listed) : 0;
      this.rows.placeMtime(id, mtimeMs);
      return { id, mtimeMs };
    }
    const kinds = SIGNATURE_KINDS.filter((k) => listed.has(k));
    // A frozen or retired rollout no longer takes writes (the writer refuses them): what can
    // still happen to it (retire, drop, delete, sweep) removes files, which the listing
    // shows. Skipping its stat makes the backstop cheap in a long run, where most are.
    if (!settled.error && (settled.frozen || settled.retired) && settled.readKinds === kinds.join('+')) return;
    let sig: Signature;
    try {
      sig = await this.signature(id, kinds);
    } catch {
      return { id, mtimeMs: 0 };
    }
    const row = this.rows.get(id);
    if (!row || !row.loaded || row.error || row.readKey !== sig.key) return { id, mtimeMs: sig.mtimeMs };
  }

  /**
   * The mtime of a rollout not read yet, from one lstat of its first listed file (0 when it
   * cannot be stat'ed: the read will say why).
   */
  private async firstMtime(id: string, listed: ReadonlySet<FileKind>): Promise<number> {
    const kind = SIGNATURE_KINDS.find((k) => listed.has(k));
    if (kind === undefined) return 0;
    try {
      // As rolloutPaths spells them, without making all five.
      const dir = this.options.dir;
      const base = dir.endsWith('/') ? dir : dir + '/';
      return (await this.options.stat(base + rolloutFileName(id, kind)))?.mtimeMs ?? 0;
    } catch {
      return 0;
    }
  }

  private async signature(id: string, kinds: readonly FileKind[] = SIGNATURE_KINDS): Promise<Signature> {
    const paths = rolloutPaths(this.options.dir, id);
    const sig = new SignatureBuilder();
    for (const kind of kinds) {
      const s = await this.options.stat(paths[kind]);
      if (s !== null) sig.add(kind, SIGNATURE_KINDS.indexOf(kind), s);
    }
    return sig.done();
  }
}
