/**
 * The directory model behind `tokcap watch`: a store of rollout rows that can be refreshed as a
 * whole (`rescan`) or for named rollouts only (`refresh`), with every read asynchronous, per
 * rollout, and read-only (facts + preview build: short shared locks on existing lock files, no
 * lock file created, nothing written, torn tails reported and left alone).
 *
 * Cheapness: a rollout is re-read only when the (inode, size, mtime) of one of its files changed
 * since the last read; a rescan first stats every rollout (a few lstat calls each; in the read
 * worker once rows are known, `WatchReaders.rescanListing`), then reads only the changed ones,
 * most recently modified first. Reads run with bounded concurrency, and
 * rollouts named by change events jump the queue ahead of a long initial load.
 *
 * No UI here: listeners are told "something changed" and take a `snapshot()` when they want.
 *
 * This module lists the directory and plans each load (the first screen first, then the stat
 * pass); its parts: the read queue (read-queue.ts: what to read next, batches, lock waits), the
 * rows and their totals (row-store.ts), which rollouts changed since they were read
 * (stat-pass.ts), the `recent` order (recent-order.ts), and what the model is given and gives
 * (directory-model-inputs.ts).
 */
import { setImmediate as yieldToEventLoop, setTimeout as delay } from 'node:timers/promises';
import { toTokcapError, type ErrorFacts } from '../errors.js';
import type { DirectoryListing } from '../layout/scan-directory.js';
import { DEFAULT_LOCK_WAIT_MS, type StoreOptions } from '../ops/store.js';
import type { RowReadOutcome } from './row-batch.js';
import { errorRow, placeholderRow, withBookkeeping, type PackedRow, type RolloutRow } from './rows.js';
import type { LoadListing, RescanListing } from './shared-stat.js';
import {
  DEFAULT_READERS,
  type DirectoryModelOptions,
  type DirectorySnapshot,
  type WatchReaders,
} from './directory-model-inputs.js';
import { ReadQueue } from './read-queue.js';
import { MAX_DELTA, RowStore } from './row-store.js';
import { inRecentOrder, recentHead, type Queued } from './recent-order.js';
import { StatPass } from './stat-pass.js';

export type { FileStat } from './file-signature.js';

export {
  DEFAULT_READERS,
  type DirectoryModelOptions,
  type DirectorySnapshot,
  type WatchReaders,
} from './directory-model-inputs.js';

/** Rollouts in the first batch of a load (about a screenful), unless told otherwise. */
const FIRST_BATCH = 48;

/** How long the first listing of a load waits for its first screen to be read before it is shown. */
const FIRST_SCREEN_WAIT_MS = 250;

/** Rows placed between two yields to the event loop at the start of a load. */
const PLACE_CHUNK = 16384;

/** Rollouts whose signature from another thread is compared between two yields to the event loop. */
const COMPARE_BATCH = 2048;

export class DirectoryModel {
  readonly dir: string;
  private readonly store: StoreOptions;
  private readonly readers: WatchReaders;
  private readonly firstBatch: number;
  private readonly statUnread: boolean;
  private readonly stats: StatPass;
  private readonly now: () => number;
  private readonly markChanges: boolean;
  private readonly trace: ((event: string) => void) | undefined;

  private readonly rows = new RowStore();
  private readonly queue: ReadQueue;
  /** Ids added or read since the running rescan listed the directory: that listing does not remove them. */
  private touchedDuringScan: Set<string> | null = null;
  private invalidNames: string[] = [];
  private tempStateFiles: string[] = [];
  private scanError: ErrorFacts | undefined;

  private idleWaiters: (() => void)[] = [];

  private scanning: Promise<void> | null = null;
  private rescanAgain = false;
  private initialDone = false;
  private firstScanDone = false;
  private disposed = false;
  /** Listeners are not told of changes (`heldChange`: there was one) while the first screen is read. */
  private quiet = false;
  private heldChange = false;
  private version = 0;
  private cached: DirectorySnapshot | null = null;
  private readonly listeners = new Set<() => void>();
  /** Duration of the last complete rescan (stat pass), ms. */
  lastRescanMs = 0;

