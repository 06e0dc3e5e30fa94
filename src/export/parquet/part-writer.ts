/**
 * One Parquet part file, written as a stream: rows are buffered up to a row group's worth (a few
 * thousand calls, or fewer when their token lists are long), turned into an Arrow record batch
 * and handed to parquet-wasm's streaming writer, whose output bytes go to the file as they come.
 * The file is never held whole in memory: at most one row group's rows and its encoded pages.
 * zstd compression; statistics and dictionaries on the small columns only.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { tableToIPC, Table as ArrowTable, type Schema } from 'apache-arrow';
import * as parquet from 'parquet-wasm/node';
import { ioError } from '../../errors.js';
import { arrowSchema, recordBatch } from './arrow-batch.js';
import type { ColumnSpec, TokenIdType } from './schema.js';

/** Rows per row group at most ("a few thousand calls"). */
export const ROW_GROUP_ROWS = 2048;
/** List values (tokens and log-probs) per record batch at most: bounds the memory of a batch. */
export const BATCH_LIST_VALUES = 500_000;

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
  private rows: Record<string, unknown>[] = [];
  private listValues = 0;
  private readonly schema: Schema;
  private readonly listColumns: string[];
  private failure: unknown;
  rowCount = 0;

  private constructor(
    private readonly fh: FileHandle,
    readonly path: string,
    private readonly columns: readonly ColumnSpec[],
    readonly tokenType: TokenIdType,
    private readonly feed: BatchFeed,
    private readonly pump: Promise<void>,
  ) {
    this.schema = arrowSchema(columns, tokenType);
    this.listColumns = columns.filter((c) => c.type === 'token[]' || c.type === 'float64[]').map((c) => c.name);
    pump.catch((e: unknown) => {
      this.failure = e;
    });
  }

  /** Starts writing `path` (which must exist: the atomic output's temporary file). */
  static async open(path: string, columns: readonly ColumnSpec[], tokenType: TokenIdType, createdBy: string): Promise<PartWriter> {
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
      .setCreatedBy(createdBy);
    // Token and log-prob lists: dictionaries and min/max statistics cost time and buy nothing.
    for (const c of columns) {
      if (c.type === 'token[]' || c.type === 'float64[]') {
        props = props.setColumnDictionaryEnabled(`${c.name}.list.item`, false).setColumnStatisticsEnabled(`${c.name}.list.item`, parquet.EnabledStatistics.None);
      }
    }
    // Not awaited here: the writer reads the first batch (for the schema) before it returns.
    const started = parquet.transformParquetStream(feed.stream, props.build());
    const pump = (async () => {
      const output = await started;
      for await (const chunk of output as AsyncIterable<Uint8Array>) {
        try {
          await fh.write(chunk);
        } catch (e) {
          throw ioError(e, path);
        }
      }
    })();
    return new PartWriter(fh, path, columns, tokenType, feed, pump);
  }

  private check(): void {
    if (this.failure !== undefined) throw this.failure instanceof Error && 'kind' in this.failure ? this.failure : ioError(this.failure, this.path);
  }

  /** Adds one row; a full batch is written before this resolves. */
  async add(row: Record<string, unknown>): Promise<void> {
    this.check();
    this.rows.push(row);
    this.rowCount++;
    for (const name of this.listColumns) this.listValues += (row[name] as unknown[] | null)?.length ?? 0;
    if (this.rows.length >= ROW_GROUP_ROWS || this.listValues >= BATCH_LIST_VALUES) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.rows.length === 0) return;
    const batch = recordBatch(this.schema, this.columns, this.rows, this.tokenType);
    this.rows = [];
    this.listValues = 0;
    // Arrow JS and parquet-wasm meet through the Arrow IPC stream format (one batch at a time).
    const table = parquet.Table.fromIPCStream(tableToIPC(new ArrowTable([batch]), 'stream'));
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
        await this.give(parquet.Table.fromIPCStream(tableToIPC(new ArrowTable([recordBatch(this.schema, this.columns, [], this.tokenType)]), 'stream')).recordBatch(0) ?? null);
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

  /** Stops writing (the caller removes the file). */
  async abandon(): Promise<void> {
    this.rows = [];
    await this.fh.close().catch(() => undefined);
  }
}
