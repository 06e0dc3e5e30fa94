import { open, type FileHandle } from 'node:fs/promises';
import { ioError } from '../errors.js';

const FLUSH_AT = 1 << 20;

/**
 * Appends lines to a file through a small buffer (1 MiB), awaiting each write so memory holds at
 * most the buffer plus the line being added. `close()` flushes, fsyncs and closes.
 */
export class LineSink {
  private parts: Buffer[] = [];
  private size = 0;
  private closed = false;

  private constructor(
    private readonly fh: FileHandle,
    readonly path: string,
  ) {}

  /** Opens `path` for writing (truncating it). */
  static async open(path: string): Promise<LineSink> {
    try {
      return new LineSink(await open(path, 'w', 0o666), path);
    } catch (e) {
      throw ioError(e, path);
    }
  }

  /** Appends `text` and a newline. */
  async writeLine(text: string): Promise<void> {
    const buf = Buffer.from(`${text}\n`, 'utf8');
    this.parts.push(buf);
    this.size += buf.length;
    if (this.size >= FLUSH_AT) await this.flush();
  }

  /** Appends bytes as they are; a large block goes to the file without being copied. */
  async writeBytes(bytes: Uint8Array): Promise<void> {
    if (bytes.length < FLUSH_AT / 4) {
      this.parts.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      this.size += bytes.length;
      if (this.size >= FLUSH_AT) await this.flush();
      return;
    }
    await this.flush();
    await this.writeAll(bytes);
  }

  /** Appends `text` as is. */
  async write(text: string): Promise<void> {
    const buf = Buffer.from(text, 'utf8');
    this.parts.push(buf);
    this.size += buf.length;
    if (this.size >= FLUSH_AT) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.size === 0) return;
    const parts = this.parts;
    this.parts = [];
    this.size = 0;
    await this.writeAll(parts.length === 1 ? parts[0] : Buffer.concat(parts));
  }

  private async writeAll(buf: Uint8Array): Promise<void> {
    try {
      // write() may write less than asked (a full disk, a signal): loop until all is written.
      let off = 0;
      while (off < buf.length) {
        const { bytesWritten } = await this.fh.write(buf, off, buf.length - off);
        if (bytesWritten === 0) throw Object.assign(new Error('no progress writing'), { code: 'EIO' });
        off += bytesWritten;
      }
    } catch (e) {
      throw ioError(e, this.path);
    }
  }

  /** Flushes, fsyncs and closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
      await this.fh.sync().catch((e) => {
        throw ioError(e, this.path);
      });
    } finally {
      this.closed = true;
      await this.fh.close();
    }
  }

  /** Closes without flushing (the output is being discarded). */
  async abandon(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.parts = [];
    await this.fh.close().catch(() => undefined);
  }
}
