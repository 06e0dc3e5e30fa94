/**
 * The fault matrix (test/faults/fault-matrix.test.ts): a tiny store (one rollout `good` that
 * takes the fault, one healthy `ok`), the faults placed into it one at a time, the commands run
 * against it through the built binary, and the contract's invariants (docs/cli.md#faults) read
 * from what they print.
 *
 * Generated, not listed: every file kind crossed with every fault that applies to it, crossed
 * with every command and output form. A fault is a function of a path; a command is its argv
 * and a reader of its output into the answers it gives about `good`.
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  holdLock,
  pictureTree,
  py,
  startProcess,
  tokcap,
  type RunOptions,
  type SpawnRun,
  type Spawned,
} from './reliability.js';

export const KINDS = ['records', 'state', 'intents', 'markers', 'lock', 'dir'] as const;
export type Kind = (typeof KINDS)[number];

export const FAULTS = [
  'absent',
  'empty',
  'unreadable',
  'fifo',
  'directory',
  'symlink-inside',
  'symlink-outside',
  'corrupt',
  'invalid-utf8',
  'torn-tail',
  'huge-line',
  'lock-held',
  'lock-held-append',
  'full-disk',
  'read-only',
] as const;
export type Fault = (typeof FAULTS)[number];

const SUFFIX: Record<Exclude<Kind, 'dir'>, string> = {
  records: '.tokens.jsonl',
  state: '.tokens.state.json',
  intents: '.tokens.intents',
  markers: '.tokens.incomplete',
  lock: '.tokens.lock',
};

const FILE_KINDS = ['records', 'state', 'intents', 'markers'] as const;

/** Which faults apply to which kind: the rest of the product has no meaning (a torn lock file). */
export function applies(kind: Kind, fault: Fault): boolean {
  switch (fault) {
    case 'absent':
    case 'empty':
    case 'corrupt':
    case 'invalid-utf8':
    case 'symlink-inside':
      return (FILE_KINDS as readonly Kind[]).includes(kind);
    case 'unreadable':
    case 'fifo':
    case 'directory':
    case 'symlink-outside':
      return kind !== 'dir' || fault === 'unreadable';
    case 'torn-tail':
      return kind === 'records' || kind === 'intents';
    case 'huge-line':
      return kind === 'records';
    case 'lock-held':
    case 'lock-held-append':
      return kind === 'lock';
    case 'full-disk':
    case 'read-only':
      return kind === 'dir';
  }
}

/**
 * Faults after which `good` could not be read (docs/cli.md#faults): a file it needs is not a
 * regular file, cannot be opened, is a symbolic link, or J's unindexed tail sits under a held lock.
 */
export function unreadFault(kind: Kind, fault: Fault): boolean {
  if (kind === 'lock') return fault === 'lock-held-append';
  if (kind === 'dir') return false;
  return ['unreadable', 'fifo', 'directory', 'symlink-inside', 'symlink-outside'].includes(fault);
}

/** Faults after which `good`'s records (not its status) could not be read: the verdict is unavailable. */
export function recordsUnreadFault(kind: Kind, fault: Fault): boolean {
  if (unreadFault(kind, fault)) return true;
  return kind === 'lock' && ['lock-held', 'unreadable', 'fifo', 'directory'].includes(fault);
}

export const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;
/** Commands run as nobody when the tests run as root (root reads a chmod-000 file). */
export const RUN_AS: RunOptions = IS_ROOT ? { uid: NOBODY, gid: NOBODY, env: { HOME: '/tmp' } } : {};
export const LOCK_WAIT_S = 1;

const PY_DIGEST = (ids: number[]) => py(['digest', JSON.stringify(ids)]);

