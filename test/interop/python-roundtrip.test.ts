import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { computeTokenDigest } from '../../src/digest/token-digest.js';
import { canonicalJson } from '../../src/json/canonical-json.js';
import { parseJson } from '../../src/json/parse-json.js';
import { JsonFloat, type JsonObject, type JsonValue } from '../../src/json/value.js';
import { rolloutPaths } from '../../src/layout/file-names.js';
import { freezeRollout } from '../../src/ops/freeze.js';
import { appendEntry, beginCall, markIncomplete } from '../../src/ops/writer.js';
import { canonicalEntryJson } from '../../src/records/canonical-entry.js';
import { validateTokenEntry } from '../../src/records/token-entry.js';
import { pyProbe } from '../support/py-lock-probe.js';

/**
 * Round trips between tokcap and test/support/py_store.py, a stdlib-only Python peer written
 * from docs/format.md: canonical bytes (docs/format.md#canonical-json, docs/format.md#canonical-entry), a Python-written store frozen by tokcap, a
 * tokcap-written store reconciled and frozen by Python (docs/format.md#reconcile, docs/format.md#freeze), and live Python writers
 * contending with tokcap's flock (docs/format.md#locking).
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PY_STORE = path.resolve(HERE, '../support/py_store.py');

const tmpDirs: string[] = [];
function tmpDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcap-py-'));
  tmpDirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Runs py_store.py; returns raw stdout bytes (throws on a crash, not on {"ok": false}). */
function pyRaw(args: string[], input?: string): { status: number; stdout: Buffer; stderr: string } {
  const r = spawnSync('python3', [PY_STORE, ...args], {
    input,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, PYTHONUTF8: '1' },
  });
  if (r.error) throw r.error;
  if (r.status !== 0 && r.status !== 1) throw new Error(`py_store crashed (${r.status}): ${r.stderr.toString()}`);
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr.toString() };
}

/** A py_store call whose output is one JSON document (results only hold strings, small ints, bools). */
function py(args: string[], input?: string): any {
  const r = pyRaw(args, input);
  return JSON.parse(r.stdout.toString('utf8'));
}

function pyOk(args: string[], input?: string): any {
  const out = py(args, input);
  if (out.ok !== true) throw new Error(`py_store ${args.join(' ')} failed: ${out.error}`);
  return out;
}

/** Python's canonical bytes of a JSON text (the trailing LF of the CLI removed). */
function pyCanonical(text: string, plus = true): Buffer {
  const r = pyRaw([...(plus ? [] : ['--no-plus']), 'canonical', '-'], text);
  if (r.status !== 0) throw new Error(`py canonical failed: ${r.stdout.toString()}`);
  expect(r.stdout[r.stdout.length - 1]).toBe(0x0a);
  return r.stdout.subarray(0, r.stdout.length - 1);
}

function pyCanonicalEntry(text: string): Buffer {
  const r = pyRaw(['canonical_entry', '-'], text);
  if (r.status !== 0) throw new Error(`py canonical_entry failed: ${r.stdout.toString()}`);
  return r.stdout.subarray(0, r.stdout.length - 1);
}

const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

function tokcapCanonical(text: string, plusExponent = true): Buffer {
  return Buffer.from(canonicalJson(parseJson(text), { plusExponent }), 'utf8');
}

/** Lines of J without their LF (J is written by writers only, so every line ends in LF). */
function jsonlLines(file: string): Buffer[] {
  const data = fs.readFileSync(file);
  expect(data[data.length - 1]).toBe(0x0a);
  const out: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    if (data[i] === 0x0a) {
      out.push(data.subarray(start, i));
      start = i + 1;
    }
  }
  return out;
}

// docs/format.md#canonical-entry and docs/format.md#test-vectors.
const LINE1 =
  '{"continuation_context_digest":"","continuation_context_len":0,"continuation_fingerprint":"","created_at":1700000000.25,"cum_len":5,"digest":"f9621b3ed7fd0071bfc930ba0ed1ee53f9c21e6a3a4a251c9d6f145b5fbe8b18","fingerprint_version":null,"generation_log_probs":[-0.5,-1.25e-7],"generation_token_ids":[4,5],"model":"","model_call_id":"c1","output_items":[{"content":"hi","role":"assistant","type":"message"}],"parent_call_id":null,"parent_resolution":"root","parent_resolution_reason":"","prefix_requested":false,"prefix_supplied":false,"prompt_is_delta":false,"prompt_token_ids":[1,2,3],"rollout_id":"t0-r0","routed_experts":null,"schema_version":5,"token_item_index":0}';
