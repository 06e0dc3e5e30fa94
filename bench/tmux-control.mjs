// A tmux control-mode client (`tmux -C attach`, see tmux(1) "CONTROL MODE") for
// bench/watch-live.mjs's key times: commands go through one connection (no process per
// send-keys or capture-pane), and the server tells when the pane wrote output (%output), so a
// key's frame is timed by the output that drew it, not by the next poll of the pane.
import { spawn } from 'node:child_process';

export class TmuxControl {
  /** Times (performance.now()) at which %output lines of the pane arrived: the last one, and a count. */
  lastOutputAt = 0;
  outputs = 0;
  #child;
  /** Replies not yet complete, in the order the commands were sent (the first one: the attach's). */
  #pending = [];
  #block = null;
  #rest = '';
  #wakers = [];
  #closed = false;

  /** `tmuxArgs`: what comes before the command (`-L SOCKET -f /dev/null`); `session`: the one to attach. */
  constructor(tmuxArgs, session, env) {
    this.#child = spawn('tmux', [...tmuxArgs, '-C', 'attach-session', '-t', session], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env,
    });
    this.ready = new Promise((resolve, reject) => this.#pending.push({ resolve, reject }));
    this.#child.stdout.setEncoding('utf8');
    this.#child.stdout.on('data', (chunk) => this.#take(chunk));
    this.#child.once('close', () => {
      this.#closed = true;
      for (const p of this.#pending.splice(0)) p.reject(new Error('tmux control client ended'));
      this.#wake();
    });
  }

  /** Runs a tmux command; resolves with its output lines (rejects on %error). */
  command(line) {
    if (this.#closed) return Promise.reject(new Error('tmux control client ended'));
    const reply = new Promise((resolve, reject) => this.#pending.push({ resolve, reject }));
    this.#child.stdin.write(`${line}\n`);
    return reply;
  }

  /** Resolves when output newer than `count` (a value of `outputs`) has arrived, or after `ms`. */
  outputAfter(count, ms) {
    if (this.outputs > count || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wakers.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  close() {
    if (this.#closed) return;
    this.#child.stdin.end();
    this.#child.kill();
  }

  #wake() {
    for (const w of this.#wakers.splice(0)) w();
  }

  #take(chunk) {
    const at = performance.now();
    const lines = (this.#rest + chunk).split('\n');
    this.#rest = lines.pop();
    for (const line of lines) {
      if (this.#block) {
        if (line.startsWith('%end ') || line.startsWith('%error ')) {
          const p = this.#pending.shift();
          const out = this.#block;
          this.#block = null;
          if (line.startsWith('%end ')) p?.resolve(out);
          else p?.reject(new Error(`tmux: ${out.join(' ')}`));
        } else this.#block.push(line);
      } else if (line.startsWith('%begin ')) this.#block = [];
      else if (line.startsWith('%output ')) {
        this.lastOutputAt = at;
        this.outputs++;
        this.#wake();
      }
    }
  }
}
