/**
 * A queue of ids without repeats, in the order they were added (as a Set's iteration). Taking
 * the first id of a Set is not O(1): V8 leaves the deleted entries in place until the table is
 * rebuilt, and iteration walks over them, so draining a backlog of 100,000 ids through a Set
 * costs O(N²).
 */
export class IdQueue {
  private ids: string[] = [];
  private tickets: number[] = [];
  private head = 0;
  private next = 0;
  /** Queued ids and the ticket of their place in `ids` (the place of an id deleted and added again is stale). */
  private readonly queued = new Map<string, number>();

  get size(): number {
    return this.queued.size;
  }

  has(id: string): boolean {
    return this.queued.has(id);
  }

  /** Queues `id` at the end, unless it is queued already (it keeps its place, as in a Set). */
  add(id: string): void {
    if (this.queued.has(id)) return;
    const ticket = this.next++;
    this.queued.set(id, ticket);
    this.ids.push(id);
    this.tickets.push(ticket);
  }

  delete(id: string): boolean {
    return this.queued.delete(id);
  }

  take(): string | undefined {
    while (this.head < this.ids.length) {
      const at = this.head++;
      const id = this.ids[at];
      if (this.queued.get(id) !== this.tickets[at]) continue;
      this.queued.delete(id);
      if (this.head > 1024 && this.head * 2 > this.ids.length) {
        this.ids = this.ids.slice(this.head);
        this.tickets = this.tickets.slice(this.head);
        this.head = 0;
      }
      return id;
    }
    if (this.head > 0) this.clear();
    return undefined;
  }

  clear(): void {
    this.ids = [];
    this.tickets = [];
    this.head = 0;
    this.queued.clear();
  }
}