const LINE2 =
  '{"continuation_context_digest":"","continuation_context_len":0,"continuation_fingerprint":"","created_at":1700000001.0,"cum_len":8,"digest":"30876ed1ab7084245bacdd41d6ce90ddea8339be9ad96917a3b95214c57738db","fingerprint_version":null,"generation_log_probs":[-0.03125],"generation_token_ids":[8],"model":"","model_call_id":"c2","output_items":[],"parent_call_id":"c1","parent_resolution":"resolved","parent_resolution_reason":"","prefix_requested":false,"prefix_supplied":false,"prompt_is_delta":true,"prompt_token_ids":[6,7],"rollout_id":"t0-r0","routed_experts":null,"schema_version":5,"token_item_index":null}';
const LINE1_DIGEST = '911da8ab57b1f2d70eb3b4633d80e58d87058a08e3bdd215cd4c1c2bae59880d';
const LINE2_DIGEST = '698c13c765af7502444ee294718d404a59628d9ecb0b9db86c53b6668ff329cb';

describe('canonical bytes: tokcap vs the Python peer', () => {
  it('reproduces the two canonical example lines and their entry digests', () => {
    expect(Buffer.byteLength(LINE1)).toBe(667);
    expect(Buffer.byteLength(LINE2)).toBe(611);
    for (const [line, digest] of [
      [LINE1, LINE1_DIGEST],
      [LINE2, LINE2_DIGEST],
    ]) {
      const viaPy = pyCanonical(line);
      expect(viaPy.toString('utf8')).toBe(line);
      expect(sha256(viaPy)).toBe(digest);
      expect(tokcapCanonical(line).toString('utf8')).toBe(line);
      // The entry path (defaults + float fields) also gives the same bytes on both sides.
      expect(pyCanonicalEntry(line).toString('utf8')).toBe(line);
      expect(canonicalEntryJson(validateTokenEntry(parseJson(line)))).toBe(line);
    }
  });

  it('fills docs/format.md#entry-fields defaults and float kinds identically from a subset of fields', () => {
    const subset = {
      rollout_id: 't0-r0',
      model_call_id: 'c2',
      prompt_token_ids: [6, 7],
      generation_token_ids: [8],
      generation_log_probs: [-0.03125],
      created_at: 1700000001, // an int in the input: written as 1700000001.0
      cum_len: 8,
      digest: computeTokenDigest([1, 2, 3, 4, 5, 6, 7, 8]),
      parent_call_id: 'c1',
      parent_resolution: 'resolved',
      prompt_is_delta: true,
    };
    const text = JSON.stringify(subset);
    expect(pyCanonicalEntry(text).toString('utf8')).toBe(LINE2);
    expect(canonicalEntryJson(validateTokenEntry(parseJson(text)))).toBe(LINE2);
  });

  it('lays out floats exactly as docs/format.md#float-layout, in both exponent styles', () => {
    // [input, with "+", without "+"]
    const cases: [string, string, string][] = [
      ['1e-7', '1e-7', '1e-7'],
      ['0.00001234', '0.00001234', '0.00001234'],
      ['1.234e-6', '1.234e-6', '1.234e-6'],
      ['-1.25e-7', '-1.25e-7', '-1.25e-7'],
      ['-0.0', '-0.0', '-0.0'],
      ['0.0', '0.0', '0.0'],
      ['1.0', '1.0', '1.0'],
      ['100.0', '100.0', '100.0'],
      ['1e15', '1000000000000000.0', '1000000000000000.0'],
      ['1e16', '1e+16', '1e16'],
      ['1.2345678901234568e17', '1.2345678901234568e+17', '1.2345678901234568e17'],
      ['123456789012345678901234.0', '1.2345678901234569e+23', '1.2345678901234569e23'], // exact value ...685803008
      ['1e300', '1e+300', '1e300'],
      ['1.5e300', '1.5e+300', '1.5e300'],
      ['5e-324', '5e-324', '5e-324'],
      ['1700000000.25', '1700000000.25', '1700000000.25'],
      ['1e-5', '0.00001', '0.00001'],
      ['0.0001', '0.0001', '0.0001'],
      ['0.1', '0.1', '0.1'],
      ['2.5', '2.5', '2.5'],
      ['1E2', '100.0', '100.0'],
      ['-3', '-3', '-3'],
      ['18446744073709551615', '18446744073709551615', '18446744073709551615'],
      ['-9223372036854775808', '-9223372036854775808', '-9223372036854775808'],
    ];
    // One Python call per style: numbers contain no commas, so the array splits cleanly.
    const all = '[' + cases.map((c) => c[0]).join(',') + ']';
    const pyPlus = pyCanonical(all, true).toString().slice(1, -1).split(',');
    const pyNoPlus = pyCanonical(all, false).toString().slice(1, -1).split(',');
    cases.forEach(([input, plus, noPlus], i) => {
      expect([input, pyPlus[i]]).toEqual([input, plus]);
      expect([input, pyNoPlus[i]]).toEqual([input, noPlus]);
      expect([input, tokcapCanonical(input, true).toString()]).toEqual([input, plus]);
      expect([input, tokcapCanonical(input, false).toString()]).toEqual([input, noPlus]);
    });
    // A whole document in one piece, too.
    expect(tokcapCanonical(all).toString()).toBe('[' + pyPlus.join(',') + ']');
  });

  it('agrees on 4000 random doubles (bit patterns and log-prob-like values)', () => {
    const buf = new DataView(new ArrayBuffer(8));
    let seed = 0x2545f491;
    const rnd32 = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return seed >>> 0;
    };
    const values: JsonValue[] = [];
    while (values.length < 2000) {
      buf.setUint32(0, rnd32());
      buf.setUint32(4, rnd32());
      const x = buf.getFloat64(0);
      if (Number.isFinite(x)) values.push(new JsonFloat(x));
    }
    for (let i = 0; i < 2000; i++) {
      const u = rnd32() / 2 ** 32;
      const x =
        i % 3 === 0
          ? -Math.exp(-30 * u) * 1e-3
          : i % 3 === 1
            ? -u * 20
            : Math.round(u * 1e6) * 10 ** ((rnd32() % 40) - 20);
      values.push(new JsonFloat(x));
    }
    for (const plus of [true, false]) {
      const text = canonicalJson(values, { plusExponent: plus });
      const viaPy = pyCanonical(text, plus).toString('utf8');
      if (viaPy !== text) {
        const a = parseJson(text) as JsonValue[];
        const t = text.slice(1, -1).split(',');
        const p = viaPy.slice(1, -1).split(',');
        const diffs = t
          .map((s, i) => [s, p[i]])
          .filter(([s, q]) => s !== q)
          .slice(0, 10);
        expect({ plus, n: a.length, diffs }).toEqual({ plus, n: a.length, diffs: [] });
      }
      expect(viaPy).toBe(text);
    }
  });

  it('escapes strings and orders keys as docs/format.md#json-writing (non-ASCII raw, U+2028 raw, control chars)', () => {
    const text = String.raw`{"s":"é ✓ 😀 \u2028 \u2029 \u007f / \u0000 \u0001 \u001f \b \f \n \r \t \" \\ \/","😀":2,"\uffff":1,"é":5,"a":3,"_":6,"B":4}`;
    const expected =
      '{"B":4,"_":6,"a":3,"s":"é ✓ 😀 \u2028 \u2029 \u007f / \\u0000 \\u0001 \\u001f \\b \\f \\n \\r \\t \\" \\\\ /","é":5,"\uffff":1,"😀":2}';
    expect(pyCanonical(text).toString('utf8')).toBe(expected);
    expect(tokcapCanonical(text).toString('utf8')).toBe(expected);
    // Raw non-ASCII input (not escaped in the JSON text) gives the same bytes.
    const raw = '{"k":"\u00e9\u2028\ud83d\ude00"}';
    expect(pyCanonical(raw).toString('utf8')).toBe(raw);
    expect(tokcapCanonical(raw).toString('utf8')).toBe(raw);
  });

  it('computes the same token digests (docs/format.md#token-digest-examples)', () => {
    const cases: [number[] | string, string][] = [
      [[], '2e222d36d0c6ae1db1ec18b3f96d9a46df5db61b40137bbfbac4cdf0acde9763'],
      [[0], '0596efeb21b51ec6eb122c9e470703df19a095a7c5ccb96bf87df0ba2447ba59'],
      [[1, 2, 3], 'bf99633051449f0f3248b4995a7c8468b9561d7732447341916085f12ff9ff54'],
      [[151644, 872, 198], '84d8060e977a9cfef2b1389fb00e1742dc393d1705b7aebba5bd6e9a1a990235'],
      ['[18446744073709551615]', 'c8d12d8e6a444254ed871840b7def79d9c0543b375062a1cc4623b3a1ab304be'],
    ];
    for (const [ids, digest] of cases) {
      const text = typeof ids === 'string' ? ids : JSON.stringify(ids);
      expect(pyOk(['digest', text]).digest).toBe(digest);
      if (typeof ids !== 'string') expect(computeTokenDigest(ids)).toBe(digest);
    }
    expect(computeTokenDigest([18446744073709551615n])).toBe(cases[4][1]);
    expect(py(['digest', '[1,-3]']).error).toBe('ValueError: token ids must be non-negative, got -3');
  });
});

