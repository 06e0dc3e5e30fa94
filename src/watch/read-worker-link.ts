/**
 * The read worker's thread (read-worker.ts) for the watch's readers (worker-readers.ts): started
 * on demand, its replies handed on, and its loss (it cannot start, or dies) said once, so that
 * what waited for it is done in this thread instead.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BatchReply, ReadyReply, RescanReply, ScanReply } from './read-worker.js';

/** The replies the readers take (the worker's 'ready' is the link's own). */
export type ReaderReply = BatchReply | ScanReply | RescanReply;

export interface LinkListener {
  reply(reply: ReaderReply): void;
  /** The worker stopped or died with requests in flight: none of them will be answered. */
  lost(): void;
}

export class ReadWorkerLink {
  private worker: Worker | null = null;
  /** No worker can run (no compiled worker next to the module, e.g. from sources), or one died. */
  private broken: boolean;
  private closed = false;
  private seq = 0;
  /**
   * A load's listing was asked of the worker, which loads its reading modules only after that
   * load's stat pass (read-worker.ts) and says so: until then batches are read in this thread,
   * whose modules are loaded, rather than wait there (~60 ms of the first screen at 100,000).
   */
  private loadingModules = false;

  constructor(
    private readonly url: URL,
    private readonly listener: LinkListener,
  ) {
    this.broken = !existsSync(fileURLToPath(url));
  }

  /** The running worker (null before the first start, after a loss, once closed). */
  get current(): Worker | null {
    return this.worker;
  }

  /** Whether batches go to the worker now (it runs and has its reading modules). */
  get reading(): boolean {
    return this.worker !== null && !this.broken && !this.loadingModules;
  }

  /** Whether the worker is busy with a load's listing and stat pass, its reading modules not loaded. */
  get loading(): boolean {
    return this.loadingModules;
  }

  /** The worker, started unless it runs (null: none can run, or the link is closed). */
  start(): Worker | null {
    if (this.worker || this.broken || this.closed) return this.worker;
    try {
      // A young generation of 8 MB, as the other workers' (src/threads/parallel-rollouts.ts):
      // V8's default nursery adds ~20 MB to the peak RSS of a load of 100,000 rollouts.
      // trackUnmanagedFds off: the worker closes descriptors this thread opened (a tracking
      // worker warns about each one, and would close its own at exit; it opens none).
      const w = new Worker(this.url, { resourceLimits: { maxYoungGenerationSizeMb: 8 }, trackUnmanagedFds: false });
      w.unref();
      w.on('message', (reply: ReaderReply | ReadyReply) => {
        if (reply.type === 'ready') this.loadingModules = false;
        else this.listener.reply(reply);
      });
      w.on('error', () => this.lose());
      w.on('exit', () => {
        if (this.worker === w) this.lose();
      });
      this.worker = w;
    } catch {
      this.broken = true;
    }
    return this.worker;
  }

  /** A request's number, unique among this link's requests of every kind. */
  nextSeq(): number {
    return ++this.seq;
  }

  /** Posts a load's listing request: the worker loads its reading modules after that load's stat pass. */
  postLoadRequest(w: Worker, request: unknown): void {
    this.loadingModules = true;
    w.postMessage(request);
  }

  /** No worker starts from now on (the one running, if any, stops with `terminate`). */
  close(): void {
    this.closed = true;
  }

  async terminate(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }

  private lose(): void {
    this.broken = true;
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
    this.listener.lost();
  }
}
