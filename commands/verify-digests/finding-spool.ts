import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputJsonBytes, outputJsonLine } from '../../src/json/canonical-json.js';
import type { Finding } from '../../src/verify/findings.js';
import type { ByteStream } from '../cli/context.js';

/**
 * The findings of `verify-digests --json`, a rollout's at a time, kept as their output bytes: the
 * document starts with `ok`, known only once every rollout is verified, so they cannot go to
 * stdout as they come. Their bytes take a fraction of the memory their objects took (a damaged
 * full-6000x12 copy, 186,565 findings: 41 MB of output; peak RSS 233 MiB with the objects held).
 * Past SPILL_BYTES they go to a temporary file (removed at the end), so memory does not grow with
 * the damage of a larger store; when no temporary file can be made, they stay in memory: `--json`
 * never fails for want of a writable TMPDIR.
 */
export class FindingSpool {
  count = 0;
  errors = 0;
  private chunks: Buffer[] = [];
  private held = 0;
  private file: { dir: string; fd: number; size: number } | undefined;
  private noFile = false;

  /** `spillBytes`: held in memory up to this many bytes (tests set it low). */
  constructor(private readonly spillBytes = SPILL_BYTES) {}

  add(findings: Finding[]): void {
    const parts: Buffer[] = [];
    for (const f of findings) {
      if (this.count++ > 0) parts.push(COMMA);
      if (f.severity === 'error') this.errors++;
      parts.push(outputJsonBytes(f));
    }
    const bytes = Buffer.concat(parts);
    if (this.file) return this.append(this.file, bytes);
    this.chunks.push(bytes);
    this.held += bytes.length;
    if (this.held > this.spillBytes && !this.noFile) this.spill();
  }

  private spill(): void {
    let dir: string | undefined;
    try {
      dir = mkdtempSync(join(tmpdir(), 'tokcap-verify-'));
      this.file = { dir, fd: openSync(join(dir, 'findings.json'), 'w+'), size: 0 };
    } catch {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      this.noFile = true;
      return;
    }
    for (const chunk of this.chunks) this.append(this.file, chunk);
    this.chunks = [];
    this.held = 0;
  }

  private append(file: { fd: number; size: number }, bytes: Buffer): void {
    writeSync(file.fd, bytes, 0, bytes.length, file.size);
    file.size += bytes.length;
  }

  /** `doc` (with an empty `findings`) as ctx.json would write it, the kept findings in it. */
  async writeDocument(out: ByteStream, doc: Record<string, unknown>): Promise<void> {
    const whole = outputJsonLine({ ...doc, findings: [] });
    // `ok` is a boolean: the first `"findings":[` is the member's.
    const at = whole.indexOf(FINDINGS) + FINDINGS.length;
    await out.write(whole.subarray(0, at));
    if (this.file) {
      const chunk = Buffer.allocUnsafe(READ_CHUNK);
      for (let pos = 0; pos < this.file.size;) {
        const n = readSync(this.file.fd, chunk, 0, Math.min(chunk.length, this.file.size - pos), pos);
        if (n <= 0) throw new Error('internal: the findings spool is shorter than written');
        // A copy: the stream may hold the bytes while this buffer is read into again.
        await out.write(Buffer.from(chunk.subarray(0, n)));
        pos += n;
      }
    }
    for (const chunk of this.chunks.splice(0)) await out.write(chunk);
    await out.write(whole.subarray(at));
  }

  close(): void {
    if (!this.file) return;
    closeSync(this.file.fd);
    rmSync(this.file.dir, { recursive: true, force: true });
    this.file = undefined;
  }
}

/** Findings bytes held in memory before they go to a temporary file. */
const SPILL_BYTES = 16 << 20;
const READ_CHUNK = 1 << 20;
const COMMA = Buffer.from(',');
const FINDINGS = Buffer.from('"findings":[');
