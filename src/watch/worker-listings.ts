/**
 * The directory listings the read worker makes for the watch's readers (worker-readers.ts): a
 * load's listing with a stat pass shared with this thread (shared-stat.ts), and a rescan's listing
 * with every rollout's change signature. Each request waits for its reply, or for the worker's
 * loss or the readers' close, which answer undefined (this thread lists instead).
 */
import type { ReadWorkerLink } from './read-worker-link.js';
import type { RescanReply, RescanRequest, ScanReply, ScanRequest } from './read-worker.js';
import type { LoadListing, RescanListing } from './shared-stat.js';

/**
 * The shared stat pass's module (and the listing code it imports, ~25-35 ms to load under load),
 * loaded once the worker and its listing are started: commands/watch/early.ts imports the readers
 * to start them, and they are on the first screen's path; this one is needed only with the listing.
 */
let sharedStatModule: Promise<typeof import('./shared-stat.js')> | undefined;
export const sharedStat = () => (sharedStatModule ??= import('./shared-stat.js'));

interface PendingScan {
  dir: string;
  /** Settled by the listing (undefined: list in this thread instead). */
  listed: (l: LoadListing | undefined) => void;
  /** Settled when the worker's share of the stat pass is done (false: it stopped). */
  statted: (completed: boolean) => void;
}

export class WorkerListings {
  private readonly scans = new Map<number, PendingScan>();
  private readonly rescans = new Map<number, (r: RescanListing | undefined) => void>();
  /** A listing asked for before the load (`prefetch`), for the first `forLoad` of its dir. */
  private prefetched: { dir: string; listing: Promise<LoadListing | undefined> } | undefined;

  constructor(private readonly link: ReadWorkerLink) {}

  /** Asks for the listing of `dir` now; the next `forLoad(dir)` (the same string) takes it. */
  prefetch(dir: string): void {
    this.prefetched = { dir, listing: this.scan(dir) };
  }

  /** The listing of a load: the prefetched one of `dir`, or one asked for now. */
  forLoad(dir: string): Promise<LoadListing | undefined> {
    const early = this.prefetched;
    this.prefetched = undefined;
    return early?.dir === dir ? early.listing : this.scan(dir);
  }

  /** A rescan's listing and signatures (undefined: no worker, or one busy with a load's stat pass). */
  rescan(dir: string): Promise<RescanListing | undefined> {
    const w = this.link.start();
    // (a worker still busy with a load's stat pass: this thread, as without a worker)
    if (!w || this.link.loading) return Promise.resolve(undefined);
    const request: RescanRequest = { type: 'rescan', seq: this.link.nextSeq(), dir };
    return new Promise<RescanListing | undefined>((resolve) => {
      this.rescans.set(request.seq, resolve);
      w.postMessage(request);
    });
  }

  onScanReply(reply: ScanReply): void {
    const s = this.scans.get(reply.seq);
    if (!s) return;
    if (reply.type === 'stat-done') {
      this.scans.delete(reply.seq);
      s.statted(true);
    } else if ('failed' in reply) {
      this.scans.delete(reply.seq);
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
  }

  onRescanReply(reply: RescanReply): void {
    const r = this.rescans.get(reply.seq);
    if (!r) return;
    this.rescans.delete(reply.seq);
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
  }

  /**
   * Answers every request in flight with undefined: a listing not given is made by this thread;
   * `statted` tells a load's stat pass whether the worker's share counts as done (false: this
   * thread stats what has no mtime).
   */
  abandon(statted: boolean): void {
    for (const s of this.scans.values()) {
      s.listed(undefined);
      s.statted(statted);
    }
    this.scans.clear();
    for (const r of this.rescans.values()) r(undefined);
    this.rescans.clear();
  }

  private scan(dir: string): Promise<LoadListing | undefined> {
    const w = this.link.start();
    if (!w) return Promise.resolve(undefined);
    const request: ScanRequest = { type: 'scan', seq: this.link.nextSeq(), dir };
    const listed = new Promise<LoadListing | undefined>((resolve) => {
      this.scans.set(request.seq, { dir, listed: resolve, statted: () => undefined });
      this.link.postLoadRequest(w, request);
    });
    // (a failure is the listing's reply's to report)
    sharedStat().catch(() => undefined);
    return listed;
  }
}
