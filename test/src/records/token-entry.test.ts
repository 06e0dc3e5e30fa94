import { describe, it, expect } from 'vitest';
import { mulberry32 } from '../../../src/fixture/prng.js';
import { parseJson } from '../../../src/json/parse-json.js';
import { JsonFloat, type JsonObject, type JsonValue } from '../../../src/json/value.js';
import {
  acceptedAsItIs,
  entryRuleViolation,
  KNOWN_FIELDS,
  tokenEntrySchema,
  validateTokenEntry,
} from '../../../src/records/token-entry.js';

const CANONICAL = parseJson(
  '{"continuation_context_digest":"","continuation_context_len":0,"continuation_fingerprint":"","created_at":1760000000.0,' +
    '"cum_len":5,"digest":"ab","fingerprint_version":null,"generation_log_probs":[-0.5,-1.0],"generation_token_ids":[7,8],' +
    '"model":"m","model_call_id":"c1","output_items":[{"type":"message"}],"parent_call_id":null,"parent_resolution":"root",' +
    '"parent_resolution_reason":"","prefix_requested":false,"prefix_supplied":false,"prompt_is_delta":false,' +
    '"prompt_token_ids":[1,2,3],"rollout_id":"r1","routed_experts":null,"schema_version":5,"token_item_index":0}',
) as JsonObject;

/** What the zod schema alone makes of `v`: the entry (keys in order) or the error message. */
function throughZod(v: JsonObject): unknown {
  const parsed = tokenEntrySchema().safeParse(v);
  if (!parsed.success) return { error: `${parsed.error.issues[0].path.join('.')}: ${parsed.error.issues[0].message}` };
  const rule = entryRuleViolation(parsed.data);
  return rule !== undefined ? { error: rule } : { keys: Object.keys(parsed.data), value: parsed.data };
}

function throughValidate(v: JsonObject): unknown {
  try {
    const e = validateTokenEntry(v);
    return { keys: Object.keys(e), value: e };
  } catch (err) {
    return { error: String((err as Error).message).replace(/^1 validation error for TokenEntry: /, '') };
  }
}

const rnd = mulberry32(4242);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
const ODD_VALUES: JsonValue[] = [
  null,
  true,
  false,
  0,
  1,
  -1,
  2.5,
  5,
  3,
  4,
  6,
  new JsonFloat(1),
  new JsonFloat(-0),
  12345678901234567890n,
  '',
  'x',
  '5',
  ' 7 ',
  '1_000',
  '3.0',
  'inf',
  'nan',
  'yes',
  'off',
  'root',
  'resolved',
  'unresolved',
  [],
  [1, 2],
  [1, -1],
  [1, 2.5],
  ['3', 4],
  [true],
  [new JsonFloat(2)],
  [0.5, '1.5'],
  [{}],
  [{ a: 1 }, 2],
  { a: 1 },
  [12345678901234567890n],
];

describe('TokenEntry validation without zod (acceptedAsItIs) and through the schema', () => {
  it('lists the same fields in the same order as the schema', () => {
    expect(Object.keys(tokenEntrySchema().shape)).toEqual(KNOWN_FIELDS);
    expect(KNOWN_FIELDS).toHaveLength(23);
  });

  it('accepts a canonical entry without the schema, with the value the schema gives', () => {
    expect(acceptedAsItIs(CANONICAL)).toBeDefined();
    expect(throughValidate(CANONICAL)).toEqual(throughZod(CANONICAL));
  });

  it("gives exactly the schema's value or error on 5,000 mutated entries (missing, odd and unknown keys), needing zod only to refuse", () => {
    let withoutZod = 0;
    let errors = 0;
    for (let k = 0; k < 5000; k++) {
      const v: JsonObject = { ...CANONICAL };
      for (let m = 1 + Math.floor(rnd() * 3); m > 0; m--) {
        const r = rnd();
        const key = pick(KNOWN_FIELDS);
        if (r < 0.3) delete v[key];
        else if (r < 0.8) v[key] = pick(ODD_VALUES);
        else v[pick(['zzz', 'aaa', '1', '10', 'extra'])] = pick(ODD_VALUES);
      }
      const zod = throughZod(v);
      if (acceptedAsItIs(v) !== undefined) withoutZod++;
      // zod is only needed for the exact message of a refusal.
      else expect(zod).toHaveProperty('error');
      const fast = throughValidate(v);
      expect(
        fast,
        JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x)),
      ).toEqual(zod);
      if ((fast as { error?: string }).error !== undefined) errors++;
    }
    // Both paths are exercised: accepted (as it is, coerced or defaulted) and refused.
    expect(withoutZod).toBeGreaterThan(1000);
    expect(errors).toBeGreaterThan(1000);
  });

  it('leaves a "__proto__" key to the schema', () => {
    const v = parseJson(JSON.stringify({ ...CANONICAL }).replace('{', '{"__proto__":{"x":1},')) as JsonObject;
    expect(acceptedAsItIs(v)).toBeUndefined();
    expect(throughValidate(v)).toEqual(throughZod(v));
  });
});
