/**
 * Row batches read by the read worker for the watch's readers (worker-readers.ts): this thread
 * copies each rollout of a batch under its lock into an arena (`copyForWorker`), hands the arena
 * and the copies' descriptors to the worker, and keeps the batch until its rows come back. Should
 * the worker be lost, the batches in flight are read again here (their copies went with it).
 */
import { readFileSync } from 'node:fs';
import type { CopyArena, RolloutCopyRecord } from '../ops/rollout-copy.js';
import type { StoreOptions } from '../ops/store.js';
import type { ReadWorkerLink } from './read-worker-link.js';
import type { BatchReply, BatchRequest } from './read-worker.js';
import type { BatchOptions, RowReadOutcome } from './row-batch.js';

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
export const readingModules = () =>
  (batchModules ??= Promise.all([
    import('./row-batch.js'),
    import('../ops/rollout-copy.js'),
    import('./batch-codec.js'),
  ]).then((modules) => {
    codec = modules[2];
    return modules;
  }));

type ReadingModules = Awaited<ReturnType<typeof readingModules>>;

/** A batch copied for the worker: the records it reads, and the rollouts left out. */
export interface CopiedBatch {
  /** Every rollout's copy, in the batch's order. */
  readonly copied: readonly RolloutCopyRecord[];
  /** The rollouts whose lock is held elsewhere (a batch that does not wait): nothing to read. */
  readonly held: readonly boolean[];
  /** The copies the worker reads (`copied` itself when none is held). */
  readonly records: readonly RolloutCopyRecord[];
}

/**
 * Copies a batch under its rollouts' locks in this thread, one lock at a time (the worker takes
 * none: docs/format.md#lock-mechanism), keeping open for the worker to close no more descriptors
 * than `keepFds`.
 */
export async function copyForWorker(
  modules: ReadingModules,
  store: StoreOptions,
  ids: readonly string[],
  arena: CopyArena,
  options: BatchOptions | undefined,
  keepFds: number,
): Promise<CopiedBatch> {
  const [{ copyBatch, heldElsewhere }] = modules;
  arena.keepFds = keepFds;
  const copied = await copyBatch(store, ids, arena, options);
  const held = copied.map((r) => heldElsewhere(r, options));
  const records = held.includes(true) ? copied.filter((_, i) => !held[i]) : copied;
  return { copied, held, records };
}

interface PendingBatch {
  store: StoreOptions;
  ids: readonly string[];
  arena: CopyArena;
  /** Descriptors handed to the worker with the batch. */
  fds: number;
  options: BatchOptions | undefined;
  resolve: (r: RowReadOutcome[]) => void;
  reject: (e: unknown) => void;
}

export class WorkerBatches {
  private readonly pending = new Map<number, PendingBatch>();
  /** Arenas back from the worker, for the next batches. */
  private readonly arenas: CopyArena[] = [];
  /** Descriptors handed to the worker and not yet closed by it (as far as this thread knows). */
  private handedOff = 0;
  private drained: (() => void) | null = null;

  constructor(
    private readonly link: ReadWorkerLink,
    private readonly fdBudget = descriptorBudget(),
  ) {}

  async read(store: StoreOptions, ids: readonly string[], options?: BatchOptions): Promise<RowReadOutcome[]> {
    const modules = await readingModules();
    const [{ readBatchHere, lockHeldOutcome }, { CopyArena, closeCopied }, { encodeRecords }] = modules;
    const arena = this.arenas.pop() ?? new CopyArena();
    if (!this.link.start()) return readBatchHere(store, ids, arena, options);
    if (this.link.loading) {
      try {
        return await readBatchHere(store, ids, arena, options);
      } finally {
        this.arenas.push(arena);
      }
    }
    // Descriptors left for the worker to close stay within a share of the process's limit.
    const keepFds = Math.max(0, this.fdBudget - this.handedOff);
    const { copied, held, records } = await copyForWorker(modules, store, ids, arena, options, keepFds);
    const w = this.link.current;
    if (!w || records.length === 0) {
      closeCopied(arena);
      if (!w) return readBatchHere(store, ids, arena, options);
      this.arenas.push(arena);
      return copied.map(lockHeldOutcome);
    }
    const fds = arena.fds;
    // The worker closes them; should it die first, they stay open (closing them here could
    // close a number reused since).
    arena.fds = [];
    this.handedOff += fds.length;
    const request: BatchRequest = {
      type: 'batch',
      seq: this.link.nextSeq(),
      store: { dir: store.dir, lockWaitMs: store.lockWaitMs },
      // The whole buffer moves (and comes back): no copy of the bytes.
      arena: new Uint8Array(arena.bytes.buffer, 0, arena.used),
      records: encodeRecords(records),
      fds,
    };
    const sent = records === copied ? ids : records.map((r) => r.rolloutId);
    const read = await new Promise<RowReadOutcome[]>((resolve, reject) => {
      this.pending.set(request.seq, { store, ids: sent, arena, fds: fds.length, options, resolve, reject });
      w.postMessage(request, [arena.bytes.buffer as ArrayBuffer, request.records.numbers.buffer as ArrayBuffer]);
    });
    if (records === copied) return read;
    let next = 0;
    return copied.map((r, i) => (held[i] ? lockHeldOutcome(r) : read[next++]));
  }

  onReply(reply: BatchReply): void {
    const p = this.pending.get(reply.seq);
    if (!p) return;
    this.pending.delete(reply.seq);
    this.handedOff -= p.fds;
    p.arena.bytes = Buffer.from(reply.arena.buffer);
    this.arenas.push(p.arena);
    // The rows with this thread's id strings.
    p.resolve(codec!.decodeOutcomes(reply.outcomes, p.ids));
    this.settle();
  }

  /** The worker is lost with the copies: the batches in flight are read again, here. */
  readAgainHere(): void {
    for (const [key, p] of [...this.pending]) {
      this.pending.delete(key);
      readingModules()
        .then(([{ readBatchHere }, { CopyArena }]) => readBatchHere(p.store, p.ids, new CopyArena(), p.options))
        .then(p.resolve, p.reject);
    }
    this.settle();
  }

  /** Resolves when no batch is in flight, or after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<void> {
    if (this.pending.size === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private settle(): void {
    if (this.pending.size === 0 && this.drained) this.drained();
  }
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
