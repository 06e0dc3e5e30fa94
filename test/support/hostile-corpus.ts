/**
 * A generated corpus of damaged and hostile capture directories for the reliability suite
 * (test/reliability/hostile-inputs.test.ts). Every case is one rollout id inside one store
 * directory, so each tokcap command meets all of them in a single run and must report each one
 * separately. Raw material (valid canonical lines and states) comes from a store written by the
 * Python peer; fuzzing is seeded so that a failure can be replayed.
 *
 * Layout made by `makeCorpus(base)`:
 *   base/store     the capture directory (cases below)
 *   base/outside   a sibling nothing may write to: symlink targets live here
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRng } from './reliability.js';

export interface RawMaterial {
  /** Canonical J lines (with LF) of one rollout, in order. */
  lines: Buffer[];
  /** Its state file bytes (indexes all lines). */
  state: Buffer;
  /** Its intents file bytes. */
  intents: Buffer;
}

export function rawMaterial(dir: string, id: string): RawMaterial {
  const j = readFileSync(join(dir, `${id}.tokens.jsonl`));
  const lines: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < j.length; i++) {
    if (j[i] === 0x0a) {
      lines.push(j.subarray(start, i + 1));
      start = i + 1;
    }
  }
  return {
    lines,
    state: readFileSync(join(dir, `${id}.tokens.state.json`)),
    intents: readFileSync(join(dir, `${id}.tokens.intents`)),
  };
}

function stateJson(obj: Record<string, unknown>): Buffer {
  const sorted = Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return Buffer.from(`${JSON.stringify(sorted)}\n`);
}

function fuzz(buf: Buffer, rng: () => number, edits: number): Buffer {
  const out = Buffer.from(buf);
  for (let k = 0; k < edits; k++) {
    const at = Math.floor(rng() * out.length);
    out[at] = Math.floor(rng() * 256);
  }
  return out;
}

export interface Corpus {
  store: string;
  outside: string;
  /** Rollout ids of the cases (valid ids). */
  ids: string[];
  /** Symlinks in the store: name -> target, to check they still point where they did. */
  symlinks: Record<string, string>;
  /** Files made unreadable (chmod 000). */
  unreadable: string[];
}

export interface CorpusOptions {
  seed: number;
  /** Size of the single huge line (CI 8 MB, torture 100 MB). */
  bigLineBytes: number;
  /** Add chmod-000 files (only meaningful when the commands run unprivileged). */
  unreadable?: boolean;
}

