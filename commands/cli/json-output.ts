/**
 * The run's --json document written to standard output, whole or in parts (an array element by
 * element, a map entry by entry), and standard output as a byte stream: every write that may
 * have to wait for a slower reader of a pipe goes through `caughtUp`, so a producer that waits
 * for it never piles its output up in memory. ./context.ts hands these to commands.
 */
import { JsonWriter, RawJsonText } from '../../src/json/canonical-json.js';

/** Where the command writes: a Node stream, or a test's stand-in with the same members. */
export interface OutStream {
  /** `written`, when given, is called once the chunk has been written out (a Node stream's callback). */
  write(chunk: string | Uint8Array, written?: (error?: Error | null) => void): unknown;
  /** A Node stream's bytes not written out yet. */
  readonly writableLength?: number;
  /** A Node stream's: how many queued bytes make `write` return false. */
  readonly writableHighWaterMark?: number;
  /** A Node stream's: `write` returned false and it can take more now. */
  once?(event: 'drain', listener: () => void): unknown;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

export interface ByteStream {
  write(bytes: Uint8Array): Promise<void>;
}

export interface JsonArrayWriter {
  /**
   * `written`: called once the bytes of `value` have left for stdout (their memory may be reused).
   * Returns a promise when stdout is a pipe holding more than it takes at once: it resolves once
   * written out, and a caller that waits for it holds no more than that in memory.
   */
  push(value: unknown, written?: () => void): Promise<void> | undefined;
  end(): void;
}

export interface JsonMapWriter {
  /** Returns a promise when stdout has not caught up, as `JsonArrayWriter.push` does. */
  entry(key: string, value: unknown): Promise<void> | undefined;
  end(tail: Record<string, unknown>): void;
}

/**
 * The one wait on stdout's backpressure, after writing a part of the output (`full`: a `write` of
 * it returned false). Undefined when the stream kept nothing (a file: the bytes went out in the
 * call) or holds less than it takes at once. Otherwise a pipe that a slower reader has not
 * emptied: a promise resolved once it has, and a producer that waits for it keeps the output
 * from piling up in memory (a job in one thread never lets the event loop turn to drain it).
 */
function caughtUp(stdout: OutStream, full: boolean): Promise<void> | undefined {
  if (!full || stdout.writableLength === 0 || !stdout.once) return undefined;
  return new Promise<void>((resolve) => stdout.once!('drain', resolve));
}

/** `stdout` as a byte stream whose `write` resolves once it can take more. */
export function byteStream(stdout: OutStream): ByteStream {
  return { write: (bytes) => caughtUp(stdout, stdout.write(bytes) === false) ?? Promise.resolve() };
}

const COMMA = Buffer.from(',');
/** Bytes of map entries gathered into one write (`map`). */
const MAP_CHUNK = 64 * 1024;

/** An array that is one member of an object (`JsonDocument.array`). */
export interface ArrayWithin {
  head: Record<string, unknown>;
  key: string;
}

/** The members of a serialised object, without its braces (empty for `{}`). */
function membersOf(object: Uint8Array): Uint8Array {
  return object.subarray(1, object.length - 1);
}

/**
 * An array written element by element: the same bytes as the array written whole. With `within`,
 * the array is the member `key` of an object whose other members are `head`'s (a sharded run's
 * report: `{"shard": ..., "results": [...]}`).
 */
function arrayWriter(stdout: OutStream, writer: JsonWriter, within?: ArrayWithin): JsonArrayWriter {
  let open: Uint8Array | string = '[';
  let close = ']\n';
  if (within) {
    // Copied at once: the writer's buffer may be reused by the next document.
    const members = Buffer.from(membersOf(writer.outputBytes(within.head)));
    const key = Buffer.from(writer.outputBytes(within.key));
    open = Buffer.concat([
      Buffer.from('{'),
      members,
      Buffer.from(members.length > 0 ? ',' : ''),
      key,
      Buffer.from(':['),
    ]);
    close = ']}\n';
  }
  let count = 0;
  let ended = false;
  return {
    push(value, written) {
      if (ended) throw new Error('internal: jsonArray().push() after end()');
      // Bytes, not text: a build result is hundreds of KB of JSON, already UTF-8.
      const bytes =
        value instanceof RawJsonText && typeof value.text !== 'string' ? value.text : writer.outputBytes(value);
      const parts = bytes instanceof Uint8Array ? [bytes] : bytes;
      let full = stdout.write(count++ === 0 ? open : ',') === false;
      let told = false;
      const tell = written && (() => void (told || ((told = true), written())));
      // A stream writes in order: once the last part is written, so are the others.
      parts.forEach((part, k) => {
        if (stdout.write(part, k === parts.length - 1 ? tell : undefined) === false) full = true;
      });
      // Nothing left in the stream's buffer: the bytes went out in the call (a file), and the
      // callback would only come once the job lets the event loop turn.
      if (stdout.writableLength === 0) tell?.();
      return caughtUp(stdout, full);
    },
    end() {
      if (ended) return;
      ended = true;
      if (count === 0) stdout.write(open);
      stdout.write(close);
    },
  };
}

/** An object whose member `key` is a map written entry by entry, in chunks. */
function mapWriter(stdout: OutStream, writer: JsonWriter, head: Record<string, unknown>, key: string): JsonMapWriter {
  const members = membersOf(writer.outputBytes(head));
  stdout.write('{');
  if (members.length > 0) {
    stdout.write(members);
    stdout.write(',');
  }
  stdout.write(writer.outputBytes(key));
  stdout.write(':{');
  let count = 0;
  let ended = false;
  // Entries go out in chunks of up to MAP_CHUNK bytes: a write per entry was two system
  // calls per rollout (`inspect --json`, `watch --once --json` of 100,000 rollouts: 200,000).
  let chunk: Uint8Array[] = [];
  let chunkBytes = 0;
  // No more than the stream would queue before asking us to wait.
  const chunkLimit = Math.min(MAP_CHUNK, stdout.writableHighWaterMark ?? MAP_CHUNK);
  const flush = (): boolean => {
    if (chunk.length === 0) return false;
    const bytes = chunk.length === 1 ? chunk[0] : Buffer.concat(chunk, chunkBytes);
    chunk = [];
    chunkBytes = 0;
    return stdout.write(bytes) === false;
  };
  return {
    entry(k, value) {
      if (ended) throw new Error('internal: jsonMap().entry() after end()');
      // Serialised first: nothing is written if the value cannot be.
      const bytes = writer.orderedMember(k, value);
      if (count++ > 0) {
        chunk.push(COMMA);
        chunkBytes++;
      }
      chunk.push(bytes);
      chunkBytes += bytes.length;
      // Gathered only while the stream keeps up (a file: always; a pipe: while its reader
      // does): one that queues gets each entry as it comes, and the caller waits for it.
      if (chunkBytes < chunkLimit && stdout.writableLength === 0) return undefined;
      return caughtUp(stdout, flush());
    },
    end(tail) {
      if (ended) return;
      ended = true;
      flush();
      const rest = membersOf(writer.outputBytes(tail));
      stdout.write('}');
      if (rest.length > 0) {
        stdout.write(',');
        stdout.write(rest);
      }
      stdout.write('}\n');
    },
  };
}

/** THE --json document of a run: written once, whole (`value`) or in parts (`array`, `map`). */
export class JsonDocument {
  // The writer of the document (its parts are written one after the other).
  private readonly writer = new JsonWriter();
  private written = false;

  constructor(private readonly stdout: OutStream) {}

  private notYet(): void {
    if (this.written) throw new Error('internal: ctx.json() called twice (--json prints one document)');
  }

  private once(): void {
    this.notYet();
    this.written = true;
  }

  value(value: unknown): void {
    this.notYet();
    // Serialise first: a value that cannot be written (an integer past 2^64 in a record) throws
    // before anything is printed, and the command may still print a repaired document.
    const bytes = this.writer.outputLine(value);
    this.once();
    this.stdout.write(bytes);
  }

  array(within?: ArrayWithin): JsonArrayWriter {
    this.once();
    return arrayWriter(this.stdout, this.writer, within);
  }

  map(head: Record<string, unknown>, key: string): JsonMapWriter {
    this.once();
    return mapWriter(this.stdout, this.writer, head, key);
  }
}
