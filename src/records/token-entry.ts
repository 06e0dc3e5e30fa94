import { createRequire } from 'node:module';
import type { z as Zod } from 'zod';
import { TokcapError } from '../errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/value.js';
import { FAIL, type Fail, toBool, toFloat, toFloats, toSmallInt, toTokenIds } from './coerce.js';

/**
 * The TokenEntry record (docs/format.md#token-entry): schema with the reference reader's coercions and
 * defaults; unknown keys are kept on the object (they are part of the canonical bytes).
 *
 * The zod schema is the definition (and `TokenEntry` its inferred type), but zod itself is
 * loaded only when needed: a record the field table below accepts as it is gets the value the
 * schema would give without zod, and anything else goes through the schema for its exact
 * error. Loading zod costs about 50 ms per thread and running it about 10 % of a verify, for
 * records that are almost always canonical. test/src/records/token-entry.test.ts holds the two
 * together.
 */
export const MIN_SCHEMA_VERSION = 3;
export const MAX_SCHEMA_VERSION = 5;
export const CURRENT_SCHEMA_VERSION = 5;

/** How the writer resolved a call's parent (docs/format.md#entry-fields). */
export type ParentResolution = 'root' | 'resolved' | 'unresolved';
export const PARENT_RESOLUTIONS: readonly ParentResolution[] = ['root', 'resolved', 'unresolved'];

/**
 * One record of J as the reference reader gives it: the 23 fields of docs/format.md#entry-fields
 * with their coercions and defaults applied, and any unknown key kept as it was read. Written
 * out rather than inferred from the schema so that a library user reads it without zod; the
 * schema's output is held to it below.
 */
export interface TokenEntry {
  schema_version: number;
  rollout_id: string;
  model_call_id: string;
  model: string;
  /** Token ids; a bigint where an id is past 2^53. */
  prompt_token_ids: (number | bigint)[];
  generation_token_ids: (number | bigint)[];
  generation_log_probs: number[];
  routed_experts: JsonValue;
  output_items: JsonObject[];
  token_item_index: number | null;
  created_at: number;
  parent_call_id: string | null;
  cum_len: number | null;
  digest: string | null;
  parent_resolution: ParentResolution | null;
  continuation_fingerprint: string;
  continuation_context_len: number;
  continuation_context_digest: string;
  parent_resolution_reason: string;
  fingerprint_version: number | null;
  prompt_is_delta: boolean;
  prefix_requested: boolean;
  prefix_supplied: boolean;
  [key: string]: unknown;
}

/** A field read with a lax coercion; `fallback` is the default when the key is absent. */
interface LaxField<T> {
  kind: 'lax';
  coerce: (v: unknown) => T | Fail;
  /** For the message "Input should be <what>". */
  what: string;
  fallback?: () => T;
}
/** A field that must be a string (no coercion). */
interface StringField {
  kind: 'string';
  fallback: () => string;
}
/** A field that takes any JSON value. */
interface AnyField {
  kind: 'any';
  fallback: () => JsonValue;
}

const lax = <T>(coerce: (v: unknown) => T | Fail, what: string): LaxField<T> => ({ kind: 'lax', coerce, what });
const laxOr = <T>(
  coerce: (v: unknown) => T | Fail,
  what: string,
  fallback: () => T,
): LaxField<T> & { fallback: () => T } => ({
  kind: 'lax',
  coerce,
  what,
  fallback,
});
const string = (fallback: string): StringField => ({ kind: 'string', fallback: () => fallback });
const nullable =
  <T>(fn: (v: unknown) => T | Fail) =>
  (v: unknown): T | null | Fail =>
    v === null ? null : fn(v);
const text = (v: unknown): string | Fail => (typeof v === 'string' ? v : FAIL);
const textOrNull = (v: unknown): string | null | Fail => (v === null ? null : typeof v === 'string' ? v : FAIL);
const resolution = (v: unknown): ParentResolution | null | Fail =>
  v === null
    ? null
    : typeof v === 'string' && (PARENT_RESOLUTIONS as readonly string[]).includes(v)
      ? (v as ParentResolution)
      : FAIL;
const outputItems = (v: unknown): JsonObject[] | Fail =>
  Array.isArray(v) && v.every((x) => isJsonObject(x as JsonValue)) ? (v as JsonObject[]) : FAIL;
const NULL = () => null;