/**
 * JSON text of an entry for Python with its float fields spelled as floats: JSON.stringify would
 * write -0 as 0 and so lose the sign of a -0.0 log prob.
 */
function floatText(e: JsonObject): string {
  return canonicalJson({
    ...e,
    created_at: new JsonFloat(e.created_at as number),
    generation_log_probs: (e.generation_log_probs as number[]).map((x) => new JsonFloat(x)),
  });
}

/** Three linked entries: root a, full-prompt child b (parent a), delta child c (parent b). */
function chainEntries(rolloutId: string): JsonObject[] {
  const aPrompt = [151644, 872, 198, 9707, 11];
  const aGen = [40, 1079, 264];
  const aCum = [...aPrompt, ...aGen];
  const bPrompt = [...aCum, 151645, 198, 151644];
  const bGen = [3838, 13];
  const bCum = [...bPrompt, ...bGen];
  const cSuffix = [151645, 198, 77, 78];
  const cGen = [0, 18446744073709];
  const cCum = [...bCum, ...cSuffix, ...cGen];
  const common = {
    rollout_id: rolloutId,
    model: 'Qwen/Qwen3-8B',
    continuation_context_len: 2,
    fingerprint_version: 1,
  };
  return [
    {
      ...common,
      model_call_id: 'call-a',
      prompt_token_ids: aPrompt,
      generation_token_ids: aGen,
      generation_log_probs: [-1.25e-7, -0.5, -2],
      output_items: [
        {
          type: 'message',
          role: 'assistant',
          id: 'msg_1',
          content: [{ type: 'output_text', text: 'Héllo ✓ 😀 \u2028 "q" \\ \t' }],
        },
      ],
      token_item_index: 0,
      created_at: 1700000000,
      cum_len: aCum.length,
      digest: computeTokenDigest(aCum),
      parent_resolution: 'root',
      continuation_fingerprint: sha256('fa'),
      continuation_context_digest: sha256('ca'),
      response_id: 'resp_unknown_field',
    },
    {
      ...common,
      model_call_id: 'call-b',
      prompt_token_ids: bPrompt,
      generation_token_ids: bGen,
      generation_log_probs: [-0.00001234, -0.0],
      output_items: [{ type: 'function_call', name: 'f', arguments: '{"x":1}', call_id: 'fc1' }],
      token_item_index: 0,
      created_at: 1700000001.5,
      cum_len: bCum.length,
      digest: computeTokenDigest(bCum),
      parent_call_id: 'call-a',
      parent_resolution: 'resolved',
      routed_experts: [
        [1, 2],
        [3, 4],
      ],
      continuation_fingerprint: sha256('fb'),
      continuation_context_digest: sha256('cb'),
    },
    {
      ...common,
      model_call_id: 'call-c',
      prompt_token_ids: cSuffix,
      generation_token_ids: cGen,
      generation_log_probs: [-3.0e-9, -0.03125],
      created_at: 1700000002.25,
      cum_len: cCum.length,
      digest: computeTokenDigest(cCum),
      parent_call_id: 'call-b',
      parent_resolution: 'resolved',
      prompt_is_delta: true,
      prefix_requested: true,
      prefix_supplied: true,
    },
  ];
}

