/**
 * Suite 3 — hostile and damaged inputs. A generated corpus (test/support/hostile-corpus.ts:
 * fuzzed J and state bytes, truncated files, one huge line (CI 8 MB, torture 100 MB), non-UTF-8,
 * NUL bytes, deep nesting, a state that is an array / null / a number, negative, huge and float
 * `indexed_size`, `version` as a string, symlinks named like capture files pointing outside DIR
 * (existing targets, missing targets, a directory, a loop), FIFOs and directories named like
 * capture files, chmod-000 files, invalid names, temp-state orphans) is run through every command
 * of the BUILT BINARY, plus a DIR that is a file / missing / a FIFO, and hostile ids (`../x`,
 * `a/b`, empty, 10,000 characters).
 *
 * For every run: exit code 0-3 (never a signal), within 20 s (never a hang), stderr made only of
 * one-line `tokcap: ...` messages (never a stack trace, never "unexpected error") naming a rollout
 * or a file, JSON on stdout with --json; read-only commands change nothing in DIR; nothing outside
 * DIR is written or removed (the sibling `outside/` holds the symlink targets) and no symlink is
 * followed to change its target. The chmod-000 part runs as an unprivileged user (nobody, 65534)
 * when the tests run as root, since root bypasses permissions.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/cli-binary.js';
import { makeCorpus, rawMaterial, type Corpus, type RawMaterial } from '../support/hostile-corpus.js';
import {
  pictureTree,
  py,
  sized,
  stderrProblems,
  tempBase,
  tokcap,
  type RunOptions,
  type Spawned,
} from '../support/reliability.js';

const SEED = Number(process.env.TOKCAP_SEED ?? Date.now() % 100000);
const BIG_LINE = sized(8, 100) * 1024 * 1024;
const TIMEOUT_MS = sized(120_000, 120_000);
const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;
const FAKE_SID = '0123456789abcdef0123456789abcdef';

let raw: RawMaterial;

beforeAll(async () => {
  ensureBuilt();
  const dir = join(tempBase('raw'), 'store');
  mkdirSync(dir);
  const w = await py([
    dir,
    'writer',
    '--rollouts',
    'seed',
    '--seconds',
    '0.3',
    '--seed',
    '7',
    '--log',
    join(dir, '..', 'log'),
  ]);
  expect(w.code, w.stderr).toBe(0);
  raw = rawMaterial(dir, 'seed');
});

interface Outcome {
  label: string;
  res: Spawned;
}

/** Runs commands with a little parallelism (each on its own corpus when they mutate). */
async function runAll<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

function checkRun(
  label: string,
  res: Spawned,
  opts: { json: boolean; names: string[]; codes?: number[]; maxId?: number },
): string[] {
  const maxId = opts.maxId ?? 100;
  const problems: string[] = [];
  if (res.timedOut) return [`${label}: hung (killed after ${TIMEOUT_MS} ms)`];
  if (res.signal !== null || res.code === null)
    return [`${label}: died with ${res.signal}: ${res.stderr.slice(0, 300)}`];
  const codes = opts.codes ?? [0, 1, 2, 3];
  if (!codes.includes(res.code))
    problems.push(`${label}: exit ${res.code} (expected ${codes.join('/')}): ${res.stderr.trim().slice(0, 300)}`);
  for (const p of stderrProblems(res.stderr)) problems.push(`${label}: ${p}`);
  for (const line of res.stderr.split('\n')) {
    if (line === '' || !line.startsWith('tokcap: ')) continue;
    // One line, however long the id it quotes (a 10,000-character id may appear twice).
    if (line.length > 2 * maxId + 1000) problems.push(`${label}: a ${line.length}-character error line`);
    if (!opts.names.some((n) => line.includes(n)))
      problems.push(`${label}: error names no rollout or file: ${line.slice(0, 300)}`);
  }
  if (opts.json && res.code !== 2) {
    try {
      JSON.parse(res.stdout);
    } catch {
      problems.push(`${label}: --json printed no JSON document (exit ${res.code}): ${res.stdout.slice(0, 200)}`);
    }
  }
  return problems;
}

/** Symlinks still there still point where they did; nothing outside changed. */
function checkContainment(label: string, corpus: Corpus, outsideBefore: Record<string, string>): string[] {
  const problems: string[] = [];
  const after = pictureTree(corpus.outside);
  for (const k of new Set([...Object.keys(outsideBefore), ...Object.keys(after)])) {
    if (outsideBefore[k] !== after[k])
      problems.push(`${label}: outside/${k} changed: ${outsideBefore[k]} -> ${after[k]}`);
  }
  for (const [name, target] of Object.entries(corpus.symlinks)) {
    const p = join(corpus.store, name);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue; // removed (the link itself): allowed for removing commands
    }
    if (!st.isSymbolicLink()) problems.push(`${label}: ${name} is no longer a symlink (replaced through or over it)`);
    else if (readlinkSync(p) !== target) problems.push(`${label}: ${name} now points to ${readlinkSync(p)}`);
  }
  return problems;
}

