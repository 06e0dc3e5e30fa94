/**
 * One Parquet part file, written as a stream: rows are buffered up to a record batch's worth,
 * turned into an Arrow record batch and handed to parquet-wasm's streaming writer, whose output
 * bytes go to the file as they come. The file is never held whole in memory: at most one batch's
 * rows and one row group's encoded pages, and the row group is bounded by bytes as well as rows.
 * zstd compression; statistics and dictionaries on the small columns only.
 *
 * Why bytes: the writer keeps a row group's compressed pages in WebAssembly memory until the
 * group is complete, and WebAssembly memory never shrinks, so the largest row group sets the
 * process's memory for the rest of the run. 2,048 calls of 12-turn rollouts with prompts of a few
 * thousand tokens are ~22 MB before compression; the byte limit keeps that bounded whatever the
 * prompt lengths.
 */
import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { tableToIPC, Table as ArrowTable, type Schema } from 'apache-arrow';
import * as parquet from 'parquet-wasm/node';
import { ioError } from '../../errors.js';
import { arrowSchema, listValues, recordBatch, type ListValues } from './arrow-batch.js';
import type { ColumnSpec, TokenIdType } from './schema.js';

/** Rows per row group at most ("a few thousand calls"). */
export const ROW_GROUP_ROWS = 2048;
/**
 * Compressed bytes per row group, about: the writer starts a new group once the pages it holds
 * reach this (checked between batches, so a group may pass it by part of one batch). On a store of
 * 12-call rollouts with prompts of 1,000 to 6,500 tokens, 2 MiB is ~370 calls and ~6 MB before
 * compression; peak WebAssembly memory 21 MB, against 58 MB with row groups of 2,048 calls.
 */
export const ROW_GROUP_BYTES = 2 * 2 ** 20;
/** Data and dictionary page size limit: the writer's open page of each column is buffered uncompressed. */
export const PAGE_BYTES = 256 * 2 ** 10;
/** List values (tokens and log-probs) per record batch at most: bounds the memory of a batch. */
export const BATCH_LIST_VALUES = 200_000;

type WasmBatch = parquet.RecordBatch;

/** Hands record batches to the writer's input stream one at a time, as it asks for them. */
class BatchFeed {
  private waiting: ((batch: WasmBatch | null) => void) | undefined;
  private pending: { batch: WasmBatch | null; taken: () => void } | undefined;

  readonly stream = new ReadableStream<WasmBatch>(
    {
      pull: (controller) =>
        new Promise<void>((resolve) => {
          const take = (batch: WasmBatch | null) => {
            if (batch === null) controller.close();
            else controller.enqueue(batch);
            resolve();
          };
          if (this.pending) {
            const p = this.pending;
            this.pending = undefined;
            take(p.batch);
            p.taken();
          } else this.waiting = take;
        }),
    },
    { highWaterMark: 0 },
  );

  /** Resolves once the writer has taken `batch` (null: end of input). */
  give(batch: WasmBatch | null): Promise<void> {
    return new Promise((resolve) => {
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(batch);
        resolve();
      } else this.pending = { batch, taken: resolve };
    });
  }
}

export class PartWriter {
  /** The batch being filled: its small columns by row, its lists in `lists`. */
  private rows: Record<string, unknown>[] = [];
  private readonly lists: Map<string, ListValues>;
  private readonly schema: Schema;
  private readonly smallColumns: string[];
  private failure: unknown;
  rowCount = 0;
  /** The bytes written and their SHA-256, taken as they go out (the part's manifest). */
  private readonly written: { bytes: number; hash: Hash };

  private constructor(
    private readonly fh: FileHandle,
    readonly path: string,
    private readonly columns: readonly ColumnSpec[],
    readonly tokenType: TokenIdType,
    private readonly feed: BatchFeed,
    private readonly pump: Promise<void>,
    written: { bytes: number; hash: Hash },
  ) {
    this.written = written;
    this.schema = arrowSchema(columns, tokenType);
    this.lists = listValues(columns, tokenType, ROW_GROUP_ROWS, BATCH_LIST_VALUES);
    this.smallColumns = columns.filter((c) => !this.lists.has(c.name)).map((c) => c.name);
    pump.catch((e: unknown) => {
      this.failure = e;
    });
  }