describe('a Python-written store read by tokcap', () => {
  it('freezes to the same entries, flags and version; state bytes are canonical on both sides', async () => {
    const dir = tmpDir();
    const R = 'py-r0';
    const entries = chainEntries(R);
    const pyDigests: string[] = [];
    for (const e of entries) {
      pyOk([dir, 'begin_call', R, e.model_call_id as string]);
      pyDigests.push(pyOk([dir, 'append', JSON.stringify(e)]).digest);
    }
    // An identical retry is a no-op; a dangling intent and a mark make the rollout incomplete.
    expect(pyOk([dir, 'append', JSON.stringify(entries[0])]).duplicate).toBe(true);
    pyOk([dir, 'begin_call', R, 'call-lost']);
    pyOk([dir, 'mark_incomplete', R, 'call-lost']);

    const files = { jsonl: path.join(dir, `${R}.tokens.jsonl`), state: path.join(dir, `${R}.tokens.state.json`) };
    const lines = jsonlLines(files.jsonl);
    expect(lines.map((l) => sha256(l))).toEqual(pyDigests);
    // tokcap's canonical form of each Python line is the line itself.
    for (const line of lines)
      expect(canonicalEntryJson(validateTokenEntry(parseJson(line.toString('utf8'))))).toBe(line.toString('utf8'));
    expect(lines[0].toString()).toContain('"created_at":1700000000.0');
    expect(lines[0].toString()).toContain('"generation_log_probs":[-1.25e-7,-0.5,-2.0]');

    // The Python state file, re-serialised by tokcap, is byte-identical.
    const pyState = fs.readFileSync(files.state);
    expect(tokcapCanonical(pyState.toString('utf8')).toString('utf8') + '\n').toBe(pyState.toString('utf8'));
    expect(JSON.parse(pyState.toString())).toMatchObject({
      version: 4,
      incomplete: true,
      frozen: false,
      indexed_size: fs.statSync(files.jsonl).size,
    });
    expect((fs.statSync(files.state).mode & 0o777).toString(8)).toBe('600');

    const snap = await freezeRollout({ dir }, R);
    expect(snap.rolloutId).toBe(R);
    expect(snap.entries.map((e) => e.model_call_id)).toEqual(['call-a', 'call-b', 'call-c']);
    expect(snap.entries.map((e) => canonicalEntryJson(e))).toEqual(lines.map((l) => l.toString('utf8')));
    expect(snap.entries[2].prompt_token_ids).toEqual(entries[2].prompt_token_ids);
    expect(snap.incomplete).toBe(true);
    expect(snap.danglingIntents).toEqual(['call-lost']);
    expect(snap.version).toBe(5);
    expect(snap.snapshotId).toMatch(/^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);

    // tokcap's state file is exactly what Python would write for the same state.
    const tsState = fs.readFileSync(files.state);
    expect(pyCanonical(tsState.toString('utf8')).toString('utf8') + '\n').toBe(tsState.toString('utf8'));
    expect(JSON.parse(tsState.toString())).toEqual({
      entry_digests: { 'call-a': pyDigests[0], 'call-b': pyDigests[1], 'call-c': pyDigests[2] },
      frozen: true,
      incomplete: true,
      indexed_size: fs.statSync(files.jsonl).size,
      retired: false,
      snapshot_id: snap.snapshotId,
      version: 5,
    });
    expect((fs.statSync(files.state).mode & 0o777).toString(8)).toBe('600');

    // Python sees the freeze: same identity on a repeated freeze, writes refused.
    const pySnap = pyOk([dir, 'freeze', R]);
    expect(pySnap).toMatchObject({
      entries: 3,
      entry_call_ids: ['call-a', 'call-b', 'call-c'],
      entry_line_digests: pyDigests,
      canonical_lines: [true, true, true],
      incomplete: true,
      snapshot_id: snap.snapshotId,
      version: 5,
      dangling_intents: ['call-lost'],
    });
    expect(fs.readFileSync(files.state)).toEqual(tsState); // a repeated freeze writes nothing
    expect(py([dir, 'append', JSON.stringify({ ...entries[0], model_call_id: 'late' })]).error).toBe(
      `RuntimeError: Token capture for rollout ${R} is already frozen`,
    );
    expect(py([dir, 'begin_call', R, 'late']).error).toBe(
      `RuntimeError: Token capture for rollout ${R} is already frozen`,
    );
  });

  it('waits for a Python exclusive lock holder before freezing', async () => {
    const dir = tmpDir();
    const R = 'py-lock';
    pyOk([dir, 'append', JSON.stringify(chainEntries(R)[0])]);
    const child = spawn('python3', [PY_STORE, dir, 'hold', R, 'ex', '600']);
    const exited = new Promise((r) => child.once('close', r));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('locked\n')) resolve();
      });
      child.on('error', reject);
      child.once('exit', (code) => reject(new Error(`holder exited early (${code})`)));
    });
    let settled = false;
    const freezing = freezeRollout({ dir, lockWaitMs: 600_000 }, R).finally(() => (settled = true));
    // Still waiting once another python3 process has found the lock held.
    expect(await pyProbe(rolloutPaths(dir, R).lock, 'sh')).toBe('blocked');
    expect(settled).toBe(false);
    child.kill('SIGKILL');
    await exited;
    const snap = await freezing;
    expect(snap.entries).toHaveLength(1);
    expect(snap.version).toBe(2);
  });
});