const bases: string[] = [];
afterAll(() => {
  // The corpora hold huge lines (8 MB each in CI, 100 MB in torture): do not leave them in /tmp.
  for (const b of bases) rmSync(b, { recursive: true, force: true });
});

function newCorpus(tag: string, unreadable = false): Corpus {
  const base = tempBase(`hostile-${tag}`);
  bases.push(base);
  const corpus = makeCorpus(base, raw, { seed: SEED, bigLineBytes: BIG_LINE, unreadable });
  return corpus;
}

describe(`reliability: hostile and damaged inputs (seed ${SEED})`, () => {
  it('read-only commands report every damaged rollout and change nothing', async () => {
    const corpus = newCorpus('ro');
    const outsideBefore = pictureTree(corpus.outside);
    const storeBefore = pictureTree(corpus.store);
    const names = [...corpus.ids, corpus.store];
    const exp = join(corpus.store, '..', 'exp.jsonl');
    const runs: { label: string; args: string[]; json: boolean }[] = [
      { label: 'inspect', args: ['inspect', corpus.store], json: false },
      { label: 'inspect --deep --json', args: ['inspect', corpus.store, '--deep', '--json'], json: true },
      { label: 'inspect ids', args: ['inspect', corpus.store, ...corpus.ids, '--json'], json: true },
      { label: 'verify-digests --json', args: ['verify-digests', corpus.store, '--json'], json: true },
      { label: 'verify-digests', args: ['verify-digests', corpus.store], json: false },
      { label: 'build preview', args: ['build', corpus.store, '--json'], json: true },
      { label: 'build preview ids', args: ['build', corpus.store, ...corpus.ids], json: false },
      { label: 'export preview', args: ['export', corpus.store, ...corpus.ids, '--out', exp, '--json'], json: true },
      {
        label: 'sweep --dry-run',
        args: ['sweep', corpus.store, '--older-than', '0s', '--dry-run', '--json'],
        json: true,
      },
      { label: 'watch --once --json', args: ['watch', corpus.store, '--once', '--json'], json: true },
    ];
    const problems: string[] = [];
    const outcomes: Outcome[] = [];
    await runAll(runs, 3, async (r) => {
      const res = await tokcap([...r.args, '--lock-wait', '1s'], { timeoutMs: TIMEOUT_MS });
      outcomes.push({ label: r.label, res });
      problems.push(...checkRun(r.label, res, { json: r.json, names: [...names, exp] }));
    });
    expect(pictureTree(corpus.store), 'a read-only command changed DIR').toEqual(storeBefore);
    problems.push(...checkContainment('read-only', corpus, outsideBefore));
    console.log(`[hostile] read-only exits: ${outcomes.map((o) => `${o.label}=${o.res.code}`).join(' ')}`);
    expect(problems).toEqual([]);
  }, 180_000);

  it('mutating commands fail per rollout, finish the others, and never reach outside DIR', async () => {
    const problems: string[] = [];
    const exits: string[] = [];
    const sequences: { tag: string; steps: (c: Corpus) => { label: string; args: string[]; json: boolean }[] }[] = [
      {
        tag: 'freeze-seq',
        steps: (c) => [
          { label: 'freeze --json', args: ['freeze', c.store, ...c.ids, '--json'], json: true },
          { label: 'freeze', args: ['freeze', c.store, ...c.ids], json: false },
          { label: 'build --freeze', args: ['build', c.store, ...c.ids, '--freeze', '--json'], json: true },
          {
            label: 'export --freeze',
            args: ['export', c.store, ...c.ids, '--freeze', '--out', join(c.store, '..', 'e.jsonl'), '--json'],
            json: true,
          },
          ...['healthy', 's-version-str', 'nul', 'link-j', 'fifo', 'deep-s', 's-huge-index'].map((id) => ({
            label: `drop ${id}`,
            args: ['retire', c.store, id, '--snapshot-id', FAKE_SID, '--version', '1', '--json'],
            json: true,
          })),
          { label: 'retire', args: ['retire', c.store, ...c.ids, '--json'], json: true },
          { label: 'sweep', args: ['sweep', c.store, '--older-than', '0s', '--json'], json: true },
          { label: 'delete', args: ['delete', c.store, ...c.ids], json: false },
        ],
      },
      { tag: 'retire', steps: (c) => [{ label: 'retire (fresh)', args: ['retire', c.store, ...c.ids], json: false }] },
      {
        tag: 'delete',
        steps: (c) => [{ label: 'delete (fresh)', args: ['delete', c.store, ...c.ids, '--json'], json: true }],
      },
      {
        tag: 'sweep',
        steps: (c) => [{ label: 'sweep (fresh)', args: ['sweep', c.store, '--older-than', '0s'], json: false }],
      },
    ];
    await runAll(sequences, 2, async (seq) => {
      const corpus = newCorpus(seq.tag);
      const outsideBefore = pictureTree(corpus.outside);
      for (const step of seq.steps(corpus)) {
        const res = await tokcap([...step.args, '--lock-wait', '1s'], { timeoutMs: TIMEOUT_MS });
        exits.push(`${seq.tag}/${step.label}=${res.code}`);
        problems.push(
          ...checkRun(`${seq.tag}: ${step.label}`, res, { json: step.json, names: [...corpus.ids, corpus.store] }),
        );
        problems.push(...checkContainment(`${seq.tag}: ${step.label}`, corpus, outsideBefore));
      }
      // The healthy rollout was processed despite its neighbours (the sequence ends with delete).
      if (seq.tag === 'retire' && !existsSync(join(corpus.store, 'healthy.tokens.state.json')))
        problems.push('retire: the healthy rollout has no fence');
    });
    console.log(`[hostile] mutating exits: ${exits.join(' ')}`);
    expect(problems).toEqual([]);
  }, 300_000);

  it(`unreadable files (chmod 000) are reported, not fatal${IS_ROOT ? ' (as uid 65534)' : ''}`, async () => {
    const corpus = newCorpus('unreadable', true);
    const base = join(corpus.store, '..');
    const runAs: RunOptions = IS_ROOT ? { uid: NOBODY, gid: NOBODY, env: { HOME: '/tmp' } } : {};
    if (IS_ROOT) {
      chmodSync(base, 0o755);
      chmodSync(corpus.store, 0o777);
    }
    const outsideBefore = pictureTree(corpus.outside);
    const problems: string[] = [];
    const exits: string[] = [];
    const unreadIds = corpus.ids.filter((id) => id.startsWith('unread-'));
    const ids = [...unreadIds, 'healthy'];
    const steps = [
      { label: 'inspect', args: ['inspect', corpus.store], json: false },
      { label: 'inspect --deep --json', args: ['inspect', corpus.store, '--deep', '--json'], json: true },
      { label: 'verify-digests', args: ['verify-digests', corpus.store, '--json'], json: true },
      { label: 'build preview', args: ['build', corpus.store, ...ids, '--json'], json: true },
      { label: 'freeze', args: ['freeze', corpus.store, ...ids, '--json'], json: true },
      { label: 'retire', args: ['retire', corpus.store, ...ids, '--json'], json: true },
      { label: 'sweep', args: ['sweep', corpus.store, '--older-than', '0s', '--json'], json: true },
      { label: 'delete', args: ['delete', corpus.store, ...ids, '--json'], json: true },
    ];
    for (const step of steps) {
      const res = await tokcap([...step.args, '--lock-wait', '1s'], { timeoutMs: TIMEOUT_MS, ...runAs });
      exits.push(`${step.label}=${res.code}`);
      problems.push(
        ...checkRun(`unreadable: ${step.label}`, res, { json: step.json, names: [...corpus.ids, corpus.store] }),
      );
      problems.push(...checkContainment(`unreadable: ${step.label}`, corpus, outsideBefore));
    }
    console.log(`[hostile] unreadable exits: ${exits.join(' ')}`);
    expect(problems).toEqual([]);
  }, 180_000);

  it('a DIR that is a file, missing or a FIFO, and hostile ids: exit 2 or 3, nothing created', async () => {
    const base = tempBase('hostile-dir');
    const file = join(base, 'plain-file');
    writeFileSync(file, 'not a directory\n');
    const fifo = join(base, 'a-fifo');
    execFileSync('mkfifo', [fifo]);
    const missing = join(base, 'missing');
    const store = join(base, 'store');
    mkdirSync(store);
    mkdirSync(join(base, 'out'));
    const w = await py([
      store,
      'writer',
      '--rollouts',
      'ok',
      '--seconds',
      '0.2',
      '--seed',
      '3',
      '--log',
      join(base, 'log'),
    ]);
    expect(w.code).toBe(0);
    const problems: string[] = [];
    const commands = (dir: string, ids: string[]): string[][] => [
      ['inspect', dir, ...ids],
      ['verify-digests', dir, ...ids, '--json'],
      ['freeze', dir, ...ids, '--json'],
      ['build', dir, ...ids, '--freeze', '--json'],
      ['build', dir, ...ids],
      ['retire', dir, ...ids],
      ['delete', dir, ...ids, '--json'],
      ['export', dir, ...ids, '--out', join(base, 'out', 'must-not-exist.jsonl')],
      ...(ids.length === 1 ? [['retire', dir, ids[0], '--snapshot-id', FAKE_SID, '--version', '1']] : []),
    ];
    const jobs: { label: string; args: string[]; codes: number[]; names: string[] }[] = [];
    for (const dir of [file, fifo, missing]) {
      for (const args of [...commands(dir, ['ok']), ['sweep', dir, '--older-than', '0s']]) {
        jobs.push({
          label: `${args[0]} on ${dir.slice(base.length + 1)}`,
          args: [...args, '--lock-wait', '1s'],
          codes: [2, 3],
          names: [dir],
        });
      }
    }
    const longId = 'L'.repeat(10_000);
    const hostileIds: { ids: string[]; codes: number[] }[] = [
      { ids: ['../x'], codes: [2] },
      { ids: ['a/b'], codes: [2] },
      { ids: [''], codes: [2] },
      { ids: ['ok', 'bad id\n'], codes: [2] },
      { ids: ['x'.repeat(9_999) + '/'], codes: [2] },
      { ids: [longId], codes: [0, 1, 3] },
      { ids: ['-rf'], codes: [0, 1, 3] },
    ];
    for (const { ids, codes } of hostileIds) {
      // Options first, then `--`, so that no id is taken for an option.
      const withIds = (cmd: string, opts: string[]) => [cmd, store, ...opts, '--lock-wait', '1s', '--', ...ids];
      const perCommand: { args: string[]; codes: number[] }[] = [
        { args: withIds('inspect', []), codes },
        { args: withIds('verify-digests', ['--json']), codes },
        { args: withIds('freeze', ['--json']), codes },
        // build reports an invalid id as that rollout's failed build (docs/cli.md#invocation), not a usage error.
        // (With a valid id beside an invalid one, build --freeze rightly freezes the valid one.)
        ...(ids.includes('ok') ? [] : [{ args: withIds('build', ['--freeze', '--json']), codes: [0, 1, 2, 3] }]),
        { args: withIds('build', []), codes: [0, 1, 2, 3] },
        { args: withIds('retire', []), codes },
        { args: withIds('delete', ['--json']), codes },
        { args: withIds('export', ['--out', join(base, 'out', `x${jobs.length}.jsonl`)]), codes: [0, 1, 2, 3] },
        ...(ids.length === 1
          ? [{ args: withIds('retire', ['--snapshot-id', FAKE_SID, '--version', '1']), codes }]
          : []),
      ];
      for (const { args, codes: okCodes } of perCommand) {
        jobs.push({
          label: `${args[0]} ${args.slice(2, args.indexOf('--lock-wait')).join(' ')} ${JSON.stringify(ids.map((i) => (i.length > 20 ? `${i.slice(0, 8)}…(${i.length})` : i)))}`,
          args,
          codes: okCodes,
          names: [
            store,
            ...ids.filter((i) => i !== '').map((i) => i.slice(0, 50)),
            'Invalid rollout id',
            'invalid rollout id',
          ],
        });
      }
    }
    const storeBefore = pictureTree(store);
    const baseBefore = Object.keys(pictureTree(base))
      .filter((k) => !k.startsWith('store') && !k.startsWith('out/'))
      .sort();
    await runAll(jobs, 3, async (job) => {
      const res = await tokcap(job.args, { timeoutMs: TIMEOUT_MS });
      problems.push(...checkRun(job.label, res, { json: false, names: job.names, codes: job.codes, maxId: 10_000 }));
    });
    const storeAfter = pictureTree(store);
    for (const k of new Set([...Object.keys(storeBefore), ...Object.keys(storeAfter)])) {
      // Only lock files may appear (a 10,000-character id is valid, but its lock file name is too long to create).
      // ('-rf' is a valid id: freezing or retiring it creates its state.)
      if (storeBefore[k] !== storeAfter[k] && !k.endsWith('.tokens.lock') && !k.startsWith('-rf.'))
        problems.push(`store/${k} changed: ${storeBefore[k]} -> ${storeAfter[k]}`);
    }
    const baseAfter = Object.keys(pictureTree(base))
      .filter((k) => !k.startsWith('store') && !k.startsWith('out/'))
      .sort();
    expect(baseAfter).toEqual(baseBefore);
    // An export on a DIR that is not a directory wrote nothing (exports with valid ids did).
    expect(existsSync(join(base, 'out', 'must-not-exist.jsonl'))).toBe(false);
    expect(problems).toEqual([]);
  }, 300_000);
});
