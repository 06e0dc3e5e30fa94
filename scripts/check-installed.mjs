#!/usr/bin/env node
// Checks an installed copy of tokcap as a user meets it (scripts/ci-installed.sh runs it for each
// Node version): `tokcap` from PATH (PREFIX/bin first, then the Node under test), against the
// checkout this script is in, which gives the expected answers.
//
//   node scripts/check-installed.mjs PREFIX NODE_MAJOR
//
// --version (and --json: the Node under test, the lock backend), inspect and verify-digests of
// the demo store (the checkout's answers), export --format parquet (read back with DuckDB, the
// checkout's rows), watch in a tmux pane with colour on (first screen, a key, q) from the view's
// bundle and again from its modules, `man -w tokcap-export`, bash completion, and with koffi's
// native module removed: one line, exit 3, before the directory is touched.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [prefixArg, major] = process.argv.slice(2);
if (!prefixArg || !/^\d+$/.test(major ?? '')) {
  console.error('usage: node scripts/check-installed.mjs PREFIX NODE_MAJOR');
  process.exit(2);
}
const PREFIX = resolve(prefixArg);
const PACKAGE = join(PREFIX, 'lib', 'node_modules', 'tokcap');
const DEMO = join(ROOT, 'fixtures', 'demo-store');
const WORK = mkdtempSync(join(tmpdir(), 'tokcap-installed-'));
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** The environment of every child: no colour settings or debug from outside. */
const env = { ...process.env };
for (const name of ['NO_COLOR', 'FORCE_COLOR', 'TOKCAP_DEBUG', 'TOKCAP_DIR', 'CI']) delete env[name];

let failures = 0;
function check(what, ok, detail = '') {
  console.log(
    `${ok ? 'ok  ' : 'FAIL'} node ${major}: ${what}${ok || !detail ? '' : `\n     ${detail.replaceAll('\n', '\n     ')}`}`,
  );
  if (!ok) failures++;
}

const run = (cmd, args, extra = {}) => spawnSync(cmd, args, { encoding: 'utf8', env, stdin: 'ignore', ...extra });
const tokcap = (...args) => run('tokcap', args, { cwd: WORK });
/** The checkout's own binary, on this script's Node: the expected answer. */
const expected = (...args) => run(process.execPath, [join(ROOT, 'bin', 'tokcap.js'), ...args], { cwd: WORK });
const same = (a, b) => a.status === b.status && a.stdout === b.stdout && a.stderr === b.stderr;
const shown = (r) => `exit ${r.status}\nstdout: ${r.stdout.slice(0, 600)}\nstderr: ${r.stderr.slice(0, 600)}`;

function checkFound() {
  const which = run('sh', ['-c', 'command -v tokcap; node --version']);
  const [bin, nodeVersion] = which.stdout.trim().split('\n');
  check(`tokcap on PATH is the installed one (${bin})`, bin === join(PREFIX, 'bin', 'tokcap'), which.stdout);
  check(`node on PATH is Node ${major} (${nodeVersion})`, nodeVersion?.startsWith(`v${major}.`) === true);
  const v = tokcap('--version');
  check('--version prints the package version', v.status === 0 && v.stdout.trim() === version, shown(v));
  const j = tokcap('--version', '--json');
  let facts = {};
  try {
    facts = JSON.parse(j.stdout);
  } catch {
    // reported below
  }
  check(
    '--version --json names the Node under test, the platform and a working lock backend',
    j.status === 0 &&
      facts.version === version &&
      facts.node === nodeVersion &&
      facts.platform === `${process.platform}-${process.arch}` &&
      facts.lock_backend === 'flock',
    shown(j),
  );
}

function checkAnswers() {
  const text = tokcap('inspect', DEMO);
  check(
    'inspect of the demo store lists its 8 rollouts',
    text.status === 0 && /^8 rollouts /m.test(text.stdout),
    shown(text),
  );
  // The JSON forms carry no ages, so the checkout's answer is byte for byte the same.
  for (const args of [
    ['inspect', DEMO, '--json'],
    ['verify-digests', DEMO, '--json'],
  ]) {
    const got = tokcap(...args);
    check(
      `${args[0]} --json of the demo store answers as the checkout does`,
      same(got, expected(...args)) && got.stdout !== '',
      shown(got),
    );
  }
}