describe('a tokcap-written store read by Python', () => {
  async function writeWithTokcap(
    dir: string,
    R: string,
    mark: boolean,
  ): Promise<{ entries: JsonObject[]; digests: string[] }> {
    const entries = chainEntries(R);
    const digests: string[] = [];
    for (const e of entries) {
      await beginCall({ dir }, R, e.model_call_id as string);
      digests.push((await appendEntry({ dir }, e)).entryDigest);
    }
    expect((await appendEntry({ dir }, entries[1])).duplicate).toBe(true);
    if (mark) {
      await beginCall({ dir }, R, 'call-lost');
      await markIncomplete({ dir }, R, 'call-lost');
    }
    return { entries, digests };
  }

  it('writes lines that are Python canonical bytes, and a state Python reads and freezes identically', async () => {
    const dir = tmpDir();
    const R = 'ts-r0';
    const { entries, digests } = await writeWithTokcap(dir, R, true);
    const jsonl = path.join(dir, `${R}.tokens.jsonl`);
    const statePath = path.join(dir, `${R}.tokens.state.json`);
    const lines = jsonlLines(jsonl);
    expect(lines).toHaveLength(3);
    for (let i = 0; i < 3; i++) {
      expect(lines[i].toString('utf8')).toBe(pyCanonicalEntry(floatText(entries[i])).toString('utf8'));
      expect(sha256(lines[i])).toBe(digests[i]);
    }
    const tsState = fs.readFileSync(statePath);
    expect(pyCanonical(tsState.toString('utf8')).toString('utf8') + '\n').toBe(tsState.toString('utf8'));
    expect(JSON.parse(tsState.toString())).toMatchObject({
      version: 4,
      incomplete: true,
      indexed_size: fs.statSync(jsonl).size,
    });
    expect(fs.readFileSync(path.join(dir, `${R}.tokens.intents`), 'utf8')).toBe('call-a\ncall-b\ncall-c\ncall-lost\n');
    expect(fs.readFileSync(path.join(dir, `${R}.tokens.incomplete`), 'utf8')).toBe('call-lost\n');

    const pySnap = pyOk([dir, 'freeze', R]);
    expect(pySnap).toMatchObject({
      entries: 3,
      entry_call_ids: ['call-a', 'call-b', 'call-c'],
      entry_line_digests: digests,
      canonical_lines: [true, true, true],
      incomplete: true,
      version: 5,
      dangling_intents: ['call-lost'],
    });
    expect(pySnap.state.entry_digests).toEqual({ 'call-a': digests[0], 'call-b': digests[1], 'call-c': digests[2] });
    // Python's freeze state is what tokcap would serialise, and tokcap's freeze agrees with it.
    const pyState = fs.readFileSync(statePath, 'utf8');
    expect(tokcapCanonical(pyState).toString('utf8') + '\n').toBe(pyState);
    const snap = await freezeRollout({ dir }, R);
    expect([snap.snapshotId, snap.version, snap.incomplete]).toEqual([pySnap.snapshot_id, 5, true]);
    expect(fs.readFileSync(statePath, 'utf8')).toBe(pyState);
  });

  it('is re-indexed from scratch by Python (state deleted) with the same entry digests', async () => {
    const dir = tmpDir();
    const R = 'ts-r1';
    const { digests } = await writeWithTokcap(dir, R, false);
    const jsonl = path.join(dir, `${R}.tokens.jsonl`);
    const statePath = path.join(dir, `${R}.tokens.state.json`);
    fs.unlinkSync(statePath);

    const pySnap = pyOk([dir, 'freeze', R]);
    expect(pySnap.state).toEqual({
      entry_digests: { 'call-a': digests[0], 'call-b': digests[1], 'call-c': digests[2] },
      frozen: true,
      incomplete: false,
      indexed_size: fs.statSync(jsonl).size,
      retired: false,
      snapshot_id: pySnap.snapshot_id,
      version: 4, // 3 recovered entries + the freeze
    });
    expect(pySnap).toMatchObject({
      entries: 3,
      entry_line_digests: digests,
      incomplete: false,
      version: 4,
      dangling_intents: [],
    });

    const snap = await freezeRollout({ dir }, R);
    expect([snap.snapshotId, snap.version, snap.incomplete, snap.danglingIntents]).toEqual([
      pySnap.snapshot_id,
      4,
      false,
      [],
    ]);
    expect(snap.entries.map((e) => sha256(canonicalEntryJson(e)))).toEqual(digests);
    await expect(appendEntry({ dir }, { ...chainEntries(R)[0], model_call_id: 'late' })).rejects.toThrow(
      /is already frozen/,
    );
  });

  it('reconciles a torn tail the same way on both sides', async () => {
    for (const first of ['python', 'tokcap'] as const) {
      const dir = tmpDir();
      const R = `torn-${first}`;
      const e = chainEntries(R)[0];
      const d = pyOk([dir, 'append', JSON.stringify(e)]).digest;
      const jsonl = path.join(dir, `${R}.tokens.jsonl`);
      const good = fs.statSync(jsonl).size;
      fs.appendFileSync(jsonl, '\n{"rollout_id":"' + R + '","model_ca');
      let sid: string;
      if (first === 'python') {
        sid = pyOk([dir, 'freeze', R]).snapshot_id;
      } else {
        sid = (await freezeRollout({ dir }, R)).snapshotId;
      }
      expect(fs.statSync(jsonl).size).toBe(good + 1); // the blank line before the torn one is kept
      const stateText = fs.readFileSync(path.join(dir, `${R}.tokens.state.json`), 'utf8');
      expect(JSON.parse(stateText)).toEqual({
        entry_digests: { 'call-a': d },
        frozen: true,
        incomplete: false,
        indexed_size: good + 1,
        retired: false,
        snapshot_id: sid,
        version: 2,
      });
      expect(pyCanonical(stateText).toString('utf8') + '\n').toBe(stateText);
      expect(tokcapCanonical(stateText).toString('utf8') + '\n').toBe(stateText);
    }
  });
});

