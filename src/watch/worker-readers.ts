/**
 * Batch row reads on both cores, for the live view and `watch --once`: this thread copies each
 * rollout of a batch under its lock (one at a time, docs/format.md#lock-mechanism) into an arena, moves the
 * arena to the read worker (read-worker.ts), which computes the rows, and copies the next batch
 * meanwhile. The worker is started on the first batch; if it cannot start (no compiled worker
 * next to this module, e.g. when running from sources) or dies, batches are read in this thread
 * instead, transparently (those in flight are read again here).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CopyArena } from '../ops/rollout-copy.js';
import type { StoreOptions } from '../ops/store.js';
import type {
  BatchReply,
  BatchRequest,
  ReadyReply,
  RescanReply,
  RescanRequest,
  ScanReply,
  ScanRequest,
} from './read-worker.js';
import type { BatchOptions, RowReadOutcome } from './row-batch.js';
import type { LoadListing, RescanListing } from './shared-stat.js';

/**
 * The modules that copy and read batches, and carry them across (batch-codec.ts), loaded with the
 * first batch: the worker and its listing can start before them (commands/watch/early.ts starts
 * both before the command line is parsed; these take ~0.1 s to load).
 */
let batchModules:
  | Promise<
      [typeof import('./row-batch.js'), typeof import('../ops/rollout-copy.js'), typeof import('./batch-codec.js')]
    >
  | undefined;
/** batch-codec.ts, once loaded: every batch sent waited for it, so every reply finds it. */
let codec: typeof import('./batch-codec.js') | undefined;
const readingModules = () =>
  (batchModules ??= Promise.all([
    import('./row-batch.js'),
    import('../ops/rollout-copy.js'),
    import('./batch-codec.js'),
  ]).then((modules) => {
    codec = modules[2];
    return modules;
  }));

/**
 * The shared stat pass's module (and the listing code it imports, ~25-35 ms to load under load),
 * loaded once the worker and its listing are started: commands/watch/early.ts imports this module
 * to start them, and they are on the first screen's path; this one is needed only with the listing.
 */
let sharedStatModule: Promise<typeof import('./shared-stat.js')> | undefined;
const sharedStat = () => (sharedStatModule ??= import('./shared-stat.js'));

interface PendingScan {
  dir: string;
  /** Settled by the listing (undefined: list in this thread instead). */
  listed: (l: LoadListing | undefined) => void;
  /** Settled when the worker's share of the stat pass is done (false: it stopped). */
  statted: (completed: boolean) => void;
}

interface Pending {
  store: StoreOptions;
  ids: readonly string[];
  arena: CopyArena;
  /** Descriptors handed to the worker with the batch. */
  fds: number;
  options: BatchOptions | undefined;
  resolve: (r: RowReadOutcome[]) => void;
  reject: (e: unknown) => void;
}

export interface WorkerReaders {
  readBatch(store: StoreOptions, ids: readonly string[], options?: BatchOptions): Promise<RowReadOutcome[]>;
  /**
   * The directory listed by the worker, and a stat pass shared with it (shared-stat.ts), for the
   * start of a live load; undefined when there is no worker (the caller lists it itself).
   */
  scanForLoad(dir: string): Promise<LoadListing | undefined>;
  /**
   * The directory listed again by the worker, with every rollout's change signature (a rescan's
   * stat pass, off this thread); undefined when there is no worker (the caller lists and stats).
   */
  rescanListing(dir: string): Promise<RescanListing | undefined>;
  /**
   * Whether batches currently go to the worker (false before the first one, after a fallback, and
   * while the worker is busy with a load's listing and stat pass and has not loaded its reading
   * modules yet: those batches are read in this thread).
   */
  readonly inWorker: boolean;
  /**
   * Starts the worker now rather than on the first batch: it loads its modules while this
   * thread does something else (the live view loads its renderer), not while a batch waits.
   */
  start(): void;
  /**
   * Starts the worker and its listing of `dir` for a load now; the next `scanForLoad(dir)` (the
   * same string) takes that listing instead of asking for another.
   */
  prefetch(dir: string): void;
  /** Lets the batches in flight finish (at most `timeoutMs`), then stops the worker. */
  close(timeoutMs?: number): Promise<void>;
}