  constructor(options: DirectoryModelOptions) {
    this.dir = options.dir;
    this.store = { dir: options.dir, lockWaitMs: options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS };
    this.readers = { ...DEFAULT_READERS, ...options.readers };
    this.firstBatch = Math.max(1, options.firstBatch ?? FIRST_BATCH);
    this.statUnread = options.statUnread ?? true;
    this.now = options.now ?? Date.now;
    this.markChanges = options.markChanges ?? true;
    this.trace = options.trace;
    const readers = this.readers;
    const store = this.store;
    const statConcurrency = Math.max(1, options.statConcurrency ?? 4);
    this.stats = new StatPass(
      { dir: this.dir, stat: (path) => readers.stat(path), statUnread: this.statUnread, concurrency: statConcurrency },
      this.rows,
    );
    this.queue = new ReadQueue(
      {
        readBatch: (ids, batch) => readers.readBatch(store, ids, batch),
        unchanged: (id) => this.stats.unchanged(id),
        settle: (id, outcome) => this.settleRead(id, outcome),
        loadDone: () => this.initialDone,
        loadedCount: () => this.rows.loaded,
        changed: () => this.changed(),
        checkIdle: () => this.checkIdle(),
        now: this.now,
        trace: this.trace,
      },
      {
        concurrency: Math.max(1, options.concurrency ?? 3),
        batchSize: Math.max(1, options.batchSize ?? 128),
        firstBatch: this.firstBatch,
      },
    );
  }

  /** A rescan runs, or reads it queued are still waiting (another rescan would add nothing). */
  get busy(): boolean {
    return this.scanning !== null || this.queue.backlogged;
  }

