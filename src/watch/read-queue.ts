/**
 * The directory model's read queue: which rollouts to read next and the reads running. Rollouts
 * named by change events (`refresh`) or shown by a view (`readSoon`) come before a rescan's
 * backlog, which is in the view's default order; reads run in batches of bounded concurrency, the
 * first batch of a load alone and about a screenful. A batch never waits for a lock another
 * process holds: that rollout is read on its own, with the store's lock wait (`waitForLock`), and
 * counts apart (`lockWaits`) until its read is done or the queue is disposed.
 */
import { toTokcapError } from '../errors.js';
import { IdQueue } from './id-queue.js';
import { byRecency, firstInOrder, type Queued } from './recent-order.js';
import type { BatchOptions, RowReadOutcome } from './row-batch.js';
import type { RowError } from './rows.js';

/** What the queue needs of the model it reads for. */
export interface ReadHost {
  readBatch(ids: readonly string[], options?: BatchOptions): Promise<RowReadOutcome[]>;
  /** Whether the rollout, read before, has not changed since (its read is then skipped). */
  unchanged(id: string): Promise<boolean>;
  /** A read's outcome, for the rollout's row. */
  settle(id: string, outcome: RowReadOutcome): void;
  /** The first load's reads are all done. */
  loadDone(): boolean;
  loadedCount(): number;
  /** Something changed (listeners are told). */
  changed(): void;
  /** The queue may have become empty. */
  checkIdle(): void;
  now(): number;
  trace?: (event: string) => void;
}

export interface ReadQueueOptions {
  /** Batches of rollout reads in flight at once. */
  concurrency: number;
  /** Rollouts per batch. */
  batchSize: number;
  /** Rollouts in the first batch of a load (the first screen's rows). */
  firstBatch: number;
}

interface Waiter {
  minRun: number;
  resolve: () => void;
}

const NO_OUTCOME: RowReadOutcome = {
  ok: false,
  error: { kind: 'other', message: 'internal: no outcome for this rollout' },
};

export class ReadQueue {
  /** Ids named by change events or shown by a view: read first. */
  private readonly urgent = new IdQueue();
  /** Ids found changed by a rescan, most recently modified first. */
  private readonly backlog = new IdQueue();
  private readonly forced = new Set<string>();
  private readonly inflight = new Set<string>();
  /** Of `inflight`: rollouts whose lock is held elsewhere, waited for outside any batch (`waitForLock`). */
  private readonly waits = new Map<string, number>();
  /** The lock waits as last shown (a new map only when they changed). */
  private waitsShown: ReadonlyMap<string, number> = new Map();
  /** Ends the lock waits when the queue is disposed (a quit never waits for a lock). */
  private readonly lifetime = new AbortController();
  private readonly again = new Set<string>();
  private runCounter = 0;
  private batches = 0;
  private readonly waiters = new Map<string, Waiter[]>();
  private disposed = false;

  constructor(
    private readonly host: ReadHost,
    private readonly options: ReadQueueOptions,
  ) {}

  private get concurrency(): number {
    return this.options.concurrency;
  }
  private get batchSize(): number {
    return this.options.batchSize;
  }
  private get firstBatch(): number {
    return this.options.firstBatch;
  }

  /** Reads queued or running, but those waiting for a lock. */
  get pending(): number {
    return this.urgent.size + this.backlog.size + this.inflight.size - this.waits.size;
  }

  /** Rollouts waiting for a lock held elsewhere, and since when (the host's clock). */
  get lockWaits(): ReadonlyMap<string, number> {
    return this.waitsShown;
  }

  /** A rescan's reads are still waiting to start. */
  get backlogged(): boolean {
    return this.backlog.size > 0;
  }

  /** Nothing queued or running. */
  get empty(): boolean {
    return this.urgent.size === 0 && this.backlog.size === 0 && this.inflight.size === 0;
  }

  /** Nothing queued or running but reads waiting for a lock. */
  get settled(): boolean {
    return this.urgent.size === 0 && this.backlog.size === 0 && this.inflight.size === this.waits.size;
  }

  /** Whether a read of `id` is running or comes first (a listing made before it must not drop its row). */
  claims(id: string): boolean {
    return this.inflight.has(id) || this.urgent.has(id);
  }

  /** Queues a read of a rollout a load found (unless one is running or comes first). */
  queueLoad(id: string): boolean {
    if (this.claims(id)) return false;
    this.backlog.add(id);
    return true;
  }

  /** Resolves once a read of `id` that starts from now on is done (or the queue is disposed). */
  whenRead(id: string): Promise<void> {
    return new Promise((resolve) => {
      const list = this.waiters.get(id) ?? [];
      list.push({ minRun: this.runCounter, resolve });
      this.waiters.set(id, list);
    });
  }

  /**
   * Re-reads the named rollouts (ahead of any rescan backlog) if their files changed, or always
   * with `force`. Resolves when each of them has been read (or found unchanged or gone).
   */
  refresh(ids: Iterable<string>, options: { force?: boolean } = {}): Promise<void> {
    const promises: Promise<void>[] = [];
    for (const id of ids) {
      if (this.disposed) break;
      promises.push(this.whenRead(id));
      if (options.force) this.forced.add(id);
      if (this.inflight.has(id)) {
        this.again.add(id);
        continue;
      }
      this.backlog.delete(id);
      this.urgent.add(id);
    }
    this.pump();
    return Promise.all(promises).then(() => undefined);
  }