describe('state rewrites by tokcap and by Python', () => {
  /** Initial states (with J holding two Python-written entries and intents a, r1, x). */
  const initialStates: Record<string, string> = {
    unknownKeys:
      '{"custom":{"z":1.0,"a":[1,2.5e-8,"é"]},"entry_digests":{},"frozen":false,"indexed_size":0,"refusals":[{"code":null,"created_at":1700000000.0,"model_call_id":"r1"}],"version":3.0,"zz":null}',
    legacy: '{"entry_digests":["not","an","object"],"indexed_size":"12","incomplete":0,"version":"7","x-extra":1e16}',
    boolOffset: '{"entry_digests":{},"indexed_size":false,"version":2}',
  };

  it('preserve unknown keys and value kinds identically (mark_incomplete, then freeze)', async () => {
    for (const [name, stateText] of Object.entries(initialStates)) {
      const results: Record<string, { afterMark: string; afterFreeze: string; snapshot: unknown }> = {};
      for (const side of ['python', 'tokcap'] as const) {
        const dir = tmpDir();
        const R = 'st-r';
        for (const e of chainEntries(R).slice(0, 2)) pyOk([dir, 'append', floatText(e)]);
        for (const c of ['call-a', 'r1', 'x']) pyOk([dir, 'begin_call', R, c]);
        const statePath = path.join(dir, `${R}.tokens.state.json`);
        fs.writeFileSync(statePath, stateText + '\n');
        let snapshot: { sid: string; version: number; incomplete: boolean; dangling: string[]; n: number };
        if (side === 'python') {
          pyOk([dir, 'mark_incomplete', R, 'lost']);
        } else {
          await markIncomplete({ dir }, R, 'lost');
        }
        const afterMark = fs.readFileSync(statePath, 'utf8');
        if (side === 'python') {
          const s = pyOk([dir, 'freeze', R]);
          snapshot = {
            sid: s.snapshot_id,
            version: s.version,
            incomplete: s.incomplete,
            dangling: s.dangling_intents,
            n: s.entries,
          };
        } else {
          const s = await freezeRollout({ dir }, R);
          snapshot = {
            sid: s.snapshotId,
            version: s.version,
            incomplete: s.incomplete,
            dangling: s.danglingIntents,
            n: s.entries.length,
          };
        }
        const afterFreeze = fs.readFileSync(statePath, 'utf8').replace(snapshot.sid, '<sid>');
        results[side] = { afterMark, afterFreeze, snapshot: { ...snapshot, sid: '<sid>' } };
      }
      expect([name, results.tokcap]).toEqual([name, results.python]);
    }
    // About 30 python processes: their start-up alone took over 30 s under load.
  });
});

