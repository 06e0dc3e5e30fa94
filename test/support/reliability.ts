/**
 * Shared machinery of the reliability suites (test/reliability/**): spawning the built binary and
 * the stdlib Python peer with hard timeouts, bounded vs torture sizing, directory pictures, and
 * the store invariants every suite checks after it has done its damage.
 *
 * Everything here runs real processes: tokcap through `bin/tokcap.js` (the built dist/), writers
 * and lock holders through `test/support/py_store.py`.
 */
import { mulberry32 } from '../../src/fixture/prng.js';
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { projectRoot } from './conformance-corpus.js';

export const BIN = join(projectRoot, 'bin', 'tokcap.js');
export const PY_STORE = join(projectRoot, 'test', 'support', 'py_store.py');

/** `TOKCAP_TORTURE=1` (npm run torture) selects the long durations and iteration counts. */
export const TORTURE = process.env.TOKCAP_TORTURE === '1';

/** Picks the bounded (CI) or the long (torture) value; `TOKCAP_TORTURE_SCALE` shrinks the long one. */
export function sized(ci: number, torture: number): number {
  if (!TORTURE) return ci;
  const scale = Number(process.env.TOKCAP_TORTURE_SCALE ?? '1');
  return Math.max(ci, Math.round(torture * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
}

export interface Spawned {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall-clock seconds (Date.now()/1000, comparable with the Python writers' time.time()). */
  start: number;
  end: number;
  timedOut: boolean;
}

export interface SpawnRun {
  child: ChildProcess;
  done: Promise<Spawned>;
}

export interface RunOptions {
  timeoutMs?: number;
  env?: Record<string, string>;
  input?: string;
  uid?: number;
  gid?: number;
  cwd?: string;
}

/** Starts a process; `done` never rejects. A timeout kills it with SIGKILL and sets `timedOut`. */
export function startProcess(cmd: string, args: string[], opts: RunOptions = {}): SpawnRun {
  const spawnOpts: SpawnOptions = {
    cwd: opts.cwd ?? projectRoot,
    env: { ...process.env, NO_COLOR: '1', TOKCAP_DIR: '', TOKCAP_DEBUG: '', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  };
  if (opts.uid !== undefined) spawnOpts.uid = opts.uid;
  if (opts.gid !== undefined) spawnOpts.gid = opts.gid;
  const start = Date.now() / 1000;
  const child = spawn(cmd, args, spawnOpts);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on('data', (b: Buffer) => out.push(b));
  child.stderr?.on('data', (b: Buffer) => err.push(b));
  child.stdin?.on('error', () => {});
  if (opts.input !== undefined) child.stdin?.end(opts.input);
  else child.stdin?.end();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, opts.timeoutMs ?? 120_000);
  const done = new Promise<Spawned>((resolve) => {
    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        start,
        end: Date.now() / 1000,
        timedOut,
      });
    };
    child.on('close', finish);
    child.on('error', (e) => {
      err.push(Buffer.from(`spawn error: ${e.message}\n`));
      finish(null, null);
    });
  });
  return { child, done };
}

export function startTokcap(args: string[], opts: RunOptions = {}): SpawnRun {
  return startProcess(process.execPath, [BIN, ...args], opts);
}

export function tokcap(args: string[], opts: RunOptions = {}): Promise<Spawned> {
  return startTokcap(args, opts).done;
}

export function py(args: string[], opts: RunOptions = {}): Promise<Spawned> {
  return startProcess('python3', [PY_STORE, ...args], opts).done;
}

/**
 * A Python process holding R's lock (`hold DIR R ex|sh SECONDS`); resolves once it holds it. A test
 * kills it once done with it: SECONDS only bounds a run that never does, never the time a test needs.
 */
export async function holdLock(dir: string, rolloutId: string, mode: 'ex' | 'sh', seconds: number): Promise<SpawnRun> {
  const run = startProcess('python3', [PY_STORE, dir, 'hold', rolloutId, mode, String(seconds)], {
    timeoutMs: (seconds + 30) * 1000,
  });
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    const onData = (b: Buffer) => {
      buf += b.toString();
      if (buf.includes('locked')) {
        run.child.stdout?.off('data', onData);
        resolve();
      }
    };
    run.child.stdout?.on('data', onData);
    void run.done.then((r) => reject(new Error(`lock holder exited early: ${r.code} ${r.stderr}`)));
  });
  return run;
}

/**
 * Lock holders (`holdLock`) killed after each test of the file that calls this at its top level:
 * `const held = holdersKilledAfterEach();`, then `await held.lock(dir, id, 'ex', 3600)` in a test.
 */
export function holdersKilledAfterEach(): { lock: (...args: Parameters<typeof holdLock>) => Promise<SpawnRun> } {
  const runs: SpawnRun[] = [];
  afterEach(async () => {
    for (const run of runs.splice(0)) {
      run.child.kill('SIGKILL');
      await run.done;
    }
  });
  return {
    lock: async (...args) => {
      const run = await holdLock(...args);
      runs.push(run);
      return run;
    },
  };
}

