/**
 * THE schema of `export --format parquet` (docs/cli.md#export-formats), declared once:
 * the writer (arrow-batch.ts) builds its Arrow schema from it and docs/export.md's tables are
 * generated from it (scripts/gen-export-doc.ts; a test checks the file is current). This module
 * loads no Arrow or Parquet code, so the library index and the docs can read it cheaply.
 */

/**
 * Column types, as Parquet readers see them:
 * - `string`: UTF-8 (BYTE_ARRAY, STRING); `bool`; `int32`; `uint32` (INT32, UINT_32);
 *   `float64` (DOUBLE);
 * - `token[]`: a list of token ids, unsigned 32-bit (UINT_32) when every id of the part file
 *   fits, else signed 64-bit (INT64); see TOKEN_ID_TYPES;
 * - `float64[]`, `string[]`: lists;
 * - `cause[]`: a list of structs `{code: string, message: string}`.
 */
export type ColumnType =
  'string' | 'bool' | 'int32' | 'uint32' | 'float64' | 'token[]' | 'float64[]' | 'string[]' | 'cause[]';

export interface ColumnSpec {
  name: string;
  type: ColumnType;
  /** May hold null. */
  nullable: boolean;
  /** One sentence for docs/export.md. */
  description: string;
}

export const TOKEN_ID_TYPES = ['uint32', 'int64'] as const;
export type TokenIdType = (typeof TOKEN_ID_TYPES)[number];

/** One row per call of the frozen (or previewed) snapshot, after de-duplication (docs/format.md#build-dedupe). */
export const CALL_COLUMNS = [
  { name: 'rollout_id', type: 'string', nullable: false, description: 'The rollout.' },
  { name: 'model_call_id', type: 'string', nullable: false, description: 'The call (unique within its rollout).' },
  {
    name: 'line',
    type: 'uint32',
    nullable: false,
    description:
      "1-based line of the call's kept record in the rollout's JSONL (the first copy when the id was written twice).",
  },
  {
    name: 'stored',
    type: 'string',
    nullable: false,
    description:
      '`full` (the record holds the whole prompt) or `delta` (a parent-relative prompt suffix, prompt_is_delta).',
  },
  {
    name: 'parent_call_id',
    type: 'string',
    nullable: true,
    description: "The record's claimed parent (`parent_call_id`).",
  },
  {
    name: 'parent_resolution',
    type: 'string',
    nullable: true,
    description: "The record's `parent_resolution`: `root`, `resolved`, `unresolved` (null in old records).",
  },
  {
    name: 'linked_parent_call_id',
    type: 'string',
    nullable: true,
    description: 'The parent the builder decided on (null for roots and calls it did not place).',
  },
  {
    name: 'link',
    type: 'string',
    nullable: true,
    description: 'How that parent was decided: `root`, `linked`, `recovered` or `boundary` (null when not placed).',
  },
  {
    name: 'parent_link_failure',
    type: 'string',
    nullable: true,
    description: 'The `parent_link_failures` reason recorded for this call, if any.',
  },
  {
    name: 'call_status',
    type: 'string',
    nullable: false,
    description: '`placed`, `unreconstructable` (a delta whose prompt could not be rebuilt) or `empty_generation`.',
  },
  {
    name: 'quarantined',
    type: 'bool',
    nullable: false,
    description: 'Quarantined by the builder (a retry sibling or below one): on no chain.',
  },
  {
    name: 'unresolved_retry',
    type: 'bool',
    nullable: false,
    description: "Listed in the build result's `unresolved_retries`.",
  },
  {
    name: 'chains',
    type: 'string[]',
    nullable: false,
    description: 'The chains the call is on (`main`, `branch-0`, ...); empty when on none.',
  },
  {
    name: 'in_delivered_chain',
    type: 'bool',
    nullable: false,
    description: 'On the main chain: its tokens are in the trajectory the consumer delivers.',
  },
  {
    name: 'duplicate_copies',
    type: 'uint32',
    nullable: false,
    description: 'Later records with the same call id, discarded by the builder.',
  },
  {
    name: 'prompt_token_ids',
    type: 'token[]',
    nullable: true,
    description: 'The full prompt, delta records materialised (null when a delta could not be rebuilt).',
  },
  { name: 'generation_token_ids', type: 'token[]', nullable: false, description: 'The generated tokens.' },
  {
    name: 'generation_log_probs',
    type: 'float64[]',
    nullable: false,
    description: 'Log-probabilities of the generated tokens.',
  },
  {
    name: 'prompt_len',
    type: 'uint32',
    nullable: true,
    description: 'Length of the full prompt (null when a delta could not be rebuilt).',
  },
  {
    name: 'stored_prompt_len',
    type: 'uint32',
    nullable: false,
    description: 'Length of `prompt_token_ids` as stored (the suffix, for a delta record).',
  },
  { name: 'generation_len', type: 'uint32', nullable: false, description: 'Number of generated tokens.' },
  { name: 'model', type: 'string', nullable: false, description: "The record's `model`." },
  {
    name: 'created_at',
    type: 'float64',
    nullable: false,
    description: "The record's `created_at` (seconds since the epoch, as written).",
  },
  { name: 'schema_version', type: 'int32', nullable: false, description: "The record's `schema_version`." },
] as const satisfies readonly ColumnSpec[];