function entryJson(rollout: string, callId: string, digest: string): string {
  return JSON.stringify({
    schema_version: 5,
    rollout_id: rollout,
    model_call_id: callId,
    prompt_token_ids: [1, 2, 3],
    generation_token_ids: [4, 5],
    generation_log_probs: [-0.5, -0.5],
    created_at: 1700000000.5,
    parent_call_id: null,
    parent_resolution: 'root',
    cum_len: 5,
    digest,
  });
}

export interface Template {
  dir: string;
  /** A valid, canonical entry line of `good` not in J (for a holder's unindexed append). */
  extraLine: string;
}

/** `good` and `ok`, each one call written by the reference writer (python), live and indexed. */
export async function makeTemplate(base: string): Promise<Template> {
  const dir = join(base, 'template');
  mkdirSync(dir);
  const d = JSON.parse((await PY_DIGEST([1, 2, 3, 4, 5])).stdout) as { digest: string };
  for (const r of ['good', 'ok']) {
    for (const [args, what] of [
      [[dir, 'begin_call', r, 'c1'], 'begin_call'],
      [[dir, 'append', entryJson(r, 'c1', d.digest)], 'append'],
    ] as const) {
      const res = await py([...args]);
      if (res.code !== 0) throw new Error(`python ${what}: ${res.stdout}${res.stderr}`);
    }
  }
  const canon = await py(['canonical_entry', entryJson('good', 'c2', d.digest)]);
  return { dir, extraLine: canon.stdout };
}

/** One faulted store: DIR, the sibling `outside/`, and what must be undone afterwards. */
export interface FaultedStore {
  base: string;
  dir: string;
  outside: string;
  holder?: SpawnRun;
  mounted: boolean;
}

function chownTree(path: string): void {
  if (IS_ROOT) execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, path]);
}

