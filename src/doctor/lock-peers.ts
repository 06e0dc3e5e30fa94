/**
 * Another process on this node, for the lock checks of `doctor`: a Node process calling flock(2)
 * through koffi (as tokcap does) or a python3 process calling `fcntl.flock` (as the reference
 * writer does). Each runs one of two small scripts given on its command line:
 * - `try FILE`: opens FILE, tries an exclusive then a shared lock without waiting, answers
 *   `{"ex": granted, "sh": granted}` (or `{"error": ...}`) and exits;
 * - `hold FILE`: takes an exclusive lock without waiting, answers `held` (or an error), and keeps
 *   it until its standard input closes.
 * The Node peer answers over its IPC channel and is given the C library and EWOULDBLOCK of this
 * platform (src/native/libc.ts, os.constants); python3 answers a line on its standard output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { libcStatus } from '../native/libc.js';

export type PeerKind = 'node' | 'python3';

export interface TryAnswer {
  ex?: boolean;
  sh?: boolean;
  error?: string;
}

const NODE_PEER = `
const [koffiPath, libcFile, wouldBlock, mode, file] = process.argv.slice(1);
const koffi = require(koffiPath);
const fs = require('fs');
const answer = (line, then) => process.send(line, then);
const EX = 2, SH = 1, NB = 4, UN = 8;
try {
  const flock = koffi.load(libcFile).func('int flock(int fd, int operation)');
  const attempt = (fd, op) => { koffi.errno(0); const rc = flock(fd, op | NB); const e = koffi.errno(); if (rc === 0) return true; if (e === Number(wouldBlock)) return false; throw new Error('flock: errno ' + e); };
  const fd = fs.openSync(file, 'r+');
  if (mode === 'try') {
    const ex = attempt(fd, EX); if (ex) flock(fd, UN);
    const sh = attempt(fd, SH); if (sh) flock(fd, UN);
    answer(JSON.stringify({ ex, sh }), () => process.exit(0));
  } else {
    if (!attempt(fd, EX)) throw new Error('the lock is held by another process');
    answer('held');
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));
  }
} catch (e) { answer(JSON.stringify({ error: e.message }), () => process.exit(0)); }
`;

const PYTHON_PEER = `
import fcntl, json, os, sys
mode, path = sys.argv[1], sys.argv[2]
def attempt(fd, op):
    try:
        fcntl.flock(fd, op | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
try:
    fd = os.open(path, os.O_RDWR)
    if mode == 'try':
        ex = attempt(fd, fcntl.LOCK_EX)
        if ex: fcntl.flock(fd, fcntl.LOCK_UN)
        sh = attempt(fd, fcntl.LOCK_SH)
        if sh: fcntl.flock(fd, fcntl.LOCK_UN)
        print(json.dumps({'ex': ex, 'sh': sh}), flush=True)
    else:
        if not attempt(fd, fcntl.LOCK_EX): raise OSError('the lock is held by another process')
        print('held', flush=True)
        sys.stdin.read()
except OSError as e:
    print(json.dumps({'error': str(e)}), flush=True)
`;

/** Every peer started and not yet gone: killed on exit and on a signal. */
const live = new Set<ChildProcess>();

export function killPeers(): void {
  for (const c of live) c.kill('SIGKILL');
  live.clear();
}

function start(kind: PeerKind, mode: 'try' | 'hold', file: string): ChildProcess {
  const child =
    kind === 'node'
      ? spawn(
          process.execPath,
          [
            '-e',
            NODE_PEER,
            createRequire(import.meta.url).resolve('koffi'),
            libcFile(),
            String(constants.errno.EWOULDBLOCK),
            mode,
            file,
          ],
          {
            stdio: ['pipe', 'ignore', 'ignore', 'ipc'],
          },
        )
      : spawn('python3', ['-c', PYTHON_PEER, mode, file], { stdio: ['pipe', 'pipe', 'ignore'] });
  live.add(child);
  child.on('exit', () => live.delete(child));
  return child;
}

/** This platform's C library for the Node peer (its load fails there, as an answer, when none was found). */
function libcFile(): string {
  const found = libcStatus();
  return 'file' in found ? found.file : '';
}

/** The peer's first answer: its IPC message, or python3's first line (or an error when it exits without one). */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.on('message', (m) => resolve(String(m)));
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => {
      text += d;
      const nl = text.indexOf('\n');
      if (nl >= 0) resolve(text.slice(0, nl));
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      resolve(
        text.includes('\n')
          ? text.slice(0, text.indexOf('\n'))
          : JSON.stringify({ error: `exited (${code}) without an answer` }),
      ),
    );
  });
}

/** What another process gets when it tries `file`'s lock now. */
export async function peerTry(kind: PeerKind, file: string): Promise<TryAnswer> {
  const line = await firstLine(start(kind, 'try', file));
  try {
    return JSON.parse(line) as TryAnswer;
  } catch {
    return { error: line };
  }
}

/** Another process holding `file`'s exclusive lock until `release()`. */
export async function peerHold(
  kind: PeerKind,
  file: string,
): Promise<{ error?: string; release: () => Promise<void> }> {
  const child = start(kind, 'hold', file);
  const line = await firstLine(child);
  const release = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.on('exit', () => resolve());
      child.stdin!.end();
    });
  if (line === 'held') return { release };
  let error = line;
  try {
    error = (JSON.parse(line) as TryAnswer).error ?? line;
  } catch {
    // the line as it is
  }
  await release();
  return { error, release: async () => undefined };
}

/** True when python3 can be started. */
export function hasPython(): Promise<boolean> {
  return new Promise((resolve) => {
    const c = spawn('python3', ['-c', 'import fcntl'], { stdio: 'ignore' });
    c.on('error', () => resolve(false));
    c.on('exit', (code) => resolve(code === 0));
  });
}
