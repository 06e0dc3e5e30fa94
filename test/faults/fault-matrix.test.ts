/**
 * The fault matrix: every file kind of a rollout (records J, state S, intents I, markers M, the
 * lock, the directory) crossed with every fault that applies to it (absent, empty, unreadable,
 * FIFO, directory, symlink inside and outside DIR, corrupt bytes, invalid UTF-8, torn tail,
 * huge line, lock held, lock held after an unindexed append, full disk, read-only DIR), crossed
 * with every command and output form (test/support/fault-matrix.ts), through the built binary,
 * with a real python3 process as the lock holder. The store is tiny: `good` takes the fault,
 * `ok` stays healthy. Commands run as nobody (65534) when the tests run as root, so that
 * chmod 000 means something.
 *
 * Invariants (docs/cli.md#faults):
 *  1. every command gives `good` the same status, conditions and verdict;
 *  2. a rollout that could not be read is never counted trainable, verified, exported or ok, and
 *     every command that needed it exits 3;
 *  3. no number is made up: unknown is absent or null in JSON, `-` in text;
 *  4. nothing outside the store changes; read-only commands change nothing inside it;
 *  5. a write completes and says so, refuses before writing, or reports exactly what it wrote
 *     (a freeze that froze names its snapshot and version);
 *  6. exit codes follow the table (0, 1 or 3 here; a corrupt file is 3, a finding of
 *     verify-digests 1), stderr is one-line `tokcap:` messages, --json prints one document;
 *  7. no command waits longer than its lock waits plus reading the bytes: each returns long
 *     before a lock holder lets go.
 */
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/cli-binary.js';
import {
  COMMANDS,
  FAULTS,
  IS_ROOT,
  KINDS,
  LOCK_WAIT_S,
  applies,
  faultedStore,
  makeTemplate,
  pictureTree,
  recordsUnreadFault,
  releaseStore,
  runCommand,
  unreadFault,
  type Answer,
  type CommandForm,
  type Fault,
  type Kind,
  type Template,
} from '../support/fault-matrix.js';
import { stderrProblems, tempBase, type Spawned } from '../support/reliability.js';

/** Processes at once: most of a cell's time is process start-up and waiting on a lock. */
const WIDTH = 8;
/** Two rollouts, one lock wait each at most, plus reading a tiny store on a loaded machine. */
const MAX_SECONDS = 2 * LOCK_WAIT_S + 40;

/** `TOKCAP_FAULTS=REGEX` runs only the faults whose `kind fault` matches (while working on one). */
const only = new RegExp(process.env.TOKCAP_FAULTS ?? '');
const scenarios: { kind: Kind; fault: Fault }[] = [];
for (const kind of KINDS) {
  for (const fault of FAULTS) {
    // A tmpfs needs root to mount.
    if (applies(kind, fault) && (fault !== 'full-disk' || IS_ROOT) && only.test(`${kind} ${fault}`))
      scenarios.push({ kind, fault });
  }
}
const READERS = COMMANDS.filter((c) => !c.writes);
const WRITERS = COMMANDS.filter((c) => c.writes);

let root: string;
let template: Template;
let started = 0;

beforeAll(async () => {
  ensureBuilt();
  root = tempBase('fault-matrix');
  // Traversable by nobody (mkdtemp makes it 0700).
  chmodSync(root, 0o755);
  template = await makeTemplate(root);
  started = Date.now();
  console.log(
    `[fault-matrix] ${scenarios.length} faults x ${COMMANDS.length} command forms = ${scenarios.length * COMMANDS.length} cells${IS_ROOT ? '' : ' (not root: no full-disk cell)'}`,
  );
});