export function makeCorpus(base: string, raw: RawMaterial, opts: CorpusOptions): Corpus {
  const store = join(base, 'store');
  const outside = join(base, 'outside');
  mkdirSync(store, { recursive: true });
  mkdirSync(outside, { recursive: true });
  const rng = seededRng(opts.seed);
  const ids: string[] = [];
  const symlinks: Record<string, string> = {};
  const unreadable: string[] = [];
  const validJ = Buffer.concat(raw.lines);
  const w = (id: string, suffix: string, bytes: Buffer | string) => {
    if (!ids.includes(id)) ids.push(id);
    writeFileSync(join(store, id + suffix), bytes);
  };
  const state = (extra: Record<string, unknown>) =>
    stateJson({ ...(JSON.parse(raw.state.toString()) as Record<string, unknown>), ...extra });

  // A healthy rollout: must keep working beside the damaged ones.
  w('healthy', '.tokens.jsonl', validJ);
  w('healthy', '.tokens.state.json', raw.state);
  w('healthy', '.tokens.intents', raw.intents);

  // Fuzzed bytes in J (index covers all of it) and in the state.
  for (let k = 0; k < 4; k++) {
    const f = fuzz(validJ, rng, 1 + k * 3);
    w(`fuzz-j${k}`, '.tokens.jsonl', f);
    w(`fuzz-j${k}`, '.tokens.state.json', k % 2 === 0 ? raw.state : state({ indexed_size: Math.floor(f.length / 2) }));
  }
  for (let k = 0; k < 4; k++) {
    w(`fuzz-s${k}`, '.tokens.jsonl', validJ);
    w(`fuzz-s${k}`, '.tokens.state.json', fuzz(raw.state, rng, 1 + k * 4));
  }
  // Random garbage of random sizes.
  for (let k = 0; k < 2; k++) {
    const junk = Buffer.alloc(1 + Math.floor(rng() * 5000));
    for (let i = 0; i < junk.length; i++) junk[i] = Math.floor(rng() * 256);
    w(`junk${k}`, '.tokens.jsonl', junk);
    w(`junk${k}`, '.tokens.state.json', junk.subarray(0, Math.min(junk.length, 300)));
    w(`junk${k}`, '.tokens.intents', junk);
    w(`junk${k}`, '.tokens.incomplete', junk);
  }

  // Truncated files: torn tail with the index past the end; a truncated state.
  w('trunc-j', '.tokens.jsonl', validJ.subarray(0, validJ.length - Math.floor(raw.lines.at(-1)!.length / 2)));
  w('trunc-j', '.tokens.state.json', raw.state);
  w('trunc-j-tail', '.tokens.jsonl', validJ.subarray(0, validJ.length - 7));
  w('trunc-j-tail', '.tokens.state.json', state({ indexed_size: raw.lines[0].length, entry_digests: {} }));
  w('trunc-s', '.tokens.jsonl', validJ);
  w('trunc-s', '.tokens.state.json', raw.state.subarray(0, Math.floor(raw.state.length / 2)));
  w('empty-s', '.tokens.state.json', Buffer.alloc(0));
  w('empty-s', '.tokens.jsonl', Buffer.alloc(0));

  // One huge line: a valid entry carrying a huge string, and huge junk without a newline.
  const first = JSON.parse(raw.lines[0].toString()) as Record<string, unknown>;
  const pad = 'x'.repeat(opts.bigLineBytes);
  first.output_items = [{ type: 'message', text: pad }];
  first.token_item_index = 0;
  w('bigline', '.tokens.jsonl', `${JSON.stringify(first)}\n`);
  w('bigline-junk', '.tokens.jsonl', Buffer.alloc(opts.bigLineBytes, 0x5b)); // "[[[[..." with no newline

  // Deep nesting (a recursive parser's stack overflow).
  w('deep-j', '.tokens.jsonl', `${'['.repeat(200_000)}${']'.repeat(200_000)}\n`);
  w('deep-s', '.tokens.state.json', `{"x":${'['.repeat(200_000)}${']'.repeat(200_000)}}\n`);
  w('deep-s', '.tokens.jsonl', validJ);

  // Non-UTF-8 and NUL bytes.
  const lat1 = Buffer.from(raw.lines[0]);
  const at = lat1.indexOf('"model":"') + 9;
  lat1[at] = 0xff;
  lat1[at + 1] = 0xc3;
  w('nonutf8', '.tokens.jsonl', lat1);
  w('nonutf8', '.tokens.intents', Buffer.from([0x63, 0x31, 0x0a, 0xff, 0xfe, 0x0a]));
  w('nonutf8', '.tokens.incomplete', Buffer.from([0xc3, 0x28, 0x0a]));
  w(
    'nonutf8-s',
    '.tokens.state.json',
    Buffer.from('{"frozen":false,"snapshot_id":"\xff\xfe","version":1}\n', 'latin1'),
  );
  w('nul', '.tokens.jsonl', Buffer.concat([raw.lines[0], Buffer.alloc(64), raw.lines[1] ?? Buffer.alloc(0)]));
  w(
    'nul',
    '.tokens.state.json',
    Buffer.concat([Buffer.from('{"frozen":true,'), Buffer.alloc(8), Buffer.from('"version":1}\n')]),
  );
  w('nul', '.tokens.intents', Buffer.from('c1\0c2\n\0\n'));
  w('bom', '.tokens.jsonl', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), validJ]));
  w('bom', '.tokens.state.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), raw.state]));

  // Wrong shapes and values in the state.
  w('s-array', '.tokens.state.json', '[]\n');
  w('s-array', '.tokens.jsonl', validJ);
  w('s-null', '.tokens.state.json', 'null\n');
  w('s-number', '.tokens.state.json', '1e999\n');
  w('s-neg-index', '.tokens.jsonl', validJ);
  w('s-neg-index', '.tokens.state.json', state({ indexed_size: -5 }));
  w('s-huge-index', '.tokens.jsonl', validJ);
  w(
    's-huge-index',
    '.tokens.state.json',
    Buffer.from(raw.state.toString().replace(/"indexed_size":\d+/, '"indexed_size":1180591620717411303424')),
  );
  w('s-float-index', '.tokens.jsonl', validJ);
  w(
    's-float-index',
    '.tokens.state.json',
    Buffer.from(raw.state.toString().replace(/"indexed_size":\d+/, '"indexed_size":1e308')),
  );
  w('s-version-str', '.tokens.jsonl', validJ);
  w(
    's-version-str',
    '.tokens.state.json',
    state({ version: 'abc', frozen: true, snapshot_id: '0123456789abcdef0123456789abcdef' }),
  );
  w('s-version-numstr', '.tokens.jsonl', validJ);
  w('s-version-numstr', '.tokens.state.json', state({ version: '12' }));
  w('s-version-huge', '.tokens.jsonl', validJ);
  w(
    's-version-huge',
    '.tokens.state.json',
    Buffer.from(raw.state.toString().replace(/"version":\d+/, '"version":1e300')),
  );
  w(
    's-version-bigint',
    '.tokens.state.json',
    Buffer.from(raw.state.toString().replace(/"version":\d+/, '"version":18446744073709551615')),
  );
  w('s-version-bigint', '.tokens.jsonl', validJ);
  w('s-digests-array', '.tokens.jsonl', validJ);
  w('s-digests-array', '.tokens.state.json', state({ entry_digests: ['a', 1, null] }));
  w('s-snapshot-obj', '.tokens.state.json', state({ frozen: true, snapshot_id: { a: [1] } }));
  w('s-refusals-junk', '.tokens.state.json', state({ refusals: [1, 'x', null, { model_call_id: 5 }] }));
  w('s-refusals-junk', '.tokens.jsonl', validJ);

  // Hostile record contents: huge / negative token ids, NaN written as null, an int past 2^64.
  const bad = JSON.parse(raw.lines[0].toString()) as Record<string, unknown>;
  w('r-negative', '.tokens.jsonl', `${JSON.stringify({ ...bad, prompt_token_ids: [-1, 2], digest: null })}\n`);
  w(
    'r-huge-id',
    '.tokens.jsonl',
    `${JSON.stringify({ ...bad, digest: null }).replace('"prompt_token_ids":[', '"prompt_token_ids":[36893488147419103232,')}\n`,
  );
  w(
    'r-null-logprob',
    '.tokens.jsonl',
    `${JSON.stringify({ ...bad, generation_log_probs: (bad.generation_log_probs as number[]).map(() => null) })}\n`,
  );
  w('r-not-object', '.tokens.jsonl', '[1,2,3]\n"x"\n');

  // Symlinks named like capture files pointing outside DIR (targets exist, or do not).
  writeFileSync(join(outside, 'target.jsonl'), validJ);
  writeFileSync(join(outside, 'target.state.json'), raw.state);
  writeFileSync(join(outside, 'target.intents'), raw.intents);
  writeFileSync(join(outside, 'target.lock'), '');
  const link = (name: string, target: string) => {
    symlinkSync(target, join(store, name));
    symlinks[name] = target;
  };
  link('link-j.tokens.jsonl', join(outside, 'target.jsonl'));
  link('link-j.tokens.state.json', join(outside, 'target.state.json'));
  link('link-j.tokens.intents', join(outside, 'target.intents'));
  link('link-j.tokens.incomplete', join(outside, 'target.intents'));
  link('link-j.tokens.lock', join(outside, 'target.lock'));
  link('link-new.tokens.jsonl', join(outside, 'created-by-tokcap.jsonl'));
  link('link-new.tokens.state.json', join(outside, 'created-by-tokcap.state.json'));
  link('link-new.tokens.lock', join(outside, 'created-by-tokcap.lock'));
  link('link-dir.tokens.jsonl', outside);
  link('link-loop.tokens.state.json', join(store, 'link-loop.tokens.state.json'));
  ids.push('link-j', 'link-new', 'link-dir', 'link-loop');

  // FIFOs and a directory named like capture files.
  for (const name of [
    'fifo.tokens.jsonl',
    'fifo.tokens.state.json',
    'fifo.tokens.intents',
    'fifo.tokens.incomplete',
    'fifo-l.tokens.lock',
    'fifo-l.tokens.jsonl',
  ]) {
    execFileSync('mkfifo', [join(store, name)]);
  }
  ids.push('fifo', 'fifo-l');
  mkdirSync(join(store, 'dirlike.tokens.jsonl'));
  mkdirSync(join(store, 'dirlike.tokens.state.json'));
  mkdirSync(join(store, 'dirlike-l.tokens.lock'));
  w('dirlike-l', '.tokens.jsonl', validJ);
  ids.push('dirlike');

  // Names with a capture suffix and an invalid id, foreign files, temp-state orphans.
  writeFileSync(join(store, 'a b.tokens.jsonl'), validJ);
  writeFileSync(join(store, '\u00e9t\u00e9.tokens.state.json'), raw.state);
  writeFileSync(join(store, '.tokens.jsonl'), validJ);
  writeFileSync(join(store, 'notes.txt'), 'foreign file\n');
  writeFileSync(join(store, '.tokens-state-abcdefgh'), raw.state);
  writeFileSync(join(store, '.tokens-state-zzzzzzzz'), 'garbage');

  if (opts.unreadable) {
    for (const [id, suffix] of [
      ['unread-j', '.tokens.jsonl'],
      ['unread-s', '.tokens.state.json'],
      ['unread-i', '.tokens.intents'],
      ['unread-m', '.tokens.incomplete'],
      ['unread-l', '.tokens.lock'],
    ] as const) {
      w(
        id,
        suffix,
        suffix === '.tokens.state.json'
          ? raw.state
          : suffix === '.tokens.lock'
            ? ''
            : suffix === '.tokens.jsonl'
              ? validJ
              : 'c1\n',
      );
      if (suffix !== '.tokens.state.json')
        w(
          id,
          '.tokens.state.json',
          suffix === '.tokens.jsonl' ? raw.state : state({ indexed_size: 0, entry_digests: {} }),
        );
      chmodSync(join(store, id + suffix), 0o000);
      unreadable.push(id + suffix);
    }
    w('unread-l', '.tokens.jsonl', validJ);
  }
  return { store, outside, ids, symlinks, unreadable };
}