export function createWorkerReaders(workerUrl: URL = new URL('./read-worker.js', import.meta.url)): WorkerReaders {
  let worker: Worker | null = null;
  let broken = !existsSync(fileURLToPath(workerUrl));
  let closed = false;
  let seq = 0;
  const pending = new Map<number, Pending>();
  const scans = new Map<number, PendingScan>();
  const rescans = new Map<number, (r: RescanListing | undefined) => void>();
  /** Arenas back from the worker, for the next batches. */
  const arenas: CopyArena[] = [];
  let drained: (() => void) | null = null;
  /** Descriptors handed to the worker and not yet closed by it (as far as this thread knows). */
  let handedOff = 0;
  /**
   * A load's listing was asked of the worker, which loads its reading modules only after that
   * load's stat pass (read-worker.ts) and says so: until then batches are read in this thread,
   * whose modules are loaded, rather than wait there (~60 ms of the first screen at 100,000).
   */
  let workerLoading = false;
  const fdBudget = descriptorBudget();

  const settle = () => {
    if (pending.size === 0 && drained) drained();
  };

  const fallBack = () => {
    broken = true;
    const w = worker;
    worker = null;
    void w?.terminate();
    // A listing not given: this thread lists; a share of the stat pass not finished: this thread
    // stats what has no mtime.
    for (const s of scans.values()) {
      s.listed(undefined);
      s.statted(false);
    }
    scans.clear();
    for (const r of rescans.values()) r(undefined);
    rescans.clear();
    // The copies went with the worker: read those batches again, here.
    for (const [key, p] of [...pending]) {
      pending.delete(key);
      readingModules()
        .then(([{ readBatchHere }, { CopyArena }]) => readBatchHere(p.store, p.ids, new CopyArena(), p.options))
        .then(p.resolve, p.reject);
    }
    settle();
  };

  const start = (): Worker | null => {
    if (worker || broken || closed) return worker;
    try {
      // A young generation of 8 MB, as the other workers' (src/threads/parallel-rollouts.ts):
      // V8's default nursery adds ~20 MB to the peak RSS of a load of 100,000 rollouts.
      // trackUnmanagedFds off: the worker closes descriptors this thread opened (a tracking
      // worker warns about each one, and would close its own at exit; it opens none).
      const w = new Worker(workerUrl, { resourceLimits: { maxYoungGenerationSizeMb: 8 }, trackUnmanagedFds: false });
      w.unref();
      w.on('message', (reply: BatchReply | ScanReply | ReadyReply | RescanReply) => {
        if (reply.type === 'ready') {
          workerLoading = false;
          return;
        }
        if (reply.type === 'rescanned') {
          onRescanReply(reply);
          return;
        }
        if (reply.type !== 'batch') {
          onScanReply(reply);
          return;
        }
        const p = pending.get(reply.seq);
        if (!p) return;
        pending.delete(reply.seq);
        handedOff -= p.fds;
        p.arena.bytes = Buffer.from(reply.arena.buffer);
        arenas.push(p.arena);
        // The rows with this thread's id strings.
        p.resolve(codec!.decodeOutcomes(reply.outcomes, p.ids));
        settle();
      });
      w.on('error', fallBack);
      w.on('exit', () => {
        if (worker === w) fallBack();
      });
      worker = w;
    } catch {
      broken = true;
    }
    return worker;
  };

  const scanInWorker = (dir: string): Promise<LoadListing | undefined> => {
    const w = start();
    if (!w) return Promise.resolve(undefined);
    const request: ScanRequest = { type: 'scan', seq: ++seq, dir };
    workerLoading = true;
    const listed = new Promise<LoadListing | undefined>((resolve) => {
      scans.set(request.seq, { dir, listed: resolve, statted: () => undefined });
      w.postMessage(request);
    });
    // (a failure is the listing's reply's to report)
    sharedStat().catch(() => undefined);
    return listed;
  };
  /** A listing asked for before the load (`prefetch`), for the first `scanForLoad` of its dir. */
  let prefetched: { dir: string; listing: Promise<LoadListing | undefined> } | undefined;

  const onScanReply = (reply: ScanReply) => {
    const s = scans.get(reply.seq);
    if (!s) return;
    if (reply.type === 'stat-done') {
      scans.delete(reply.seq);
      s.statted(true);
    } else if ('failed' in reply) {
      scans.delete(reply.seq);
      s.listed(undefined);
    } else {
      const shared = reply.listing;
      // 'stat-done' may come before the module: it settles `done` whenever it comes.
      const done = new Promise<boolean>((resolve) => (s.statted = resolve));
      sharedStat().then(
        ({ listingOf, statHere }) => {
          const { listing, ids } = listingOf(shared);
          s.listed({ listing, ids, stat: () => statHere(s.dir, ids, shared, done) });
        },
        () => s.listed(undefined),
      );
    }
  };

  const onRescanReply = (reply: RescanReply) => {
    const r = rescans.get(reply.seq);
    if (!r) return;
    rescans.delete(reply.seq);
    if ('failed' in reply) {
      r(undefined);
      return;
    }
    sharedStat().then(
      ({ listingOf }) => {
        const { listing, ids } = listingOf(reply.listing);
        r({ listing, ids, keys: reply.keys, mtimes: new Float64Array(reply.listing.mtimes) });
      },
      () => r(undefined),
    );
  };

  return {
    get inWorker() {
      return worker !== null && !broken && !workerLoading;
    },
    start() {
      start();
    },
    async readBatch(store, ids, options) {
      const [
        { copyBatch, readBatchHere, heldElsewhere, lockHeldOutcome },
        { CopyArena, closeCopied },
        { encodeRecords },
      ] = await readingModules();
      const arena = arenas.pop() ?? new CopyArena();
      if (!start()) return readBatchHere(store, ids, arena, options);
      if (workerLoading) {
        try {
          return await readBatchHere(store, ids, arena, options);
        } finally {
          arenas.push(arena);
        }
      }
      // Descriptors left for the worker to close stay within a share of the process's limit.
      arena.keepFds = Math.max(0, fdBudget - handedOff);
      const copied = await copyBatch(store, ids, arena, options);
      // Rollouts whose lock is held elsewhere (a batch that does not wait) have nothing to read.
      const held = copied.map((r) => heldElsewhere(r, options));
      const records = held.includes(true) ? copied.filter((_, i) => !held[i]) : copied;
      const w = worker;
      if (!w || records.length === 0) {
        closeCopied(arena);
        if (!w) return readBatchHere(store, ids, arena, options);
        arenas.push(arena);
        return copied.map(lockHeldOutcome);
      }
      const fds = arena.fds;
      // The worker closes them; should it die first, they stay open (closing them here could
      // close a number reused since).
      arena.fds = [];
      handedOff += fds.length;
      const request: BatchRequest = {
        type: 'batch',
        seq: ++seq,
        store: { dir: store.dir, lockWaitMs: store.lockWaitMs },
        // The whole buffer moves (and comes back): no copy of the bytes.
        arena: new Uint8Array(arena.bytes.buffer, 0, arena.used),
        records: encodeRecords(records),
        fds,
      };
      const sent = records === copied ? ids : records.map((r) => r.rolloutId);
      const read = await new Promise<RowReadOutcome[]>((resolve, reject) => {
        pending.set(request.seq, { store, ids: sent, arena, fds: fds.length, options, resolve, reject });
        w.postMessage(request, [arena.bytes.buffer as ArrayBuffer, request.records.numbers.buffer as ArrayBuffer]);
      });
      if (records === copied) return read;
      let next = 0;
      return copied.map((r, i) => (held[i] ? lockHeldOutcome(r) : read[next++]));
    },
    rescanListing(dir) {
      const w = start();
      // (a worker still busy with a load's stat pass: this thread, as before a worker)
      if (!w || workerLoading) return Promise.resolve(undefined);
      const request: RescanRequest = { type: 'rescan', seq: ++seq, dir };
      return new Promise<RescanListing | undefined>((resolve) => {
        rescans.set(request.seq, resolve);
        w.postMessage(request);
      });
    },
    prefetch(dir) {
      prefetched = { dir, listing: scanInWorker(dir) };
    },
    scanForLoad(dir) {
      const early = prefetched;
      prefetched = undefined;
      const listing = early?.dir === dir ? early.listing : scanInWorker(dir);
      // Idle until the listing comes (a listing already there runs first): what the stat pass
      // and the first batch (read here, see workerLoading) call is loaded meanwhile.
      setImmediate(() => {
        void sharedStat().then(
          ({ prepareStat }) => prepareStat(),
          () => undefined,
        );
        // (a failure is the first batch's to report)
        readingModules().catch(() => undefined);
      });
      return listing;
    },
    async close(timeoutMs = 2000) {
      closed = true;
      // Nobody waits for a load any more.
      for (const s of scans.values()) {
        s.listed(undefined);
        s.statted(true);
      }
      scans.clear();
      for (const r of rescans.values()) r(undefined);
      rescans.clear();
      if (pending.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          drained = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const w = worker;
      worker = null;
      if (w) await w.terminate();
    },
  };
}

/**
 * A quarter of the soft limit on open files (/proc/self/limits; 1024 when it cannot be read):
 * what batches in flight may keep open for the worker to close.
 */
function descriptorBudget(): number {
  let limit = 1024;
  try {
    const line = readFileSync('/proc/self/limits', 'latin1')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s+/)[3]);
    if (Number.isFinite(soft) && soft > 0) limit = soft;
  } catch {
    // not Linux: the conservative default
  }
  return Math.floor(limit / 4);
}