  /** Starts writing `path` (which must exist: the atomic output's temporary file). */
  static async open(
    path: string,
    columns: readonly ColumnSpec[],
    tokenType: TokenIdType,
    createdBy: string,
  ): Promise<PartWriter> {
    let fh: FileHandle;
    try {
      fh = await open(path, 'w', 0o666);
    } catch (e) {
      throw ioError(e, path);
    }
    const feed = new BatchFeed();
    let props = new parquet.WriterPropertiesBuilder()
      .setCompression(parquet.Compression.ZSTD)
      .setMaxRowGroupSize(ROW_GROUP_ROWS)
      .setMaxRowGroupBytes(ROW_GROUP_BYTES)
      .setDataPageSizeLimit(PAGE_BYTES)
      .setDictionaryPageSizeLimit(PAGE_BYTES)
      .setCreatedBy(createdBy);
    // Token and log-prob lists: dictionaries and min/max statistics cost time and buy nothing.
    for (const c of columns) {
      if (c.type === 'token[]' || c.type === 'float64[]') {
        props = props
          .setColumnDictionaryEnabled(`${c.name}.list.item`, false)
          .setColumnStatisticsEnabled(`${c.name}.list.item`, parquet.EnabledStatistics.None);
      }
    }
    // Not awaited here: the writer reads the first batch (for the schema) before it returns.
    const started = parquet.transformParquetStream(feed.stream, props.build());
    const written = { bytes: 0, hash: createHash('sha256') };
    const pump = (async () => {
      const output = await started;
      for await (const chunk of output as AsyncIterable<Uint8Array>) {
        written.hash.update(chunk);
        written.bytes += chunk.length;
        try {
          // One write(2) may take only part of a chunk (a full disk, a file-size limit): the rest
          // is written again, so the failure surfaces instead of a silently cut part.
          for (let off = 0; off < chunk.length;) {
            const { bytesWritten } = await fh.write(chunk, off, chunk.length - off);
            if (bytesWritten === 0)
              throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
                code: 'ENOSPC',
                errno: -28,
                syscall: 'write',
              });
            off += bytesWritten;
          }
        } catch (e) {
          throw ioError(e, path);
        }
      }
    })();
    return new PartWriter(fh, path, columns, tokenType, feed, pump, written);
  }

  private check(): void {
    if (this.failure !== undefined)
      throw this.failure instanceof Error && 'kind' in this.failure ? this.failure : ioError(this.failure, this.path);
  }

  /**
   * Adds one row; a full batch is written before this resolves. The row's lists are copied
   * now, so the caller's arrays are not kept (they would outlive their rollout by a batch).
   */
  async add(row: Readonly<Record<string, unknown>>): Promise<void> {
    this.check();
    const small: Record<string, unknown> = {};
    for (const name of this.smallColumns) small[name] = row[name];
    this.rows.push(small);
    let values = 0;
    for (const [name, list] of this.lists) {
      list.push(row[name] as (number | bigint)[] | null);
      values += list.count;
    }
    this.rowCount++;
    if (this.rows.length >= ROW_GROUP_ROWS || values >= BATCH_LIST_VALUES) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.rows.length === 0) return;
    // Arrow JS and parquet-wasm meet through the Arrow IPC stream format (one batch at a time);
    // the IPC bytes are a copy, so the list buffers are free for the next batch right after.
    const ipc = tableToIPC(new ArrowTable([recordBatch(this.schema, this.columns, this.rows, this.lists)]), 'stream');
    this.rows = [];
    for (const list of this.lists.values()) list.reset();
    const table = parquet.Table.fromIPCStream(ipc);
    try {
      for (const b of table.recordBatches()) await this.give(b);
    } finally {
      table.free();
    }
  }

  private async give(batch: WasmBatch | null): Promise<void> {
    await Promise.race([this.feed.give(batch), this.pump]);
    this.check();
  }

  /** Writes what is buffered and the footer, fsyncs and closes the file. */
  async close(): Promise<void> {
    try {
      if (this.rowCount === 0) {
        // An empty part still carries the schema: one empty batch.
        await this.give(
          parquet.Table.fromIPCStream(
            tableToIPC(new ArrowTable([recordBatch(this.schema, this.columns, [], this.lists)]), 'stream'),
          ).recordBatch(0) ?? null,
        );
      }
      await this.flush();
      await this.give(null);
      await this.pump;
      await this.fh.sync();
    } catch (e) {
      throw e instanceof Error && 'kind' in e ? e : ioError(e, this.path);
    } finally {
      await this.fh.close().catch(() => undefined);
    }
  }

  /** After `close`: the file's size and SHA-256 (hex). */
  digest(): { bytes: number; sha256: string } {
    return { bytes: this.written.bytes, sha256: this.written.hash.copy().digest('hex') };
  }

  /** Stops writing (the caller removes the file). */
  async abandon(): Promise<void> {
    this.rows = [];
    this.lists.clear();
    await this.fh.close().catch(() => undefined);
  }
}
