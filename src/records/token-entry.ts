import { z } from 'zod';
import { TokcapError } from '../errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/value.js';
import { FAIL, type Fail, toBool, toFloat, toFloats, toInt, toSmallInt, toTokenIds } from './coerce.js';

/**
 * The TokenEntry record (FORMAT.md §4): schema with the reference reader's coercions and
 * defaults; unknown keys are kept on the object (they are part of the canonical bytes).
 */
export const MIN_SCHEMA_VERSION = 3;
export const MAX_SCHEMA_VERSION = 5;
export const CURRENT_SCHEMA_VERSION = 5;

export const PARENT_RESOLUTIONS = ['root', 'resolved', 'unresolved'] as const;

function lax<T>(fn: (v: unknown) => T | Fail, what: string, required = false) {
  return z.unknown().transform((v, ctx): T => {
    if (v === undefined) {
      ctx.addIssue({ code: 'custom', message: required ? 'Field required' : `Input should be ${what}` });
      return z.NEVER;
    }
    const r = fn(v);
    if (r === FAIL) {
      ctx.addIssue({ code: 'custom', message: `Input should be ${what}` });
      return z.NEVER;
    }
    return r as T;
  });
}

const str = () => z.string();
const nullable = <T>(fn: (v: unknown) => T | Fail) => (v: unknown): T | null | Fail => (v === null ? null : fn(v));
const strOrNull = (v: unknown): string | null | Fail => (v === null ? null : typeof v === 'string' ? v : FAIL);
const resolution = (v: unknown): (typeof PARENT_RESOLUTIONS)[number] | null | Fail =>
  v === null ? null : typeof v === 'string' && (PARENT_RESOLUTIONS as readonly string[]).includes(v) ? (v as (typeof PARENT_RESOLUTIONS)[number]) : FAIL;
const outputItems = (v: unknown): JsonObject[] | Fail =>
  Array.isArray(v) && v.every((x) => isJsonObject(x as JsonValue)) ? (v as JsonObject[]) : FAIL;
const finiteFloat = (v: unknown): number | Fail => toFloat(v);

export const tokenEntrySchema = z.looseObject({
  schema_version: lax(toSmallInt, 'a valid integer').default(CURRENT_SCHEMA_VERSION),
  rollout_id: lax((v) => (typeof v === 'string' ? v : FAIL), 'a valid string', true),
  model_call_id: lax((v) => (typeof v === 'string' ? v : FAIL), 'a valid string', true),
  model: str().default(''),
  prompt_token_ids: lax(toTokenIds, 'a valid list of integers', true),
  generation_token_ids: lax(toTokenIds, 'a valid list of integers', true),
  generation_log_probs: lax(toFloats, 'a valid list of numbers', true),
  routed_experts: z.custom<JsonValue>((v) => v !== undefined).default(null),
  output_items: lax(outputItems, 'a valid list of objects').default([]),
  token_item_index: lax(nullable(toSmallInt), 'a valid integer or null').default(null),
  created_at: lax(finiteFloat, 'a valid number').default(0),
  parent_call_id: lax(strOrNull, 'a valid string or null').default(null),
  cum_len: lax(nullable(toSmallInt), 'a valid integer or null').default(null),
  digest: lax(strOrNull, 'a valid string or null').default(null),
  parent_resolution: lax(resolution, "'root', 'resolved' or 'unresolved'").default(null),
  continuation_fingerprint: str().default(''),
  continuation_context_len: lax(toSmallInt, 'a valid integer').default(0),
  continuation_context_digest: str().default(''),
  parent_resolution_reason: str().default(''),
  fingerprint_version: lax(nullable(toSmallInt), 'a valid integer or null').default(null),
  prompt_is_delta: lax(toBool, 'a valid boolean').default(false),
  prefix_requested: lax(toBool, 'a valid boolean').default(false),
  prefix_supplied: lax(toBool, 'a valid boolean').default(false),
});

export type TokenEntry = z.infer<typeof tokenEntrySchema>;
export type ParentResolution = (typeof PARENT_RESOLUTIONS)[number];

/** The known fields, in the order of FORMAT.md §4.2 (all 23 are written by the writer). */
export const KNOWN_FIELDS = Object.keys(tokenEntrySchema.shape) as (keyof TokenEntry)[];

/** The numbered model checks of FORMAT.md §4.4, in order; returns the first failure's message. */
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
 */
export function validateTokenEntry(value: JsonValue, context: { rolloutId?: string; file?: string } = {}): TokenEntry {
  if (!isJsonObject(value)) {
    throw schemaError('Input should be a valid dictionary or instance of TokenEntry', context);
  }
  const parsed = tokenEntrySchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.map(String).join('.') || '(record)';
    throw schemaError(`${field}: ${issue.message}`, context);
  }
  const rule = entryRuleViolation(parsed.data);
  if (rule !== undefined) throw schemaError(rule, context);
  return parsed.data;
}

function schemaError(message: string, context: { rolloutId?: string; file?: string }): TokcapError {
  const count = 1;
  return new TokcapError('schema', `${count} validation error for TokenEntry: ${message}`, {
    pyClass: 'ValidationError',
    rolloutId: context.rolloutId,
    file: context.file,
  });
}

export function isTokenEntryObject(v: JsonValue): v is JsonObject {
  return isJsonObject(v);
}