/** One row per rollout exported. */
export const ROLLOUT_COLUMNS = [
  { name: 'rollout_id', type: 'string', nullable: false, description: 'The rollout.' },
  {
    name: 'status',
    type: 'string',
    nullable: false,
    description: 'The status every command gives it: `live`, `frozen`, `retired` or `unavailable`.',
  },
  {
    name: 'conditions',
    type: 'string[]',
    nullable: false,
    description:
      'Its conditions, sorted (`dangling`, `incomplete`, `torn_tail`, ...; the vocabulary of docs/cli.md#conditions).',
  },
  {
    name: 'verdict',
    type: 'string',
    nullable: false,
    description: '`trainable`, `masked` or `unavailable` (could not be read).',
  },
  { name: 'mask_sample', type: 'bool', nullable: false, description: "The build result's `mask_sample`." },
  {
    name: 'could_not_be_built',
    type: 'bool',
    nullable: false,
    description: 'The result is the failed-build dictionary (masked, no trajectory).',
  },
  {
    name: 'mask_causes',
    type: 'cause[]',
    nullable: false,
    description: 'Why it is masked: `{code, message}` in the order of `export --format jsonl`; empty when trainable.',
  },
  {
    name: 'n_calls',
    type: 'uint32',
    nullable: false,
    description: '`metrics.n_calls` (calls in the snapshot, duplicates included).',
  },
  { name: 'chains', type: 'uint32', nullable: true, description: '`metrics.chains` (null for a failed build).' },
  { name: 'roots', type: 'uint32', nullable: true, description: '`metrics.roots` (null for a failed build).' },
  {
    name: 'quarantined_calls',
    type: 'uint32',
    nullable: true,
    description: '`metrics.quarantined_calls` (null for a failed build).',
  },
  {
    name: 'tokens_delivered',
    type: 'uint32',
    nullable: true,
    description:
      "Length of the delivered trajectory's token sequence: the main chain's last prompt plus its generation (null for a failed build).",
  },
  {
    name: 'generated_tokens_captured',
    type: 'uint32',
    nullable: true,
    description: '`metrics.generated_tokens_captured` (null for a failed build).',
  },
  {
    name: 'generated_tokens_delivered',
    type: 'uint32',
    nullable: true,
    description: '`metrics.generated_tokens_delivered` (null for a failed build).',
  },
  {
    name: 'delivered_fraction',
    type: 'float64',
    nullable: true,
    description: '`metrics.delivered_fraction` (null for a failed build).',
  },
  {
    name: 'preview',
    type: 'bool',
    nullable: false,
    description: 'Built from a read-only preview (no --freeze): not a consumable snapshot.',
  },
  {
    name: 'snapshot_id',
    type: 'string',
    nullable: true,
    description:
      "With --freeze, the snapshot built (`_capture_snapshot`); otherwise the state's snapshot id, if frozen.",
  },
  { name: 'version', type: 'uint32', nullable: true, description: "The snapshot's (or the state's) version." },
  {
    name: 'error',
    type: 'string',
    nullable: true,
    description: 'A failed build\'s `error` ("<PythonClass>: <message>"), or why tokcap could not read the rollout.',
  },
  {
    name: 'error_kind',
    type: 'string',
    nullable: true,
    description: 'The kind of that error (`lock_timeout`, `io`, `corrupt`, ...), when tokcap knows it.',
  },
] as const satisfies readonly ColumnSpec[];

export const PARQUET_TABLES = { calls: CALL_COLUMNS, rollouts: ROLLOUT_COLUMNS } as const;
export type ParquetTableName = keyof typeof PARQUET_TABLES;

type ValueOf<T extends ColumnType> = T extends 'string'
  ? string
  : T extends 'bool'
    ? boolean
    : T extends 'int32' | 'uint32' | 'float64'
      ? number
      : T extends 'token[]'
        ? readonly (number | bigint)[]
        : T extends 'float64[]'
          ? readonly number[]
          : T extends 'string[]'
            ? readonly string[]
            : readonly { code: string; message: string }[];

type RowOf<C extends readonly ColumnSpec[]> = {
  [S in C[number] as S['name']]: S['nullable'] extends true ? ValueOf<S['type']> | null : ValueOf<S['type']>;
};

/** A row of `calls`, as the writer takes it. */
export type CallRow = RowOf<typeof CALL_COLUMNS>;
/** A row of `rollouts`, as the writer takes it. */
export type ParquetRolloutRow = RowOf<typeof ROLLOUT_COLUMNS>;