afterAll(() => {
  console.log(`[fault-matrix] ran in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

async function pool<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: WIDTH }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

interface Run {
  form: CommandForm;
  res: Spawned;
  answer: Answer;
  before?: Record<string, string>;
  after?: Record<string, string>;
  /** The fault is on DIR itself and leaves it unlistable. */
  dirFailed?: boolean;
}

function runProblems(run: Run): string[] {
  const { form, res } = run;
  const p: string[] = [];
  if (res.timedOut || res.signal !== null || res.code === null)
    return [`${form.name}: did not finish (${res.signal ?? 'timeout'})`];
  if (![0, 1, 3].includes(res.code)) p.push(`${form.name}: exit ${res.code}: ${res.stderr.trim().slice(0, 200)}`);
  for (const s of stderrProblems(res.stderr)) p.push(`${form.name}: ${s}`);
  // A DIR that cannot be listed fails the command as a whole: its one error line, no document.
  if (form.args('D', 'O').includes('--json') && !(run.dirFailed && res.code === 3)) {
    try {
      JSON.parse(res.stdout);
    } catch {
      p.push(`${form.name}: --json printed no JSON document`);
    }
  }
  const seconds = res.end - res.start;
  if (seconds > MAX_SECONDS)
    p.push(`${form.name}: returned after ${seconds.toFixed(1)} s (lock wait ${LOCK_WAIT_S} s)`);
  return p;
}

function same<T>(label: string, values: [string, T | undefined][]): string[] {
  const known = values.filter(([, v]) => v !== undefined) as [string, T][];
  const first = known[0];
  if (!first) return [];
  const differ = known.filter(([, v]) => JSON.stringify(v) !== JSON.stringify(first[1]));
  return differ.length === 0
    ? []
    : [`${label} differs: ${known.map(([n, v]) => `${n}=${JSON.stringify(v)}`).join(', ')}`];
}

/** Invariants 1-3 and 6 over the read-only commands' answers. */
function readerProblems(kind: Kind, fault: Fault, runs: Run[]): string[] {
  const p: string[] = [];
  const by = (name: string) => runs.find((r) => r.form.name === name)!;
  if (kind === 'dir' && fault === 'unreadable') {
    for (const r of runs) if (r.res.code !== 3) p.push(`${r.form.name}: exit ${r.res.code} on an unreadable DIR`);
    return p;
  }
  p.push(
    ...same(
      'status',
      runs.map((r) => [r.form.name, r.answer.status]),
    ),
  );
  p.push(
    ...same(
      'conditions',
      runs.map((r) => [r.form.name, r.answer.conditions]),
    ),
  );
  p.push(
    ...same(
      'verdict',
      runs.map((r) => [r.form.name, r.answer.verdict]),
    ),
  );
  const status = runs.map((r) => r.answer.status).find((s) => s !== undefined);
  const verdict = runs.map((r) => r.answer.verdict).find((v) => v !== undefined);
  if (unreadFault(kind, fault) && status !== 'unavailable')
    p.push(`status ${status}: the fault leaves good unread (unavailable)`);
  if (recordsUnreadFault(kind, fault) && verdict !== 'unavailable')
    p.push(`verdict ${verdict}: good's records could not be read (unavailable)`);
  if (status === 'unavailable' && verdict !== undefined && verdict !== 'unavailable')
    p.push(`status unavailable with verdict ${verdict}`);
  const unread = status === 'unavailable' || verdict === 'unavailable';
  for (const r of runs) {
    for (const m of r.answer.madeUp ?? []) p.push(`${r.form.name}: made up ${m}`);
    if (!unread) continue;
    if (r.answer.countedTrainable) p.push(`${r.form.name}: counted the unread rollout trainable`);
    if (r.answer.countedVerified) p.push(`${r.form.name}: counted the unread rollout verified`);
    if (r.answer.okClaimed) p.push(`${r.form.name}: said ok with an unread rollout`);
    if (r.answer.exported) p.push(`${r.form.name}: exported the unread rollout`);
    const needed = r.form.needsRecords || status === 'unavailable';
    if (needed && r.res.code !== 3) p.push(`${r.form.name}: exit ${r.res.code} with an unread rollout (3 expected)`);
  }
  // A value the state did not give is not a number (a corrupt state has no version).
  const stateBroken = kind === 'state' && ['corrupt', 'invalid-utf8'].includes(fault);
  if (stateBroken) {
    for (const r of runs) {
      const v = r.answer.version;
      if (v !== undefined && v !== null && v !== '-')
        p.push(`${r.form.name}: version ${v} of a state that could not be parsed`);
    }
  }
  // A corrupt file is exit 3; for verify-digests a finding (1) or unread (3).
  const corrupt = by('inspect --json').answer.conditions?.includes('corrupt');
  if (corrupt) {
    for (const r of runs) {
      if (r.form.name.startsWith('verify-digests')) {
        // The digests' findings cover the state and the records, not the intents or markers.
        if (r.res.code === 0 && (kind === 'state' || kind === 'records'))
          p.push(`${r.form.name}: exit 0 with a corrupt file`);
      } else if (
        r.form.name.startsWith('inspect') ||
        r.form.name.startsWith('build') ||
        r.form.name.startsWith('watch')
      ) {
        if (r.res.code !== 3) p.push(`${r.form.name}: exit ${r.res.code} with a corrupt file (3 expected)`);
      }
    }
  }
  return p;
}

function stateOf(picture: Record<string, string> | undefined, dir: string, path: string): string | undefined {
  void dir;
  return picture?.[path];
}

/** Invariant 5 for one command that changes the store. */
function writerProblems(kind: Kind, fault: Fault, run: Run, dir: string): string[] {
  const p: string[] = [];
  const { form, res, before, after } = run;
  const changed = JSON.stringify(before) !== JSON.stringify(after);
  const out = res.stdout + res.stderr;
  const freezes = /freeze/.test(form.name);
  const goodState = 'good.tokens.state.json';
  const stateChanged = stateOf(before, dir, goodState) !== stateOf(after, dir, goodState);
  if (freezes && stateChanged && res.code !== 0) {
    // The freeze wrote before it failed: the output says what it wrote.
    let written: { snapshot_id?: string; version?: number } | undefined;
    try {
      written = JSON.parse(readFileSync(join(dir, goodState), 'utf8')) as { snapshot_id?: string; version?: number };
    } catch {
      written = undefined;
    }
    if (written?.snapshot_id && !out.includes(written.snapshot_id))
      p.push(`${form.name}: exit ${res.code}, froze good (snapshot ${written.snapshot_id}) without saying so`);
  }
  // What can be known before writing is refused before writing: a file the freeze reads that is
  // not a regular file or cannot be opened.
  const knowable =
    ['records', 'state', 'intents'].includes(kind) &&
    ['unreadable', 'fifo', 'directory', 'symlink-inside', 'symlink-outside'].includes(fault);
  if (freezes && knowable && stateChanged)
    p.push(`${form.name}: rewrote good's state although its ${kind} could not be read (refuse before writing)`);
  if (
    !changed &&
    res.code === 0 &&
    kind === 'dir' &&
    (fault === 'read-only' || fault === 'full-disk') &&
    form.name !== 'sweep --json'
  ) {
    p.push(`${form.name}: exit 0 on a store it could not write, nothing changed`);
  }
  return p;
}

describe(`fault matrix (${scenarios.length} faults x ${COMMANDS.length} command forms)`, () => {
  for (const { kind, fault } of scenarios) {
    it(`${kind} ${fault}`, async () => {
      const cellBase = join(root, `${kind}-${fault}`);
      mkdirSync(cellBase);
      chmodSync(cellBase, 0o755);
      const problems: string[] = [];
      // Read-only commands, all on one faulted store that must not change.
      const store = await faultedStore(template, join(cellBase, 'readers'), kind, fault);
      const runs: Run[] = [];
      try {
        const before = pictureTree(store.base);
        await pool(READERS, async (form) => {
          const out = join(store.base, 'out', form.name.replace(/[^a-z]+/gi, '-'));
          mkdirSync(out, { recursive: true });
          chmodSync(join(store.base, 'out'), 0o777);
          chmodSync(out, 0o777);
          const res = await runCommand(form, store.dir, out);
          runs.push({
            form,
            res,
            answer: await form.read(res, out),
            dirFailed: kind === 'dir' && fault === 'unreadable',
          });
        });
        const after = pictureTree(store.base);
        const changed = Object.keys({ ...before, ...after }).filter(
          (k) => !k.startsWith('out') && before[k] !== after[k],
        );
        if (changed.length > 0) problems.push(`read-only commands changed ${changed.join(', ')}`);
      } finally {
        await releaseStore(store);
      }
      runs.sort((a, b) => READERS.indexOf(a.form) - READERS.indexOf(b.form));
      for (const r of runs) problems.push(...runProblems(r));
      problems.push(...readerProblems(kind, fault, runs));
      // Commands that change the store, each on its own copy.
      await pool(WRITERS, async (form) => {
        const s = await faultedStore(template, join(cellBase, form.name.replace(/[^a-z]+/gi, '-')), kind, fault);
        try {
          const outsideBefore = pictureTree(s.outside);
          const out = join(s.base, 'out');
          mkdirSync(out);
          chmodSync(out, 0o777);
          const before = safePicture(s.dir);
          const res = await runCommand(form, s.dir, out);
          const run: Run = {
            form,
            res,
            answer: {},
            before,
            after: safePicture(s.dir),
            dirFailed: kind === 'dir' && fault === 'unreadable',
          };
          problems.push(...runProblems(run));
          problems.push(...writerProblems(kind, fault, run, s.dir));
          if (JSON.stringify(pictureTree(s.outside)) !== JSON.stringify(outsideBefore))
            problems.push(`${form.name}: changed a file outside DIR`);
        } finally {
          await releaseStore(s);
        }
      });
      const summary = runs.map((r) => `${r.form.name}=${r.res.code}`).join(' ');
      expect(problems, `${kind} ${fault}: ${summary}`).toEqual([]);
    }, 240_000);
  }
});

function safePicture(dir: string): Record<string, string> {
  try {
    return pictureTree(dir);
  } catch (e) {
    return { error: String(e) };
  }
}
