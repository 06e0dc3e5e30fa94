import { execa } from 'execa';

/** Non-blocking flock probe from a real Python process: prints "acquired" or "blocked". */
const PROBE_PY = `
import fcntl, sys
path, mode = sys.argv[1], sys.argv[2]
f = open(path, sys.argv[3] if len(sys.argv) > 3 else 'a+b')
op = fcntl.LOCK_EX if mode == 'ex' else fcntl.LOCK_SH
try:
    fcntl.flock(f.fileno(), op | fcntl.LOCK_NB)
except BlockingIOError:
    print('blocked')
else:
    print('acquired')
`;

/** Tries Python's fcntl.flock(LOCK_NB) on `file`, opened like the reference (`a+b`) by default. */
export async function pyProbe(file: string, mode: 'ex' | 'sh', openMode = 'a+b'): Promise<string> {
  const { stdout } = await execa('python3', ['-c', PROBE_PY, file, mode, openMode]);
  return stdout.trim();
}