/** A fresh temp base holding `store/` and a sibling `outside/` that nothing may touch. */
export function tempBase(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `tokcap-rel-${prefix}-`));
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * A recursive picture of a tree that does not follow symlinks: type, mode, size, content hash
 * (regular files), link target (symlinks). mtimes are left out on purpose for directories (a
 * listing changes them) but kept for files (a write would change them).
 */
export function pictureTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[r] = `link -> ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[r] = `dir ${st.mode.toString(8)}`;
        walk(p, r);
      } else if (st.isFile()) {
        let hash = 'unreadable';
        try {
          hash = sha256File(p);
        } catch {
          // chmod 000 as non-root: keep going with the metadata
        }
        out[r] = `file ${st.mode.toString(8)} ${st.size} ${st.mtimeMs} ${hash}`;
      } else out[r] = `other ${st.mode.toString(8)}`;
    }
  };
  walk(root, '');
  return out;
}

export const SUFFIXES = [
  '.tokens.jsonl',
  '.tokens.state.json',
  '.tokens.intents',
  '.tokens.incomplete',
  '.tokens.lock',
] as const;

export function filesOf(dir: string, id: string): { j: boolean; s: boolean; i: boolean; m: boolean; l: boolean } {
  const has = (suffix: string) => {
    try {
      lstatSync(join(dir, id + suffix));
      return true;
    } catch {
      return false;
    }
  };
  return {
    j: has('.tokens.jsonl'),
    s: has('.tokens.state.json'),
    i: has('.tokens.intents'),
    m: has('.tokens.incomplete'),
    l: has('.tokens.lock'),
  };
}

/** Rollout ids that own a state or record file (the lock file alone does not count). */
export function presentRollouts(dir: string): string[] {
  const ids = new Set<string>();
  for (const name of readdirSync(dir)) {
    for (const suffix of SUFFIXES) {
      if (suffix !== '.tokens.lock' && name.endsWith(suffix)) ids.add(name.slice(0, -suffix.length));
    }
  }
  return [...ids].sort();
}

export interface StateFile {
  retired: boolean;
  frozen: boolean;
  snapshot_id?: string;
  version?: number;
  indexed_size?: number;
  entry_digests?: Record<string, string>;
  [k: string]: unknown;
}

/** Parses `<R>.tokens.state.json` with the stdlib parser; undefined when absent; throws when it does not parse. */
export function readStateFile(dir: string, id: string): StateFile | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dir, `${id}.tokens.state.json`));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const text = bytes.toString('utf8');
  if (!text.endsWith('\n')) throw new Error(`${id}: state file without trailing LF (${bytes.length} bytes)`);
  const v = JSON.parse(text) as unknown;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${id}: state file is not an object`);
  return v as StateFile;
}

/** Call ids of the lines of J, in order (JSON.parse is enough: the suites only need the ids). */
export function jsonlCallIds(dir: string, id: string): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, `${id}.tokens.jsonl`), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { model_call_id: string }).model_call_id);
}

export function fileSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/** Every stderr line is a one-line `tokcap: ...` message, with no stack-trace line anywhere. */
export function stderrProblems(stderr: string): string[] {
  const problems: string[] = [];
  for (const line of stderr.split('\n')) {
    if (line === '') continue;
    if (!line.startsWith('tokcap: ')) problems.push(`not a tokcap one-liner: ${JSON.stringify(line.slice(0, 300))}`);
    else if (/unexpected error/.test(line)) problems.push(`unexpected error: ${line.slice(0, 300)}`);
    if (/^\s+at .+[:(]/.test(line) || /node:internal|\.js:\d+:\d+/.test(line))
      problems.push(`stack trace: ${line.slice(0, 300)}`);
  }
  return problems;
}

export function randomInt(rng: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

/** A seeded PRNG (the fixture generator's mulberry32) so a failing run can be replayed. */
export function seededRng(seed: number): () => number {
  return mulberry32(seed);
}

export function pick<T>(rng: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rng() * xs.length)];
}

export function sampleDistinct<T>(rng: () => number, xs: readonly T[], n: number): T[] {
  const copy = [...xs];
  const out: T[] = [];
  while (out.length < n && copy.length > 0) out.push(copy.splice(Math.floor(rng() * copy.length), 1)[0]);
  return out;
}

/** Lines of a writer log: every acknowledged append. */
export interface Ack {
  rollout: string;
  call: string;
  digest: string;
  t: number;
}

export function readAcks(logPath: string): Ack[] {
  let text: string;
  try {
    text = readFileSync(logPath, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Ack);
}

export function parseJsonOut<T>(s: Spawned): T | undefined {
  try {
    return JSON.parse(s.stdout) as T;
  } catch {
    return undefined;
  }
}
