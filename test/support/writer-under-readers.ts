/**
 * A stdlib Python writer appending to one rollout while read-only commands of the built binary
 * loop on it: the reliability suite checks that every append and every read succeeds, and
 * bench/lock-waits.ts prints how long the writer waited for its exclusive lock meanwhile.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { py, PY_STORE, type Spawned, startProcess, tokcap } from './reliability.js';

/**
 * argv: DIR R STOP. Appends to R until the file STOP exists; prints "appending" after its first
 * append, then one JSON line: the call ids appended and, measured inside the writer, the time
 * spent blocked in flock(LOCK_EX) and the whole append.
 */
const WRITER_PY = `
import json, os, sys, time
sys.path.insert(0, ${JSON.stringify(join(PY_STORE, '..'))})
import py_store as ps
d, r, stop = sys.argv[1], sys.argv[2], sys.argv[3]
paths = ps.Paths(d, r)
waits, lats, calls = [], [], []
while not (calls and os.path.exists(stop)):
    t0 = time.perf_counter()
    with ps.RolloutLock(paths, True):
        waits.append(time.perf_counter() - t0)
    call = 'lat-%d-%d' % (os.getpid(), len(calls))
    t1 = time.perf_counter()
    ps.append(d, {'rollout_id': r, 'model_call_id': call, 'prompt_token_ids': [1, 2, 3],
                  'generation_token_ids': [4], 'generation_log_probs': [-0.5], 'parent_resolution': 'root'})
    lats.append(time.perf_counter() - t1)
    calls.append(call)
    if len(calls) == 1:
        print('appending', flush=True)
    time.sleep(0.003)
waits.sort(); lats.sort()
q = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))]
print(json.dumps({'calls': calls, 'wait_max': waits[-1], 'wait_p95': q(waits, 0.95),
                  'append_p50': q(lats, 0.5), 'append_max': lats[-1]}))
`;

/** A store `dir` of rollouts A, R and B as the stdlib Python writer leaves them after 0.6 s (its log in `log`). */
export async function writerStore(dir: string, log: string): Promise<Spawned> {
  mkdirSync(dir);
  return py([dir, 'writer', '--rollouts', 'A,R,B', '--seconds', '0.6', '--seed', '11', '--log', log]);
}

export interface WriterFigures {
  calls: string[];
  wait_max: number;
  wait_p95: number;
  append_p50: number;
  append_max: number;
}

export interface WriterUnderReaders {
  writer: Spawned;
  /** The writer's JSON line (undefined if it printed none). */
  figures: WriterFigures | undefined;
  reads: Spawned[];
}

const READS = [
  (dir: string, id: string) => ['inspect', dir, id, '--deep', '--json'],
  (dir: string, id: string) => ['verify-digests', dir, id, '--json'],
  (dir: string, id: string) => ['build', dir, id, '--json'],
];

/**
 * Starts the writer on `rolloutId`, and once it appended, `loops` loops of `readsEach` read-only
 * commands each (inspect --deep, verify-digests, build in turn); stops the writer when they ended.
 */
export async function writerUnderReaders(
  dir: string,
  rolloutId: string,
  loops: number,
  readsEach: number,
): Promise<WriterUnderReaders> {
  const stop = join(dir, '..', `${rolloutId}-writer-stop-${process.pid}-${Date.now()}`);
  const run = startProcess('python3', ['-c', WRITER_PY, dir, rolloutId, stop], { timeoutMs: 900_000 });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    run.child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('appending\n')) resolve();
    });
    void run.done.then((r) => reject(new Error(`the writer ended before appending: ${r.code} ${r.stderr}`)));
  });
  const reads: Spawned[] = [];
  await Promise.all(
    Array.from({ length: loops }, async (_, k) => {
      for (let i = 0; i < readsEach; i++) {
        const args = READS[(k + i) % READS.length](dir, rolloutId);
        reads.push(await tokcap([...args, '--lock-wait', '60s'], { timeoutMs: 120_000 }));
      }
    }),
  );
  if (!existsSync(stop)) writeFileSync(stop, '');
  const writer = await run.done;
  let figures: WriterFigures | undefined;
  try {
    figures = JSON.parse(writer.stdout.trim().split('\n').pop() ?? '') as WriterFigures;
  } catch {
    figures = undefined;
  }
  return { writer, figures, reads };
}
