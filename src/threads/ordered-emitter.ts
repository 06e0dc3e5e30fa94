/**
 * A job's results put back in input order (./parallel-rollouts.ts): each result is kept until it
 * and all before it are in, then handed to `emit` and dropped, so a caller that writes results
 * out as they come never holds them all. Emits run one after the other; while more than
 * MAX_PENDING are unfinished, `drained()` is a promise the job waits for, so slow writing holds
 * the computing back instead of piling results up in memory.
 */

/** Emits not finished from which the job waits for them. */
const MAX_PENDING = 4;

export class OrderedEmitter<R> {
  /** Every result when there is no `emit`; with one, holes where results were emitted. */
  readonly results: R[];
  private readonly filled: Uint8Array;
  private next = 0;
  private emitting: Promise<void> = Promise.resolve();
  private pending = 0;
  private failure: { error: unknown } | undefined;

  /**
   * `emit`: called with each result in order (none: results are only kept). `onFailure`: called
   * once an emit threw (the job claims no more work).
   */
  constructor(
    length: number,
    private readonly emit: ((result: R, index: number) => void | Promise<void>) | undefined,
    private readonly signal: AbortSignal | undefined,
    private readonly onFailure: () => void,
  ) {
    this.results = new Array<R>(length);
    this.filled = new Uint8Array(length);
  }

  /** An emit threw, or the job's signal fired: nothing more is emitted. */
  stopped(): boolean {
    return this.failure !== undefined || this.signal?.aborted === true;
  }

  /** Result `i` is in: it is emitted with every result after it that is in already. */
  put(i: number, result: R): void {
    this.results[i] = result;
    this.filled[i] = 1;
    const emit = this.emit;
    if (!emit) return;
    while (!this.stopped() && this.next < this.results.length && this.filled[this.next]) {
      const k = this.next++;
      const value = this.results[k];
      delete this.results[k];
      this.pending++;
      this.emitting = this.emitting
        .then(() => (this.stopped() ? undefined : emit(value, k)))
        .catch((e: unknown) => {
          this.failure ??= { error: e };
          this.onFailure();
        })
        .finally(() => {
          this.pending--;
        });
    }
  }

  /** A promise to wait for while emits are behind, else undefined. */
  drained(): Promise<void> | undefined {
    return this.pending > MAX_PENDING ? this.emitting : undefined;
  }

  /** Waits for every emit so far; throws what an emit threw, or the signal's reason. */
  async settled(): Promise<void> {
    await this.emitting;
    if (this.failure) throw this.failure.error;
    this.signal?.throwIfAborted();
  }
}