  /**
   * Reads these rollouts next if they are still waiting in a load's queue: the unread rows a view
   * shows (scrolled, sorted or filtered away from the load's order) are read before the others.
   * Adds no read: rollouts not queued are left alone.
   */
  readSoon(ids: Iterable<string>): void {
    let moved = false;
    for (const id of ids) {
      if (!this.backlog.delete(id)) continue;
      this.urgent.add(id);
      moved = true;
    }
    if (moved) this.pump();
  }

  /**
   * Queues the reads in the view's default order (`recent`, ties by id), so that the first batch
   * is the first screen. Those are queued, and their batch started, before the rest is sorted
   * (100,000 rollouts: ~0.1 s of this thread, while the worker reads the first batch).
   */
  queueRecentFirst(changed: Queued[]): void {
    const queue = (q: Queued) => {
      if (this.urgent.has(q.id)) return;
      if (this.inflight.has(q.id)) this.again.add(q.id);
      else this.backlog.add(q.id);
    };
    const first = firstInOrder(changed, this.firstBatch, byRecency);
    for (const q of first) queue(q);
    this.pump();
    const queuedFirst = new Set(first);
    changed.sort(byRecency);
    for (const q of changed) if (!queuedFirst.has(q)) queue(q);
  }

  pump(): void {
    // The first batch of a load (the first screen's rollouts) alone: batches copied together
    // share this thread's turns, and the first would be read last.
    const concurrency = this.host.loadDone() || this.host.loadedCount() > 0 ? this.concurrency : 1;
    while (!this.disposed && this.batches < concurrency) {
      // The first batch of a load is about a screenful: the first rows show sooner.
      const size =
        this.host.loadDone() || this.runCounter > 0 ? this.batchSize : Math.min(this.batchSize, this.firstBatch);
      const ids: string[] = [];
      while (ids.length < size) {
        const id = this.urgent.take() ?? this.backlog.take();
        if (id === undefined) break;
        ids.push(id);
      }
      if (ids.length === 0) break;
      const runs = ids.map((id) => {
        this.inflight.add(id);
        return ++this.runCounter;
      });
      const forced = ids.map((id) => this.forced.delete(id));
      this.batches++;
      this.host.trace?.(`read: batch of ${ids.length} queued`);
      void this.readMany(ids, forced, runs).finally(() => {
        this.batches--;
        this.host.trace?.(`read: batch of ${ids.length} done, ${this.host.loadedCount()} read`);
        // (a rollout waiting for its lock finishes its run when that read is done)
        ids.forEach((id, i) => this.waits.has(id) || this.finishRun(id, runs[i]));
        this.pump();
        // The reads are no longer in flight: listeners' last snapshot must not still count them.
        if (!this.disposed) this.host.changed();
      });
    }
    this.host.checkIdle();
  }

  private finishRun(id: string, run: number): void {
    this.inflight.delete(id);
    const list = this.waiters.get(id);
    if (list) {
      const keep = list.filter((w) => w.minRun >= run);
      for (const w of list) if (w.minRun < run) w.resolve();
      if (keep.length > 0) this.waiters.set(id, keep);
      else this.waiters.delete(id);
    }
    if (this.again.delete(id) && !this.disposed) this.urgent.add(id);
  }

  /**
   * Reads a batch: one locked copy per rollout (readers.readBatch), its stamps kept as the
   * rollout's signature. A loaded rollout named again (not forced) is first stat'ed and skipped
   * when none of its files changed since it was read.
   */
  private async readMany(ids: readonly string[], forced: readonly boolean[], runs: readonly number[]): Promise<void> {
    const todo: string[] = [];
    const todoRuns: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!forced[i] && (await this.host.unchanged(id))) continue;
      todo.push(id);
      todoRuns.push(runs[i]);
    }
    if (todo.length === 0 || this.disposed) return;
    let outcomes: RowReadOutcome[];
    try {
      // A rollout whose lock is held elsewhere does not hold up the batch: it is waited for alone.
      outcomes = await this.host.readBatch(todo, { wait: false });
    } catch (e) {
      outcomes = todo.map((id) => ({ ok: false, error: rowError(e, id) }));
    }
    if (this.disposed) return;
    todo.forEach((id, i) => {
      const outcome = outcomes[i] ?? NO_OUTCOME;
      if (!outcome.ok && outcome.lockHeld) this.waitForLock(id, todoRuns[i]);
      else this.host.settle(id, outcome);
    });
  }

  /**
   * Reads a rollout whose lock another process holds on its own, with the store's lock wait:
   * it counts in `lockWaits` meanwhile, the other reads go on, and the queue is `settled`
   * without it. The run ends (and `refresh` callers hear of it) when that read is done.
   */
  private waitForLock(id: string, run: number): void {
    this.waits.set(id, this.host.now());
    this.waitsShown = new Map(this.waits);
    this.host.trace?.(`read: ${id} waits for its lock`);
    const read = this.host
      .readBatch([id], { signal: this.lifetime.signal })
      .catch((e: unknown): RowReadOutcome[] => [{ ok: false, error: rowError(e, id) }]);
    void read.then(([outcome]) => {
      if (this.disposed) return;
      this.waits.delete(id);
      this.waitsShown = new Map(this.waits);
      this.host.settle(id, outcome ?? NO_OUTCOME);
      this.finishRun(id, run);
      this.host.changed();
      this.pump();
    });
  }

  /** Stops: nothing more is read, lock waits end, and every caller waiting for a read is answered. */
  dispose(): void {
    this.disposed = true;
    this.lifetime.abort(new Error('the view was closed'));
    this.urgent.clear();
    this.backlog.clear();
    this.again.clear();
    for (const list of this.waiters.values()) for (const w of list) w.resolve();
    this.waiters.clear();
  }
}

function rowError(e: unknown, id: string): RowError {
  return toTokcapError(e, { rolloutId: id }).facts();
}