/** A copy of the template in `base/store` with `fault` placed on `kind` of rollout `good`. */
export async function faultedStore(template: Template, base: string, kind: Kind, fault: Fault): Promise<FaultedStore> {
  mkdirSync(base, { recursive: true });
  if (IS_ROOT) chmodSync(base, 0o777);
  const dir = join(base, 'store');
  const outside = join(base, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'keep'), 'outside DIR: nothing may change here\n');
  const store: FaultedStore = { base, dir, outside, mounted: false };
  mkdirSync(dir);
  if (kind === 'dir' && fault === 'full-disk') {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0777', 'tmpfs', dir]);
    store.mounted = true;
  }
  for (const name of readdirSync(template.dir)) cpSync(join(template.dir, name), join(dir, name));
  chownTree(base);
  const path = kind === 'dir' ? dir : join(dir, `good${SUFFIX[kind]}`);
  switch (fault) {
    case 'absent':
      rmSync(path, { force: true });
      break;
    case 'empty':
      writeFileSync(path, '');
      break;
    case 'unreadable':
      if (!existsSync(path)) writeFileSync(path, kind === 'markers' ? 'c1\n' : '');
      chownTree(path);
      chmodSync(path, 0);
      break;
    case 'fifo':
      rmSync(path, { force: true });
      execFileSync('mkfifo', [path]);
      chownTree(path);
      break;
    case 'directory':
      rmSync(path, { force: true });
      mkdirSync(path);
      chownTree(path);
      break;
    case 'symlink-inside': {
      if (!existsSync(path)) writeFileSync(path, 'c1\n');
      const target = `good-target${SUFFIX[kind as Exclude<Kind, 'dir'>]}.orig`;
      renameSync(path, join(dir, target));
      symlinkSync(target, path);
      break;
    }
    case 'symlink-outside': {
      const target = join(outside, `good${SUFFIX[kind as Exclude<Kind, 'dir'>]}`);
      if (existsSync(path)) renameSync(path, target);
      else writeFileSync(target, kind === 'markers' ? 'c1\n' : '');
      chownTree(target);
      symlinkSync(target, path);
      break;
    }
    case 'corrupt':
      if (kind === 'state') writeFileSync(path, '{"frozen":tru\n');
      else if (kind === 'records') appendFileSync(path, '{"not":"an entry"}\n');
      else appendFileSync(path, Buffer.from([0x00, 0x01, 0x7f, 0x0a]));
      break;
    case 'invalid-utf8':
      if (kind === 'state')
        writeFileSync(
          path,
          Buffer.concat([Buffer.from('{"snapshot_id":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]),
        );
      else appendFileSync(path, Buffer.from([0xff, 0xfe, 0x0a]));
      break;
    case 'torn-tail':
      appendFileSync(path, kind === 'records' ? '{"schema_version":5,"rollout_id":"go' : 'c9');
      break;
    case 'huge-line':
      // A torn tail of digits: what damaged bytes cost must be what reading them costs.
      appendFileSync(path, '{"a":' + '1'.repeat(2 * 1024 * 1024));
      break;
    case 'lock-held':
      store.holder = await holdLock(dir, 'good', 'ex', 3600);
      break;
    case 'lock-held-append':
      store.holder = await holdWithAppend(dir, template.extraLine);
      break;
    case 'full-disk':
      fill(dir);
      break;
    case 'read-only':
      chmodSync(dir, 0o555);
      break;
  }
  return store;
}

/** Fills a tmpfs up to its last byte (ENOSPC). */
function fill(dir: string): void {
  const filler = join(dir, 'filler.bin');
  const chunk = Buffer.alloc(1024, 0x2e);
  for (let size = 1024; size >= 1; size = Math.floor(size / 2)) {
    for (;;) {
      try {
        appendFileSync(filler, chunk.subarray(0, size));
      } catch {
        break;
      }
    }
  }
}

/** A python process that holds good's lock after appending one line it never indexes. */
async function holdWithAppend(dir: string, line: string): Promise<SpawnRun> {
  const script = [
    'import fcntl, os, sys, time',
    'fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)',
    'fcntl.flock(fd, fcntl.LOCK_EX)',
    "with open(sys.argv[2], 'ab') as f:",
    '    f.write(sys.argv[3].encode())',
    '    f.flush(); os.fsync(f.fileno())',
    "print('locked', flush=True)",
    'time.sleep(300)',
  ].join('\n');
  const run = startProcess(
    'python3',
    ['-c', script, join(dir, 'good.tokens.lock'), join(dir, 'good.tokens.jsonl'), line],
    { timeoutMs: 330_000 },
  );
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    run.child.stdout?.on('data', (b: Buffer) => {
      buf += b.toString();
      if (buf.includes('locked')) resolve();
    });
    void run.done.then((r) => reject(new Error(`holder exited early: ${r.code} ${r.stderr}`)));
  });
  return run;
}