/** The 23 fields in the order of docs/format.md#entry-fields (all written by the writer). */
const FIELDS = {
  schema_version: laxOr(toSmallInt, 'a valid integer', () => CURRENT_SCHEMA_VERSION),
  rollout_id: lax(text, 'a valid string'),
  model_call_id: lax(text, 'a valid string'),
  model: string(''),
  prompt_token_ids: lax(toTokenIds, 'a valid list of integers'),
  generation_token_ids: lax(toTokenIds, 'a valid list of integers'),
  generation_log_probs: lax(toFloats, 'a valid list of numbers'),
  routed_experts: { kind: 'any', fallback: NULL } as AnyField,
  output_items: laxOr(outputItems, 'a valid list of objects', (): JsonObject[] => []),
  token_item_index: laxOr(nullable(toSmallInt), 'a valid integer or null', NULL),
  created_at: laxOr(toFloat, 'a valid number', () => 0),
  parent_call_id: laxOr(textOrNull, 'a valid string or null', NULL),
  cum_len: laxOr(nullable(toSmallInt), 'a valid integer or null', NULL),
  digest: laxOr(textOrNull, 'a valid string or null', NULL),
  parent_resolution: laxOr(resolution, "'root', 'resolved' or 'unresolved'", NULL),
  continuation_fingerprint: string(''),
  continuation_context_len: laxOr(toSmallInt, 'a valid integer', () => 0),
  continuation_context_digest: string(''),
  parent_resolution_reason: string(''),
  fingerprint_version: laxOr(nullable(toSmallInt), 'a valid integer or null', NULL),
  prompt_is_delta: laxOr(toBool, 'a valid boolean', () => false),
  prefix_requested: laxOr(toBool, 'a valid boolean', () => false),
  prefix_supplied: laxOr(toBool, 'a valid boolean', () => false),
} as const;

/**
 * The zod schema of a TokenEntry, built on the `z` it is given (so that this module does not
 * load zod). Each field is its FIELDS entry: coercion, message and default.
 */
export function defineTokenEntrySchema(z: typeof Zod) {
  const coerced = <T>(f: LaxField<T>) =>
    z.unknown().transform((v, ctx): T => {
      if (v === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: f.fallback === undefined ? 'Field required' : `Input should be ${f.what}`,
        });
        return z.NEVER;
      }
      const r = f.coerce(v);
      if (r === FAIL) {
        ctx.addIssue({ code: 'custom', message: `Input should be ${f.what}` });
        return z.NEVER;
      }
      return r as T;
    });
  const F = FIELDS;
  return z.looseObject({
    schema_version: coerced(F.schema_version).default(F.schema_version.fallback),
    rollout_id: coerced(F.rollout_id),
    model_call_id: coerced(F.model_call_id),
    model: z.string().default(F.model.fallback),
    prompt_token_ids: coerced(F.prompt_token_ids),
    generation_token_ids: coerced(F.generation_token_ids),
    generation_log_probs: coerced(F.generation_log_probs),
    routed_experts: z.custom<JsonValue>((v) => v !== undefined).default(F.routed_experts.fallback),
    output_items: coerced(F.output_items).default(F.output_items.fallback),
    token_item_index: coerced(F.token_item_index).default(F.token_item_index.fallback),
    created_at: coerced(F.created_at).default(F.created_at.fallback),
    parent_call_id: coerced(F.parent_call_id).default(F.parent_call_id.fallback),
    cum_len: coerced(F.cum_len).default(F.cum_len.fallback),
    digest: coerced(F.digest).default(F.digest.fallback),
    parent_resolution: coerced(F.parent_resolution).default(F.parent_resolution.fallback),
    continuation_fingerprint: z.string().default(F.continuation_fingerprint.fallback),
    continuation_context_len: coerced(F.continuation_context_len).default(F.continuation_context_len.fallback),
    continuation_context_digest: z.string().default(F.continuation_context_digest.fallback),
    parent_resolution_reason: z.string().default(F.parent_resolution_reason.fallback),
    fingerprint_version: coerced(F.fingerprint_version).default(F.fingerprint_version.fallback),
    prompt_is_delta: coerced(F.prompt_is_delta).default(F.prompt_is_delta.fallback),
    prefix_requested: coerced(F.prefix_requested).default(F.prefix_requested.fallback),
    prefix_supplied: coerced(F.prefix_supplied).default(F.prefix_supplied.fallback),
  });
}

export type TokenEntrySchema = ReturnType<typeof defineTokenEntrySchema>;

/** `true` only while A and B are the same type (each assignable to the other). */
type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
/** Fails to compile when the schema or `TokenEntry` changes without the other. */
type _SchemaGivesTokenEntry = Holds<SameType<Zod.infer<TokenEntrySchema>, TokenEntry>>;

let schema: TokenEntrySchema | undefined;

/**
 * The schema, on the one zod instance tokcap uses (loaded through `require` on first use so
 * that validation can stay synchronous).
 */
export function tokenEntrySchema(): TokenEntrySchema {
  schema ??= defineTokenEntrySchema((createRequire(import.meta.url)('zod') as { z: typeof Zod }).z);
  return schema;
}