async function checkParquet() {
  const out = (name) => join(WORK, name);
  const got = tokcap('export', DEMO, '--format', 'parquet', '--out', out('installed'));
  const want = expected('export', DEMO, '--format', 'parquet', '--out', out('checkout'));
  check(
    'export --format parquet exits as the checkout does',
    got.status === 0 && got.status === want.status,
    shown(got),
  );
  const db = await (await DuckDBInstance.create(':memory:')).connect();
  for (const table of ['rollouts', 'calls']) {
    const rows = async (dir) => {
      try {
        return JSON.stringify(
          (
            await db.runAndReadAll(`SELECT * FROM read_parquet('${join(dir, table)}/*.parquet') ORDER BY ALL`)
          ).getRowObjectsJson(),
        );
      } catch (e) {
        return `unreadable: ${e.message}`;
      }
    };
    const [a, b] = [await rows(out('installed')), await rows(out('checkout'))];
    check(
      `the Parquet ${table} table, read back with DuckDB, holds the checkout's rows`,
      a === b && a.startsWith('[{'),
      `${a.slice(0, 300)}\nwant ${b.slice(0, 300)}`,
    );
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `tokcap watch DEMO` in a tmux pane with colour: the first screen, a key (Down), q. */
async function checkWatch(how) {
  const socket = `tokcap-installed-${process.pid}-${how.replace(/\W+/g, '-')}`;
  const tmux = (...args) => run('tmux', ['-L', socket, '-f', '/dev/null', ...args]);
  const rc = join(WORK, 'watch.rc');
  const err = join(WORK, 'watch.err');
  rmSync(rc, { force: true });
  const line = `env TERM=xterm-256color LANG=C.UTF-8 tokcap watch '${DEMO}' 2>'${err}'; echo $? >'${rc}'; sleep 30`;
  tmux('new-session', '-d', '-x', '120', '-y', '35', '-s', 'w', '-c', WORK, line);
  const pane = (...flags) => tmux('capture-pane', '-p', ...flags, '-t', 'w').stdout ?? '';
  const until = async (test, ms = 20_000) => {
    for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(100)) if (test()) return true;
    return false;
  };
  try {
    const first = await until(() => /up to date/.test(pane()) && /› demo-\d/.test(pane()));
    check(`watch (${how}): the first screen, every rollout read`, first, pane());
    check(`watch (${how}): with colour`, pane('-e').includes('\x1b['), pane('-e').slice(0, 300));
    const selected = pane().match(/› (demo-\d)/)?.[1];
    tmux('send-keys', '-t', 'w', 'Down');
    const moved = await until(() => (pane().match(/› (demo-\d)/)?.[1] ?? selected) !== selected, 5_000);
    check(`watch (${how}): a key moves the selection`, moved, pane());
    tmux('send-keys', '-t', 'w', 'q');
    const quit = await until(() => existsSync(rc) && readFileSync(rc, 'utf8').endsWith('\n'), 5_000);
    // Ink shows the cursor again on stderr as it exits: control sequences only, no text.
    // eslint-disable-next-line no-control-regex
    const stderr = (existsSync(err) ? readFileSync(err, 'utf8') : '').replace(/\x1b\[\??[0-9;]*[a-zA-Z]/g, '');
    check(
      `watch (${how}): q quits with exit 0 and nothing on stderr`,
      quit && readFileSync(rc, 'utf8').trim() === '0' && stderr === '',
      `${quit ? `exit ${readFileSync(rc, 'utf8').trim()}` : 'still running'}\nstderr: ${stderr}\n${pane()}`,
    );
  } finally {
    tmux('kill-server');
  }
}

async function checkWatchBothWays() {
  await checkWatch("the view's bundle");
  const bundle = join(PACKAGE, 'dist', 'commands', 'watch', 'live.bundle.js');
  renameSync(bundle, `${bundle}.aside`);
  try {
    await checkWatch("the view's modules");
  } finally {
    renameSync(`${bundle}.aside`, bundle);
  }
}

function checkManAndCompletion() {
  const man = run('man', ['-w', 'tokcap-export'], { env: { ...env, MANPATH: join(PREFIX, 'share', 'man') } });
  check(
    'man -w tokcap-export finds the installed page',
    man.status === 0 && man.stdout.trim().startsWith(PREFIX + '/'),
    shown(man),
  );
  const script =
    'source <(tokcap completion bash); for w in "tokcap exp" "tokcap inspect DEMO demo-"; do COMP_WORDS=($w); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _tokcap; echo "${COMPREPLY[*]}"; done';
  const r = run('bash', ['-c', script.replace('DEMO', DEMO)], { cwd: WORK });
  const [commands, ids] = r.stdout.split('\n');
  check(
    'bash completion completes a command and rollout ids',
    r.status === 0 && commands === 'export' && /^demo-0 .*demo-7$/.test(ids ?? ''),
    shown(r),
  );
}

/** Without koffi's native module (its platform package removed): one line, exit 3, nothing read. */
function checkWithoutNativeModule() {
  const native = join(PACKAGE, 'node_modules', '@koromix');
  renameSync(native, `${native}.aside`);
  try {
    const r = tokcap('inspect', DEMO);
    const lines = r.stderr.split('\n').filter(Boolean);
    check(
      'without the native module: one line on stderr, exit 3, nothing on stdout',
      r.status === 3 && lines.length === 1 && r.stdout === '',
      shown(r),
    );
    const missing = tokcap('inspect', join(WORK, 'no-such-dir'));
    check(
      'without the native module: said before the directory is touched (the same line for a missing DIR)',
      missing.status === 3 && missing.stderr === r.stderr,
      shown(missing),
    );
    // watch on a terminal starts its read worker before the command line is parsed: stopped.
    const tty = run('script', ['-qec', `tokcap watch '${DEMO}'`, '/dev/null'], { cwd: WORK, timeout: 30_000 });
    const ttyLines = tty.stdout.split(/\r?\n/).filter(Boolean);
    check(
      'without the native module: watch on a terminal says the same one line and exits 3',
      tty.status === 3 && ttyLines.length === 1 && ttyLines[0] === lines[0],
      shown(tty),
    );
    const v = tokcap('--version', '--json');
    check(
      'without the native module: --version --json says there is no lock backend',
      v.status === 0 && JSON.parse(v.stdout).lock_backend === null,
      shown(v),
    );
  } finally {
    renameSync(`${native}.aside`, native);
  }
}

try {
  checkFound();
  checkAnswers();
  await checkParquet();
  await checkWatchBothWays();
  checkManAndCompletion();
  checkWithoutNativeModule();
} finally {
  rmSync(WORK, { recursive: true, force: true });
}
if (failures > 0) {
  console.error(`check-installed: ${failures} check(s) failed on Node ${major}`);
  process.exit(1);
}
console.log(`check-installed: the installed copy passed on Node ${major}`);