  get storeOptions(): StoreOptions {
    return this.store;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  row(id: string): RolloutRow | undefined {
    return this.rows.get(id);
  }

  /**
   * Rollouts known (read or not): what `snapshot().totals.rollouts` would say, without a
   * snapshot (`rows.length` too, except while a load's first screen is shown alone).
   */
  get size(): number {
    return this.rows.size + this.rows.unplaced;
  }

  /** Rollouts read at least once; what `snapshot().totals.loaded` would say, without a snapshot. */
  get loaded(): number {
    return this.rows.loaded;
  }

  /** What `snapshot().ready` would say, without a snapshot. */
  get ready(): boolean {
    return this.initialDone;
  }

  snapshot(): DirectorySnapshot {
    if (this.cached && this.cached.version === this.version) return this.cached;
    const previous = this.cached;
    const taken = this.rows.take(previous === null);
    this.cached = {
      dir: this.dir,
      get rows() {
        return taken.rows();
      },
      delta: previous && taken.delta ? { ...taken.delta, since: previous.version } : undefined,
      totals: { ...taken.totals, invalidNames: this.invalidNames.length, tempStateFiles: this.tempStateFiles.length },
      invalidNames: this.invalidNames,
      tempStateFiles: this.tempStateFiles,
      pending: this.queue.pending,
      lockWaits: this.queue.lockWaits,
      ready: this.initialDone,
      scanError: this.scanError,
      version: this.version,
    };
    return this.cached;
  }

  /**
   * Lists the directory again: adds new rollouts, drops vanished ones, and queues a read of every
   * rollout whose files changed. Resolves when the changed rollouts are queued (see `idle`).
   * Calls made while a rescan runs coalesce into one more rescan.
   */
  rescan(): Promise<void> {
    if (this.scanning) {
      this.rescanAgain = true;
      return this.scanning;
    }
    const run = async () => {
      do {
        this.rescanAgain = false;
        await this.scanOnce();
      } while (this.rescanAgain && !this.disposed);
    };
    this.scanning = run().finally(() => {
      this.scanning = null;
      this.checkIdle();
    });
    return this.scanning;
  }

  /**
   * Re-reads the named rollouts (ahead of any rescan backlog) if their files changed, or always
   * with `force`. Resolves when each of them has been read (or found unchanged or gone).
   */
  refresh(ids: Iterable<string>, options: { force?: boolean } = {}): Promise<void> {
    return this.queue.refresh(ids, options);
  }

  /**
   * Reads these rollouts next if they are still waiting in a load's queue: the unread rows a view
   * shows (scrolled, sorted or filtered away from the load's order) are read before the others.
   * Adds no read: rollouts not queued are left alone.
   */
  readSoon(ids: Iterable<string>): void {
    this.queue.readSoon(ids);
  }

  /** Resolves when no rescan runs and no read is queued or running. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  dispose(): void {
    this.disposed = true;
    this.queue.dispose();
    this.listeners.clear();
    this.checkIdle();
  }

  // -------------------------------------------------------------------------------------------

  private isIdle(): boolean {
    return this.scanning === null && this.queue.empty;
  }

  /** Idle but for reads waiting for a lock held elsewhere: the load is done (`ready`). */
  private isSettled(): boolean {
    return this.scanning === null && this.queue.settled;
  }

  private checkIdle(): void {
    if (this.firstScanDone && !this.initialDone && this.isSettled()) {
      this.initialDone = true;
      this.changed();
    }
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private changed(): void {
    this.version++;
    this.heldChange = this.quiet;
    if (this.quiet) return;
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch {
        // a listener's failure is its own business
      }
    }
  }

  private async scanOnce(): Promise<void> {
    this.touchedDuringScan = new Set();
    try {
      await this.scanListing();
    } finally {
      this.touchedDuringScan = null;
    }
  }

  private async scanListing(): Promise<void> {
    const t0 = performance.now();
    this.trace?.('scan: start');
    let listing: DirectoryListing;
    let load: LoadListing | undefined;
    let rescanned: RescanListing | undefined;
    try {
      // The first scan of a live load: listed by the read worker while this thread starts the
      // view, and stat'ed by both threads.
      if (this.statUnread && this.rows.size === 0 && this.readers.scanForLoad)
        load = await this.readers.scanForLoad(this.dir).catch(() => undefined);
      // A rescan of rows known (the periodic backstop): listed and stat'ed in the read worker.
      else if (this.rows.size > 0 && this.readers.rescanListing)
        rescanned = await this.readers.rescanListing(this.dir).catch(() => undefined);
      listing = load?.listing ?? rescanned?.listing ?? (await this.readers.scan(this.dir));
      this.trace?.(`scan: listed ${listing.rollouts.size} rollouts`);
    } catch (e) {
      this.scanError = toTokcapError(e, { file: this.dir }).facts();
      this.firstScanDone = true;
      this.changed();
      return;
    }
    if (this.disposed) return;
    let dirty = this.scanError !== undefined;
    this.scanError = undefined;
    if (!sameList(this.invalidNames, listing.invalidNames) || !sameList(this.tempStateFiles, listing.tempStateFiles)) {
      this.invalidNames = listing.invalidNames;
      this.tempStateFiles = listing.tempStateFiles;
      dirty = true;
    }
    if (rescanned) {
      await this.applyRescan(rescanned, t0, dirty);
      return;
    }
    if (this.removeUnlisted(listing)) dirty = true;
    let ids = load?.ids ?? [...listing.rollouts.keys()];
    // A shared stat pass ends soon after the listing: its rows are placed once, with their
    // mtimes (placing 100,000 rows, then replacing each, costs this thread twice), in the
    // view's default order, so that its sort and the read queue's are a pass over sorted rows.
    let firstMtimes = load ? await load.stat() : undefined;
    if (this.disposed) return;
    // The first screen's rollouts (the head of that order, not read yet) are read before any
    // row is shown, and only their rows are placed before listeners hear of them: the first frame
    // of a large load is then its first screen, exactly as the `recent` order has it, and costs
    // what it costs at 10,000 rollouts. The other rows (all older: they come after it in that
    // order) are placed once that frame is drawn; until then the totals count them, not read.
    let early = 0;
    if (firstMtimes) {
      this.trace?.('scan: shared stat pass done');
      // The head of that order in one pass over the mtimes; the whole listing is sorted once its
      // screen is drawn (~0.07 s of this thread at 100,000, after the first batch, not before it).
      const mtimes = firstMtimes;
      const head = recentHead(ids, mtimes, this.firstBatch);
      const headIds = Array.from(head, (i) => ids[i]);
      const headMtimes = Float64Array.from(head, (i) => mtimes[i]);
      early = head.length;
      for (const id of headIds) if (!this.rows.get(id)?.loaded) this.queue.queueLoad(id);
      const earlyRead = early > 0 ? this.queue.whenRead(headIds[early - 1]) : undefined;
      const bulk = this.rows.size === 0 && ids.length > MAX_DELTA;
      this.quiet = true;
      try {
        // A read of one that fails keeps its place (its mtime).
        if (this.rows.place(headIds, headMtimes, 0, early, bulk)) dirty = true;
        this.rows.unplaced = ids.length - early;
        this.queue.pump();
        if (earlyRead) await Promise.race([earlyRead, delay(FIRST_SCREEN_WAIT_MS)]);
      } finally {
        this.quiet = false;
      }
      if (this.disposed) return;
      // Also when only the first screen's reads changed something.
      if (dirty || this.heldChange) this.changed();
      this.trace?.('scan: first screen placed');
      // The live view takes the snapshot with the first screen read on a zero timeout, and React
      // renders it on the next immediate: that frame is drawn before the other rows are placed
      // (~0.2 s of this thread at 100,000) and the rest of the load is queued.
      await delay(0);
      await yieldToEventLoop();
      if (this.disposed) return;
      // The same order as the head's, so its first `early` are the rows placed above.
      ({ ids, mtimes: firstMtimes } = inRecentOrder(ids, firstMtimes));
      dirty = await this.placeRows(ids, firstMtimes, early, bulk);
      if (this.disposed) return;
    } else if (this.rows.place(ids, undefined, 0, ids.length)) dirty = true;
    if (dirty || this.heldChange) this.changed();
    this.trace?.('scan: rows placed');

    const found = await this.statPass(listing, ids, firstMtimes, early);
    if (!found) return;
    const { changed, queuedUnread } = found;
    this.trace?.(`scan: stat pass done, ${changed.length + queuedUnread} to read`);
    this.queue.queueRecentFirst(changed);
    this.lastRescanMs = performance.now() - t0;
    this.firstScanDone = true;
    if (changed.length > 0 || queuedUnread > 0) this.changed();
    this.queue.pump();
  }

  /**
   * The stat pass of a listing: which rollouts changed since they were read, and the mtime of
   * each not read yet (its place in the queue; stat-pass.ts). With a shared pass's mtimes
   * (`firstMtimes`), the unread ones from `early` on are queued as they are. Undefined once disposed.
   */
  private async statPass(
    listing: DirectoryListing,
    ids: readonly string[],
    firstMtimes: Float64Array | undefined,
    early: number,
  ): Promise<{ changed: Queued[]; queuedUnread: number } | undefined> {
    // With the shared pass's mtimes, an unread rollout needs nothing more: it is queued now, in
    // that order; only the others are visited below (none, at the start of a load).
    let todo: readonly string[] = ids;
    let queuedUnread = 0;
    if (firstMtimes) {
      const loaded: string[] = [];
      for (let i = early; i < ids.length; i++) {
        // Reads go on, and keys are handled, in between.
        if ((i - early) % PLACE_CHUNK === PLACE_CHUNK - 1) {
          this.queue.pump();
          await yieldToEventLoop();
          if (this.disposed) return undefined;
        }
        const id = ids[i];
        if (this.rows.get(id)?.loaded) loaded.push(id);
        else if (this.queue.queueLoad(id)) queuedUnread++;
      }
      todo = loaded;
    }
    const changed = await this.stats.changed(listing, todo, () => this.disposed);
    if (this.disposed) return undefined;
    return { changed, queuedUnread };
  }

  /** Removes the rows of rollouts `listing` does not have (but those read since it was made); whether any was. */
  private removeUnlisted(listing: DirectoryListing): boolean {
    let removed = false;
    for (const id of this.rows.ids()) {
      if (listing.rollouts.has(id) || this.queue.claims(id)) continue;
      if (this.touchedDuringScan?.has(id)) continue;
      this.rows.delete(id);
      removed = true;
    }
    return removed;
  }

  /**
   * The rest of a rescan whose listing and signatures the read worker made: one pass over the
   * listing, in chunks (100,000 lookups of fresh id strings take this thread ~0.1 s; keys are
   * handled and frames drawn in between), places the rollouts not known, compares the others'
   * signatures with their rows' and counts the rows listed. Rows not listed are looked for only
   * when that count says there are some, or when rows came or went during the pass.
   */
  private async applyRescan({ listing, ids, keys, mtimes }: RescanListing, t0: number, dirty: boolean): Promise<void> {
    const changed: Queued[] = [];
    const memberships = this.rows.memberships;
    let listed = 0;
    let placed = 0;
    for (let i = 0; i < ids.length; i++) {
      if (i % COMPARE_BATCH === COMPARE_BATCH - 1) {
        await yieldToEventLoop();
        if (this.disposed) return;
      }
      const id = ids[i];
      const row = this.rows.get(id);
      if (row) listed++;
      if (!row?.loaded) {
        // Its place in the queue and on screen: its newest file's mtime (the stat pass here takes its first file's).
        const mtimeMs = this.statUnread ? mtimes[i] : 0;
        if (row) this.rows.placeMtime(id, mtimeMs);
        else {
          this.rows.set(id, placeholderRow(id, mtimeMs));
          placed++;
        }
        changed.push({ id, mtimeMs });
      } else if (row.error || row.readKey !== keys[i]) changed.push({ id, mtimeMs: mtimes[i] });
    }
    const others = this.rows.memberships - memberships - placed;
    if ((others !== 0 || listed + placed !== this.rows.size) && this.removeUnlisted(listing)) dirty = true;
    this.trace?.(`scan: signatures compared, ${changed.length} to read`);
    this.queue.queueRecentFirst(changed);
    this.lastRescanMs = performance.now() - t0;
    this.firstScanDone = true;
    if (dirty || placed > 0 || changed.length > 0) this.changed();
    this.queue.pump();
  }

  /**
   * Places a row for each listed rollout from `start` on not known yet, in chunks, yielding in
   * between: the first batch's copy goes to the worker first, and keys are handled. Whether any
   * was placed.
   */
  private async placeRows(
    ids: readonly string[],
    mtimes: Float64Array,
    start: number,
    bulk: boolean,
  ): Promise<boolean> {
    let placed = false;
    for (let from = start; from < ids.length && !this.disposed; from += PLACE_CHUNK) {
      if (from > start) await yieldToEventLoop();
      const to = Math.min(ids.length, from + PLACE_CHUNK);
      if (this.rows.place(ids, mtimes, from, to, bulk)) placed = true;
      this.rows.unplaced = ids.length - to;
    }
    this.rows.unplaced = 0;
    return placed;
  }

  private settleRead(id: string, outcome: RowReadOutcome): void {
    const prev = this.rows.get(id);
    const changedAt = this.initialDone && this.markChanges ? this.now() : (prev?.changedAt ?? null);
    const seq = (prev?.seq ?? 0) + 1;
    if (!outcome.ok) {
      this.put(id, errorRow(prev ?? placeholderRow(id), outcome.error, changedAt, seq));
      return;
    }
    if ('gone' in outcome) {
      if (this.rows.has(id)) this.rows.delete(id);
      return;
    }
    const signature = outcome.signature && { key: outcome.signature.key, kinds: interned(outcome.signature.kinds) };
    this.put(id, withBookkeeping(outcome.row, changedAt, seq, signature));
  }

  /** A row read (its signature on it: none when the read failed). */
  private put(id: string, row: PackedRow): void {
    this.rows.set(id, row);
    this.touchedDuringScan?.add(id);
  }
}

/**
 * One string for each of a few values (the kinds present), not one per rollout: those that
 * crossed from the worker are copies of their own.
 */
const WORDS = new Map<string, string>();
function interned(word: string): string {
  const known = WORDS.get(word);
  if (known !== undefined) return known;
  if (WORDS.size < 256) WORDS.set(word, word);
  return word;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