/** The known fields, in the order of docs/format.md#entry-fields (all 23 are written by the writer). */
export const KNOWN_FIELDS = Object.keys(FIELDS) as (keyof typeof FIELDS)[];

const FIELD_LIST = Object.entries(FIELDS) as [string, LaxField<unknown> | StringField | AnyField][];
const NO_ARRAYS: readonly unknown[] = [];
const KNOWN = new Set<string>(KNOWN_FIELDS);

/**
 * What the schema gives for `input` when every field is present and acceptable or absent with
 * a default, and no key needs zod's own handling (`__proto__`); undefined otherwise. Keys in
 * the schema's order: the fields first, then the unknown keys in input order.
 *
 * `idArrays`: arrays in `input` known to hold only non-negative safe integers (the JSON reader's
 * `idArrays`), which `toTokenIds` would return as they are: taken without checking each id again.
 */
export function acceptedAsItIs(input: JsonObject, idArrays: readonly unknown[] = NO_ARRAYS): TokenEntry | undefined {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < FIELD_LIST.length; i++) {
    const [name, f] = FIELD_LIST[i];
    const v = input[name];
    if (v === undefined) {
      if (f.kind === 'lax' && f.fallback === undefined) return undefined;
      out[name] = f.fallback!();
      continue;
    }
    if (f.kind === 'lax') {
      if (f.coerce === toTokenIds && idArrays.includes(v)) {
        out[name] = v;
        continue;
      }
      const r = f.coerce(v);
      if (r === FAIL) return undefined;
      out[name] = r;
    } else if (f.kind === 'string') {
      if (typeof v !== 'string') return undefined;
      out[name] = v;
    } else {
      out[name] = v;
    }
  }
  for (const key of Object.keys(input)) {
    if (KNOWN.has(key)) continue;
    if (key === '__proto__') return undefined;
    out[key] = input[key];
  }
  return out as TokenEntry;
}

/** The numbered model checks of docs/format.md#entry-validation, in order; returns the first failure's message. */
export function entryRuleViolation(e: TokenEntry): string | undefined {
  const v = e.schema_version;
  if (v > MAX_SCHEMA_VERSION) {
    return `token record is schema_version ${v}, but this reader understands up to ${MAX_SCHEMA_VERSION}. Upgrade the reader, or point it at records written by a writer it matches.`;
  }
  if (v < MIN_SCHEMA_VERSION) {
    return `token record is schema_version ${v}, below the supported minimum ${MIN_SCHEMA_VERSION}. Pre-lineage records were never written in production; regenerate the rollout with a current writer.`;
  }
  const a = e.generation_token_ids.length;
  const b = e.generation_log_probs.length;
  if (a !== b) return `generation_token_ids and generation_log_probs must have the same length (got ${a} and ${b})`;
  const i = e.token_item_index;
  if (i !== null && !(i >= 0 && i < e.output_items.length)) {
    return `token_item_index ${i} is outside output_items of length ${e.output_items.length}`;
  }
  const r = e.parent_resolution;
  if (r === 'resolved' && (e.parent_call_id === null || e.parent_call_id === '')) {
    return 'resolved parent metadata requires parent_call_id';
  }
  if ((r === 'root' || r === 'unresolved') && e.parent_call_id !== null) {
    return `${r} parent metadata cannot carry parent_call_id`;
  }
  if (e.prompt_is_delta && (e.parent_call_id === null || r !== 'resolved')) {
    return 'a delta prompt requires a RESOLVED parent_call_id to reconstruct from';
  }
  return undefined;
}

/**
 * Validates a parsed line as a TokenEntry, throwing a `schema` error (pyClass ValidationError)
 * whose message is the numbered rule's message, or a pydantic-like type-error summary.
 * `idArrays` as in `acceptedAsItIs`.
 */
export function validateTokenEntry(
  value: JsonValue,
  context: { rolloutId?: string; file?: string } = {},
  idArrays?: readonly unknown[],
): TokenEntry {
  if (!isJsonObject(value)) {
    throw schemaError('Input should be a valid dictionary or instance of TokenEntry', context);
  }
  let entry = acceptedAsItIs(value, idArrays);
  if (entry === undefined) {
    const parsed = tokenEntrySchema().safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.map(String).join('.') || '(record)';
      throw schemaError(`${field}: ${issue.message}`, context);
    }
    entry = parsed.data;
  }
  const rule = entryRuleViolation(entry);
  if (rule !== undefined) throw schemaError(rule, context);
  return entry;
}

function schemaError(message: string, context: { rolloutId?: string; file?: string }): TokcapError {
  const count = 1;
  return new TokcapError('schema', `${count} validation error for TokenEntry: ${message}`, {
    pyClass: 'ValidationError',
    rolloutId: context.rolloutId,
    file: context.file,
  });
}
