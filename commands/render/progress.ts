/**
 * A minimal progress bar on stderr. Enabled only when stderr is a TTY and neither --quiet nor
 * --json is given; otherwise every method is a no-op, so commands can use it unconditionally.
 * It redraws one line with `\r` (at most every 80 ms) and erases it when done, so it never
 * leaves anything in captured output.
 */

export interface Progress {
  /** Advance by n (default 1); `label` replaces the current item shown (e.g. a rollout id). */
  tick(n?: number, label?: string): void;
  /** Set the absolute count. */
  update(done: number, label?: string): void;
  /** Erase the bar. Idempotent. */
  done(): void;
}

export interface ProgressOptions {
  /** What is being done, e.g. "verifying". */
  title: string;
  /** Number of items, if known. */
  total?: number;
}

export type ProgressFactory = (options: ProgressOptions) => Progress;

export interface ProgressStream {
  write(s: string): unknown;
  columns?: number;
}

const NOOP: Progress = { tick() {}, update() {}, done() {} };

export function noProgress(): Progress {
  return NOOP;
}

export class ProgressLine {
  private active: (Progress & { clear(): void; redraw(): void }) | undefined;
  constructor(private readonly stream: ProgressStream) {}

  /** Erase the current bar (before writing a message); `restore()` draws it again. */
  clear(): void {
    this.active?.clear();
  }
  restore(): void {
    this.active?.redraw();
  }

  start({ title, total }: ProgressOptions): Progress {
    const stream = this.stream;
    let done = 0;
    let label = '';
    let last = 0;
    let finished = false;
    const draw = () => {
      const width = Math.max(20, (stream.columns ?? 80) - 1);
      const count = total !== undefined ? `${done}/${total}` : `${done}`;
      let barText = '';
      if (total !== undefined && total > 0) {
        const cells = 20;
        const filled = Math.min(cells, Math.round((done / total) * cells));
        barText = `[${'#'.repeat(filled)}${'-'.repeat(cells - filled)}] `;
      }
      let line = `${title} ${barText}${count}${label ? ` ${label}` : ''}`;
      if (line.length > width) line = line.slice(0, width - 1) + '…';
      stream.write(`\r\x1b[2K${line}`);
    };
    const bar = {
      tick: (n = 1, l?: string) => bar.update(done + n, l),
      update: (d: number, l?: string) => {
        if (finished) return;
        done = d;
        if (l !== undefined) label = l;
        const now = Date.now();
        if (now - last >= 80 || (total !== undefined && done >= total)) {
          last = now;
          draw();
        }
      },
      done: () => {
        if (finished) return;
        finished = true;
        bar.clear();
        if (this.active === bar) this.active = undefined;
      },
      clear: () => {
        stream.write('\r\x1b[2K');
      },
      redraw: () => {
        if (!finished) draw();
      },
    };
    this.active?.done();
    this.active = bar;
    draw();
    return bar;
  }
}
