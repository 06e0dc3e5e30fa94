/**
 * Arrow record batches for the Parquet export, from the schema declaration (schema.ts): the one
 * place that maps a ColumnType to an Arrow type. Token and log-prob lists are copied into typed
 * arrays (offsets and values) as rows arrive, the small columns built through Arrow's builders.
 * Loaded only by the Parquet writer (lazily, with `--format parquet`).
 */
import {
  Bool,
  Field,
  Float64,
  Int32,
  Int64,
  List,
  RecordBatch,
  Schema,
  Struct,
  Uint32,
  Utf8,
  makeData,
  vectorFromArray,
  type Data,
  type DataType,
} from 'apache-arrow';
import type { ColumnSpec, ColumnType, TokenIdType } from './schema.js';

function item(type: DataType): Field {
  return new Field('item', type, false);
}

const CAUSE = new Struct([new Field('code', new Utf8(), false), new Field('message', new Utf8(), false)]);

function arrowType(type: ColumnType, tokens: TokenIdType): DataType {
  switch (type) {
    case 'string':
      return new Utf8();
    case 'bool':
      return new Bool();
    case 'int32':
      return new Int32();
    case 'uint32':
      return new Uint32();
    case 'float64':
      return new Float64();
    case 'token[]':
      return new List(item(tokens === 'uint32' ? new Uint32() : new Int64()));
    case 'float64[]':
      return new List(item(new Float64()));
    case 'string[]':
      return new List(item(new Utf8()));
    case 'cause[]':
      return new List(item(CAUSE));
  }
}

export function arrowSchema(columns: readonly ColumnSpec[], tokens: TokenIdType): Schema {
  return new Schema(columns.map((c) => new Field(c.name, arrowType(c.type, tokens), c.nullable)));
}

type ListElement = 'uint32' | 'int64' | 'float64';
type ListArray = Uint32Array | BigInt64Array | Float64Array;

function listArray(element: ListElement, length: number): ListArray {
  return element === 'uint32'
    ? new Uint32Array(length)
    : element === 'int64'
      ? new BigInt64Array(length)
      : new Float64Array(length);
}

/**
 * One list column (tokens or log-probs) of the batch being filled: its offsets, validity and
 * values copied into typed arrays as each row is added, so that the rows' own arrays are not kept
 * until the batch is written, and reused from batch to batch (grown when a batch needs more).
 */
export class ListValues {
  private offsets: Int32Array;
  private valid: Uint8Array;
  private values: ListArray;
  private rows = 0;
  private nulls = 0;
  /** Values held (all rows). */
  count = 0;

  constructor(
    private readonly element: ListElement,
    rows: number,
    values: number,
  ) {
    this.offsets = new Int32Array(rows + 1);
    this.valid = new Uint8Array((rows + 7) >> 3);
    this.values = listArray(element, values);
  }

  push(list: readonly (number | bigint)[] | null): void {
    const row = this.rows++;
    if (row + 1 >= this.offsets.length) {
      const offsets = new Int32Array(this.offsets.length * 2);
      offsets.set(this.offsets);
      this.offsets = offsets;
      const valid = new Uint8Array((offsets.length + 7) >> 3);
      valid.set(this.valid);
      this.valid = valid;
    }
    if (list === null) this.nulls++;
    else {
      this.valid[row >> 3] |= 1 << (row & 7);
      const at = this.count;
      const end = at + list.length;
      if (end > 0x7fffffff) throw new RangeError('a record batch of more than 2^31 list values');
      if (end > this.values.length) {
        const values = listArray(this.element, Math.max(end, this.values.length * 2));
        (values as Float64Array).set(this.values.subarray(0, at) as Float64Array);
        this.values = values;
      }
      if (this.element === 'int64') {
        const out = this.values as BigInt64Array;
        for (let i = 0; i < list.length; i++) out[at + i] = BigInt(list[i]);
      } else (this.values as Uint32Array | Float64Array).set(list as number[], at);
      this.count = end;
    }
    this.offsets[row + 1] = this.count;
  }

  /** The column as Arrow data: views of the buffers, valid until the next `reset`. */
  data(type: List): Data {
    const child = makeData({
      type: type.children[0].type,
      length: this.count,
      nullCount: 0,
      data: this.values.subarray(0, this.count),
    });
    const bitmap = this.nulls > 0 ? this.valid.subarray(0, (this.rows + 7) >> 3) : undefined;
    return makeData({
      type,
      length: this.rows,
      nullCount: this.nulls,
      nullBitmap: bitmap,
      valueOffsets: this.offsets.subarray(0, this.rows + 1),
      child,
    });
  }

  /** Empties the column for the next batch, keeping its buffers. */
  reset(): void {
    this.valid.fill(0, 0, (this.rows + 7) >> 3);
    this.rows = 0;
    this.nulls = 0;
    this.count = 0;
  }
}

/** The list columns' buffers, by column name (token[] and float64[] columns). */
export function listValues(
  columns: readonly ColumnSpec[],
  tokens: TokenIdType,
  rows: number,
  values: number,
): Map<string, ListValues> {
  const lists = new Map<string, ListValues>();
  for (const c of columns) {
    if (c.type === 'token[]') lists.set(c.name, new ListValues(tokens, rows, values));
    else if (c.type === 'float64[]') lists.set(c.name, new ListValues('float64', rows, values));
  }
  return lists;
}

function column(type: DataType, spec: ColumnSpec, values: unknown[]): Data {
  const vector = vectorFromArray(values, type);
  if (vector.data.length !== 1) throw new Error(`internal: column ${spec.name} built in ${vector.data.length} chunks`);
  return vector.data[0];
}

/**
 * One record batch: the list columns from `lists` (filled row by row, see ListValues), the others
 * from `rows` (objects keyed by column name, as schema.ts types them).
 */
export function recordBatch(
  schema: Schema,
  columns: readonly ColumnSpec[],
  rows: readonly Readonly<Record<string, unknown>>[],
  lists: ReadonlyMap<string, ListValues>,
): RecordBatch {
  const children = columns.map((spec, i) => {
    const type = schema.fields[i].type;
    const list = lists.get(spec.name);
    return list
      ? list.data(type as List)
      : column(
          type,
          spec,
          rows.map((r) => r[spec.name]),
        );
  });
  const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
  return new RecordBatch(schema, data);
}