export async function releaseStore(s: FaultedStore): Promise<void> {
  if (s.holder) {
    s.holder.child.kill('SIGKILL');
    await s.holder.done;
  }
  if (IS_ROOT) execFileSync('chmod', ['-R', 'u+rwx', s.base]);
  else chmodSync(s.dir, 0o755);
  if (s.mounted) execFileSync('umount', ['-l', s.dir]);
  rmSync(s.base, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// Commands and what they say about `good`
// ---------------------------------------------------------------------------------------------

/** What one command said about `good` (absent: it did not say). */
export interface Answer {
  status?: string;
  conditions?: string[];
  verdict?: string;
  /** Said that it was counted trainable / verified / exported / ok. */
  countedTrainable?: boolean;
  countedVerified?: boolean;
  exported?: boolean;
  /** verify-digests' `ok`. */
  okClaimed?: boolean;
  /** The version a text row shows (`-` when unknown). */
  version?: string | number | null;
  /** Values it printed that it could not have read (made up). */
  madeUp?: string[];
}

export interface CommandForm {
  name: string;
  /** Changes the store: run on a fresh copy; otherwise the store must not change. */
  writes: boolean;
  /** Needs the records of `good` (a build, the digests, an export, --deep, DIR ID). */
  needsRecords: boolean;
  /** Needs only the summary's read (status). */
  args(dir: string, out: string): string[];
  read(res: Spawned, out: string): Promise<Answer> | Answer;
}

const JSON_ARGS = ['--json'];

function parseJson<T>(s: string): T | undefined {
  try {
    return JSON.parse(s) as T;
  } catch {
    return undefined;
  }
}

interface StatusJson {
  status?: string;
  conditions?: string[];
  verdict?: string | null;
  calls?: number | null;
  version?: number | null;
  dangling_intents?: string[] | null;
  error?: unknown;
  errors?: { file: string; kind: string }[];
}

/** A right-aligned column's value in a text table row (the header word's end is the value's end). */
export function columnValue(header: string, row: string, word: string): string | undefined {
  const at = header.indexOf(word);
  if (at < 0) return undefined;
  const end = at + word.length;
  const before = row.slice(0, end).trimEnd();
  if (before.length < end - word.length) return '';
  return before.split(/\s+/).pop();
}

export const COMMANDS: CommandForm[] = [
  {
    name: 'inspect',
    writes: false,
    needsRecords: false,
    args: (dir) => ['inspect', dir],
    read: (res) => {
      const lines = res.stdout.split('\n');
      const header = lines.find((l) => l.startsWith('rollout '));
      const row = lines.find((l) => l.startsWith('good '));
      if (!header || !row) return {};
      const status = row.split(/\s+/)[1];
      const madeUp: string[] = [];
      const version = columnValue(header, row, 'version');
      const calls = columnValue(header, row, 'calls');
      if (status === 'unavailable') {
        if (version !== '-') madeUp.push(`version ${version}`);
        if (calls !== '-') madeUp.push(`calls ${calls}`);
      }
      return { status, madeUp, version };
    },
  },
  {
    name: 'inspect --json',
    writes: false,
    needsRecords: false,
    args: (dir) => ['inspect', dir, ...JSON_ARGS],
    read: (res) => factsAnswer(parseJson<{ rollouts: Record<string, StatusJson> }>(res.stdout)?.rollouts.good),
  },
  {
    name: 'inspect DIR ID --json',
    writes: false,
    needsRecords: true,
    args: (dir) => ['inspect', dir, 'good', ...JSON_ARGS],
    read: (res) => factsAnswer(parseJson<{ rollouts: Record<string, StatusJson> }>(res.stdout)?.rollouts.good),
  },
  {
    name: 'inspect --deep --json',
    writes: false,
    needsRecords: true,
    args: (dir) => ['inspect', dir, '--deep', ...JSON_ARGS],
    // --deep may find `corrupt` inside the index: its conditions are not compared.
    read: (res) => {
      const a = factsAnswer(parseJson<{ rollouts: Record<string, StatusJson> }>(res.stdout)?.rollouts.good);
      delete a.conditions;
      return a;
    },
  },
  {
    name: 'build',
    writes: false,
    needsRecords: true,
    args: (dir) => ['build', dir],
    read: (res) => {
      const row = res.stdout.split('\n').find((l) => l.startsWith('good '));
      const m = /verdicts: (\d+) trainable\s+(\d+) masked\s+(\d+) could not be read/.exec(res.stdout);
      const words = row?.split(/\s+/) ?? [];
      const verdict = words[1] === 'could' ? 'unavailable' : words[1];
      const a: Answer = { verdict };
      if (words[1] !== 'could' && words[2]) a.status = words[2];
      // `ok` is trainable; a second trainable count is `good`.
      if (m) a.countedTrainable = Number(m[1]) > 1;
      return a;
    },
  },
  {
    name: 'build --json',
    writes: false,
    needsRecords: true,
    args: (dir) => ['build', dir, ...JSON_ARGS],
    read: (res) => {
      const r = parseJson<(StatusJson & { rollout_id: string })[]>(res.stdout)?.find((x) => x.rollout_id === 'good');
      return r
        ? {
            status: r.status,
            conditions: r.conditions,
            verdict: r.verdict ?? undefined,
            countedTrainable: r.verdict === 'trainable',
          }
        : {};
    },
  },
  {
    name: 'build --fail-on-mask -q',
    writes: false,
    needsRecords: true,
    args: (dir) => ['build', dir, '--fail-on-mask', '-q'],
    read: (res) => ({ countedTrainable: res.code === 0 }),
  },
  {
    name: 'verify-digests --json',
    writes: false,
    needsRecords: true,
    args: (dir) => ['verify-digests', dir, ...JSON_ARGS],
    read: (res) => {
      const v = parseJson<{ ok: boolean; unchecked?: string[] }>(res.stdout);
      if (!v) return {};
      return { countedVerified: !(v.unchecked ?? []).includes('good'), okClaimed: v.ok };
    },
  },
  {
    name: 'export jsonl',
    writes: false,
    needsRecords: true,
    args: (dir, out) => ['export', dir, '--out', join(out, 'e.jsonl'), ...JSON_ARGS],
    read: (_res, out) => {
      const p = join(out, 'e.jsonl');
      if (!existsSync(p)) return { exported: false };
      const lines = readFileSync(p, 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      const r = lines
        .map((l) => parseJson<StatusJson & { rollout_id: string }>(l))
        .find((x) => x?.rollout_id === 'good');
      return r
        ? { status: r.status, conditions: r.conditions, verdict: r.verdict ?? undefined, exported: true }
        : { exported: false };
    },
  },
  {
    name: 'export --trainable-only',
    writes: false,
    needsRecords: true,
    args: (dir, out) => ['export', dir, '--trainable-only', '--out', join(out, 't.jsonl'), ...JSON_ARGS],
    read: (_res, out) => {
      const p = join(out, 't.jsonl');
      if (!existsSync(p)) return { exported: false };
      const r = readFileSync(p, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => parseJson<StatusJson & { rollout_id: string }>(l))
        .find((x) => x?.rollout_id === 'good');
      return r
        ? {
            status: r.status,
            conditions: r.conditions,
            verdict: r.verdict ?? undefined,
            exported: true,
            countedTrainable: true,
          }
        : { exported: false };
    },
  },
  {
    name: 'export tinker',
    writes: false,
    needsRecords: true,
    args: (dir, out) => ['export', dir, '--format', 'tinker', '--out', join(out, 'tinker'), ...JSON_ARGS],
    read: () => ({}),
  },
  {
    name: 'export parquet',
    writes: false,
    needsRecords: true,
    args: (dir, out) => ['export', dir, '--format', 'parquet', '--out', join(out, 'pq'), ...JSON_ARGS],
    read: async (_res, out) => parquetAnswer(join(out, 'pq')),
  },
  {
    name: 'export store',
    writes: false,
    needsRecords: true,
    args: (dir, out) => ['export', dir, '--format', 'store', '--out', join(out, 'copy'), ...JSON_ARGS],
    read: (_res, out) => ({ exported: existsSync(join(out, 'copy', 'good.tokens.jsonl')) }),
  },
  {
    name: 'watch --once',
    writes: false,
    needsRecords: true,
    args: (dir) => ['watch', dir, '--once'],
    read: (res) => {
      const lines = res.stdout.split('\n');
      const header = lines.find((l) => /^\s*ROLLOUT /.test(l));
      // After the mark column (`›` selected, `•` changed in the last seconds).
      const row = lines.find((l) => /^[ ›][ •]good /.test(l));
      if (!header || !row) return {};
      const status = row.trim().split(/\s+/)[1];
      const madeUp: string[] = [];
      for (const col of ['CALLS', 'VER']) {
        const v = columnValue(header, row, col);
        if (status === 'unavailable' && v !== '-') madeUp.push(`${col} ${v}`);
      }
      return { status, madeUp, version: columnValue(header, row, 'VER') };
    },
  },
  {
    name: 'watch --once --json',
    writes: false,
    needsRecords: true,
    args: (dir) => ['watch', dir, '--once', ...JSON_ARGS],
    read: (res) => {
      const r = parseJson<{ rollouts: Record<string, StatusJson> }>(res.stdout)?.rollouts.good;
      if (!r) return {};
      const madeUp: string[] = [];
      if (r.status === 'unavailable') {
        for (const k of ['calls', 'version', 'dangling_intents'] as const)
          if (r[k] !== null && r[k] !== undefined) madeUp.push(`${k} ${JSON.stringify(r[k])}`);
      }
      return {
        status: r.status,
        conditions: r.conditions,
        verdict: r.verdict ?? undefined,
        madeUp,
        version: r.version,
      };
    },
  },
  // Commands that change the store: each on a fresh copy of the faulted store.
  {
    name: 'freeze --json',
    writes: true,
    needsRecords: true,
    args: (dir) => ['freeze', dir, 'good', ...JSON_ARGS],
    read: () => ({}),
  },
  {
    name: 'build --freeze --json',
    writes: true,
    needsRecords: true,
    args: (dir) => ['build', dir, 'good', 'ok', '--freeze', ...JSON_ARGS],
    read: () => ({}),
  },
  {
    name: 'export --freeze',
    writes: true,
    needsRecords: true,
    args: (dir, out) => ['export', dir, 'good', 'ok', '--freeze', '--out', join(out, 'f.jsonl'), ...JSON_ARGS],
    read: () => ({}),
  },
  {
    name: 'retire --json',
    writes: true,
    needsRecords: false,
    args: (dir) => ['retire', dir, 'good', 'ok', ...JSON_ARGS],
    read: () => ({}),
  },
  {
    name: 'delete --json',
    writes: true,
    needsRecords: false,
    args: (dir) => ['delete', dir, 'good', 'ok', ...JSON_ARGS],
    read: () => ({}),
  },
  {
    name: 'sweep --json',
    writes: true,
    needsRecords: false,
    args: (dir) => ['sweep', dir, '--older-than', '0s', ...JSON_ARGS],
    read: () => ({}),
  },
];

/**
 * `inspect --json`'s FACTS keep the conformance facts' fields (docs/conformance.md#facts: `version`
 * is 0 when the state is unreadable), with the state's error in `errors`: their version is not read here.
 */
function factsAnswer(j: StatusJson | undefined): Answer {
  if (!j) return {};
  return { status: j.status, conditions: j.conditions };
}

let duck: Promise<{ runAndReadAll(sql: string): Promise<{ getRowObjectsJson(): unknown[] }> }> | undefined;

async function parquetAnswer(dataset: string): Promise<Answer> {
  if (!existsSync(join(dataset, 'rollouts'))) return { exported: false };
  duck ??= import('@duckdb/node-api').then(async ({ DuckDBInstance }) =>
    (await DuckDBInstance.create(':memory:')).connect(),
  );
  const db = await duck;
  const rows = (
    await db.runAndReadAll(
      `select rollout_id, status, conditions, verdict from read_parquet('${dataset}/rollouts/*.parquet')`,
    )
  ).getRowObjectsJson() as {
    rollout_id: string;
    status: string;
    conditions: string[];
    verdict: string;
  }[];
  const r = rows.find((x) => x.rollout_id === 'good');
  return r
    ? { status: r.status, conditions: [...r.conditions], verdict: r.verdict, exported: true }
    : { exported: false };
}

export function runCommand(form: CommandForm, dir: string, out: string): Promise<Spawned> {
  return tokcap([...form.args(dir, out), '--lock-wait', `${LOCK_WAIT_S}s`], { timeoutMs: 90_000, ...RUN_AS });
}

export { pictureTree };