describe('live Python writers and tokcap freeze', () => {
  it('never loses an acknowledged append and never appends after freeze', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'acks.log'); // a foreign name: ignored by the store
    const rollouts = ['live-1', 'live-2'];
    const stop = path.join(dir, 'stop');
    const run = (seed: number) =>
      new Promise<any>((resolve, reject) => {
        const child = spawn('python3', [
          PY_STORE,
          dir,
          'writer',
          '--rollouts',
          rollouts.join(','),
          '--seconds',
          '600',
          '--until',
          stop,
          '--seed',
          String(seed),
          '--log',
          log,
          '--gen-ms',
          '4',
        ]);
        let out = '';
        let err = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        child.stderr.on('data', (c: Buffer) => (err += c.toString()));
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`writer ${seed} failed (${code}): ${out} ${err}`)),
        );
      });
    const writers = [run(1), run(2)];
    const acksOf = (rollout: string) =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, 'utf8')
            .split('\n')
            .filter((l) => l.includes(`"${rollout}"`)).length
        : 0;
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise((r) => setTimeout(r, 10));
    };
    // Freeze while the writers are running, after their first acknowledged appends to live-1; stop
    // them once they appended 20 more calls to live-2: by then they tried live-1 again (each call
    // picks one of the two rollouts at random) and found it frozen.
    await until(() => acksOf('live-1') >= 2);
    const first = await freezeRollout({ dir }, 'live-1');
    const live2 = acksOf('live-2');
    await until(() => acksOf('live-2') >= live2 + 20);
    fs.writeFileSync(stop, '');
    const summaries = await Promise.all(writers);
    for (const s of summaries) expect([s.errors, s.first_error]).toEqual([0, null]);

    const acks = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l)
      .map((l) => JSON.parse(l) as { rollout: string; call: string; digest: string; t: number });
    expect(acks.length).toBeGreaterThanOrEqual(22);

    const marked = summaries.reduce((n, s) => n + s.marked_incomplete, 0);
    // The writers saw the freeze (refused intents, and refused appends that they then marked).
    expect(summaries.reduce((n, s) => n + s.refused_frozen_begin + s.refused_frozen_append, 0)).toBeGreaterThan(0);
    expect(summaries.reduce((n, s) => n + s.mark_failed + s.refused_retired, 0)).toBe(0);
    if (process.env.TOKCAP_INTEROP_DEBUG) console.info(JSON.stringify(summaries));
    for (const R of rollouts) {
      const snap = await freezeRollout({ dir }, R);
      const lines = jsonlLines(path.join(dir, `${R}.tokens.jsonl`));
      const mine = acks.filter((a) => a.rollout === R);
      // Exactly the acknowledged appends, each with the digest the writer reported.
      expect(snap.entries.map((e) => e.model_call_id).sort()).toEqual(mine.map((a) => a.call).sort());
      const byCall = new Map(mine.map((a) => [a.call, a.digest]));
      snap.entries.forEach((e, i) => {
        expect(sha256(lines[i])).toBe(byCall.get(e.model_call_id));
        expect(canonicalEntryJson(e)).toBe(lines[i].toString('utf8'));
      });
      if (R === 'live-1') {
        // Nothing was appended after tokcap's freeze; late writers only marked the rollout.
        expect(snap.entries.map((e) => e.model_call_id)).toEqual(first.entries.map((e) => e.model_call_id));
        expect(snap.snapshotId).toBe(first.snapshotId);
        expect(snap.version).toBe(first.version + marked);
        if (marked > 0) expect(snap.incomplete).toBe(true);
      }
      // Python's view of the final state agrees.
      const pySnap = pyOk([dir, 'freeze', R]);
      expect([pySnap.snapshot_id, pySnap.version, pySnap.entries, pySnap.incomplete]).toEqual([
        snap.snapshotId,
        snap.version,
        snap.entries.length,
        snap.incomplete,
      ]);
      expect(pySnap.canonical_lines.every(Boolean)).toBe(true);
    }
  });

  it('an append refused by a freeze during generation makes the older writer mark the rollout', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'acks.log');
    const R = 'live-gen';
    // The second call waits between its intent and its append until the gate file exists.
    const gate = path.join(dir, 'gate');
    const stop = path.join(dir, 'stop');
    const child = spawn('python3', [
      PY_STORE,
      dir,
      'writer',
      '--rollouts',
      R,
      '--seconds',
      '600',
      '--until',
      stop,
      '--gate',
      gate,
      '--seed',
      '7',
      '--log',
      log,
    ]);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => child.once('close', r));
    // Freeze while the writer is "generating" its second call, then let it append and stop.
    while (!fs.existsSync(`${gate}.held`)) await new Promise((r) => setTimeout(r, 5));
    const first = await freezeRollout({ dir }, R);
    fs.writeFileSync(stop, '');
    fs.writeFileSync(gate, '');
    expect(await exited).toBe(0);
    const summary = JSON.parse(out);
    expect(summary).toMatchObject({ errors: 0, refused_frozen_append: 1, marked_incomplete: 1, mark_failed: 0 });
    const acked = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l)
      .map((l) => JSON.parse(l).call);
    expect(first.entries.map((e) => e.model_call_id)).toEqual(acked);
    expect(first.incomplete).toBe(true); // the refused call's intent dangles
    expect(first.danglingIntents).toHaveLength(1);
    const marks = fs.readFileSync(path.join(dir, `${R}.tokens.incomplete`), 'utf8');
    expect(marks).toBe(first.danglingIntents[0] + '\n');
    const again = await freezeRollout({ dir }, R);
    expect([again.snapshotId, again.version, again.incomplete]).toEqual([first.snapshotId, first.version + 1, true]);
    const state = JSON.parse(fs.readFileSync(path.join(dir, `${R}.tokens.state.json`), 'utf8'));
    expect(state).toMatchObject({
      frozen: true,
      incomplete: true,
      version: first.version + 1,
      snapshot_id: first.snapshotId,
    });
  });
});
