/**
 * Arrow record batches for the Parquet export, from the schema declaration (schema.ts): the one
 * place that maps a ColumnType to an Arrow type. Token and log-prob lists are built straight
 * from typed arrays (offsets and values), the small columns through Arrow's builders.
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

/** Validity bitmap (LSB first), or undefined when nothing is null. */
function validity(values: readonly unknown[]): { bitmap: Uint8Array | undefined; nulls: number } {
  let nulls = 0;
  for (const v of values) if (v === null) nulls++;
  if (nulls === 0) return { bitmap: undefined, nulls };
  const bitmap = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v !== null) bitmap[i >> 3] |= 1 << (i & 7);
  });
  return { bitmap, nulls };
}

/** A list column of numbers from the rows' arrays: offsets and one typed array of values. */
function numberList(type: List, values: readonly (readonly (number | bigint)[] | null)[], element: 'uint32' | 'int64' | 'float64'): Data {
  const offsets = new Int32Array(values.length + 1);
  let total = 0;
  values.forEach((v, i) => {
    total += v?.length ?? 0;
    if (total > 0x7fffffff) throw new RangeError('a row group of more than 2^31 list values');
    offsets[i + 1] = total;
  });
  const flat = element === 'uint32' ? new Uint32Array(total) : element === 'int64' ? new BigInt64Array(total) : new Float64Array(total);
  let at = 0;
  for (const v of values) {
    if (v === null) continue;
    if (element === 'int64') {
      const out = flat as BigInt64Array;
      for (let i = 0; i < v.length; i++) out[at + i] = BigInt(v[i]);
    } else (flat as Uint32Array | Float64Array).set(v as number[], at);
    at += v.length;
  }
  const child = makeData({ type: type.children[0].type, length: total, nullCount: 0, data: flat });
  const { bitmap, nulls } = validity(values);
  return makeData({ type, length: values.length, nullCount: nulls, nullBitmap: bitmap, valueOffsets: offsets, child });
}

function column(type: DataType, spec: ColumnSpec, values: unknown[], tokens: TokenIdType): Data {
  if (spec.type === 'token[]') return numberList(type as List, values as (number[] | null)[], tokens);
  if (spec.type === 'float64[]') return numberList(type as List, values as (number[] | null)[], 'float64');
  const vector = vectorFromArray(values, type);
  if (vector.data.length !== 1) throw new Error(`internal: column ${spec.name} built in ${vector.data.length} chunks`);
  return vector.data[0];
}

/** One record batch of `rows` (objects keyed by column name, as schema.ts types them). */
export function recordBatch(schema: Schema, columns: readonly ColumnSpec[], rows: readonly Readonly<Record<string, unknown>>[], tokens: TokenIdType): RecordBatch {
  const children = columns.map((spec, i) =>
    column(
      schema.fields[i].type,
      spec,
      rows.map((r) => r[spec.name]),
      tokens,
    ),
  );
  const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
  return new RecordBatch(schema, data);
}
