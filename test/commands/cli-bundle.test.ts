/**
 * bin/tokcap.js loads the command line from its bundle (dist/cli/, scripts/bundle-cli.mjs) as
 * built (the stamp the tests check it by: test/commands/watch/view-loader.test.ts); the bundle's
 * entry reads the command line and runs `watch` from the modules, whose view's bundle imports the
 * library from dist/ (its read worker from a bundle of its own, with its own stamp).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStore } from '../../src/fixture/generate-store.js';
import { BIN, ROOT, cleanEnv, cliBundleHolds, ensureCliBundle } from '../support/cli.js';

const DIR = mkdtempSync(join(tmpdir(), 'tokcap-cli-bundle-'));
const CLI = join(ROOT, 'dist', 'cli') + sep;
const MODULES = join(ROOT, 'dist', 'commands') + sep;

/** Runs the binary with a load hook; `loaded`: the path of every file module it loaded. */
async function tokcapLoading(args: string[], env: Record<string, string> = {}, cwd?: string) {
  const log = join(DIR, `loads-${Math.random().toString(36).slice(2)}.log`);
  const hooks = join(DIR, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
export async function load(url, context, next) {
  if (url.startsWith('file:') && process.env.LOAD_LOG) appendFileSync(process.env.LOAD_LOG, fileURLToPath(url) + '\\n');
  return next(url, context);
}`,
  );
  const register = join(DIR, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  writeFileSync(log, '');
  const r = await execa('node', ['--import', pathToFileURL(register).href, BIN, ...args], {
    env: cleanEnv({ ...env, LOAD_LOG: log }),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    cwd,
  });
  return { ...r, loaded: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

/** `tokcapLoading` run in `cwd` (a DIR given by a relative name). */
function execaIn(cwd: string, args: string[]) {
  return tokcapLoading(args, {}, cwd);
}

let store: string;

/**
 * `watch` ran from the modules: of dist/cli/, only the bundle's entry and what it reads the
 * command line with (no chunk of the program: commander's or a command's), and the read worker.
 */
function expectFromModules(loaded: string[]): void {
  expect(loaded).toContain(join(CLI, 'main.js'));
  expect(loaded).toContain(join(MODULES, 'cli', 'run.js'));
  expect(loaded).toContain(join(MODULES, 'watch', 'watch.js'));
  const fromBundle = loaded.filter((f) => f.startsWith(CLI) && !f.endsWith('read-worker.cjs'));
  expect(fromBundle.filter((f) => readFileSync(f, 'utf8').includes('commander.unknownCommand'))).toEqual([]);
  expect(fromBundle.filter((f) => /[/\\](run|program|watch|early)-\w+\.js$/.test(f))).toEqual([]);
}

beforeAll(async () => {
  await ensureCliBundle();
  store = join(DIR, 'store');
  await generateStore({ dir: store }, { rollouts: 12, calls: 2, prompt: 6, gen: 2, turn: 2, seed: 3 });
}, 180_000);

afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe('the command line from its bundle', () => {
  it('is loaded from dist/cli/, made from what is in dist/ now', async () => {
    expect(cliBundleHolds()).toBe(true);
    const r = await tokcapLoading(['verify-digests', store]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('12 rollouts verified: 0 errors, 0 warnings in 0 rollouts');
    expect(r.loaded).toContain(join(CLI, 'main.js'));
    // bin/tokcap.js tunes V8 (dist/commands/cli/v8-flags.js) and checks nothing: nothing else
    // of dist/commands.
    expect(r.loaded.filter((f) => f.startsWith(MODULES))).toEqual([join(MODULES, 'cli', 'v8-flags.js')]);
  });

  it('is chosen by the command, not by a word "watch" elsewhere on the line', async () => {
    const named = join(DIR, 'watch');
    await generateStore({ dir: named }, { rollouts: 2, calls: 1, prompt: 4, gen: 2, turn: 1, seed: 5 });
    for (const args of [
      ['inspect', 'watch'],
      ['--lock-wait', '5s', 'verify-digests', 'watch'],
    ]) {
      const r = await execaIn(DIR, args);
      expect(r.exitCode, args.join(' ')).toBe(0);
      expect(r.loaded, args.join(' ')).toContain(join(CLI, 'main.js'));
    }
    // watch itself, also after a global option with its value: from the modules (its read
    // worker from its own bundle).
    const w = await tokcapLoading(['--lock-wait', '5s', 'watch', named, '--once']);
    expect(w.exitCode).toBe(0);
    expectFromModules(w.loaded);
  });

  it('starts worker threads from their own bundles beside it (one file each, no module of dist/src/)', async () => {
    for (const [args, worker] of [
      [['verify-digests', store, '--json'], 'verify-worker.js'],
      [['build', store, '--json'], 'build-worker.js'],
    ] as const) {
      const r = await tokcapLoading([...args], { TOKCAP_WORKERS: '2', TOKCAP_DEBUG: '1' });
      expect(r.exitCode).toBe(0);
      expect(r.stderr).toMatch(/tokcap: debug: [1-9]\d* worker thread/);
      expect(r.loaded).toContain(join(CLI, worker));
      expect(r.loaded.filter((f) => f.startsWith(join(ROOT, 'dist', 'src') + sep))).toEqual([]);
    }
    const r = await tokcapLoading(['verify-digests', store, '--json'], { TOKCAP_WORKERS: '2' });
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, findings: [], unchecked: [] });
  });

  it('finds the package version from the bundle', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    // A command's -V is the program's (commander's), from the bundle.
    const r = await tokcapLoading(['inspect', '-V']);
    expect(r.stdout).toBe(version);
    expect(r.loaded).toContain(join(CLI, 'main.js'));
  });

  it('is not used for watch: watch runs from the modules, its read worker from its own bundle', async () => {
    const r = await tokcapLoading(['watch', store, '--once', '--json']);
    expect(r.exitCode).toBe(0);
    expect(Object.keys(JSON.parse(r.stdout).rollouts)).toHaveLength(12);
    expectFromModules(r.loaded);
    expect(r.loaded).toContain(join(CLI, 'read-worker.cjs'));
    expect(r.loaded).not.toContain(join(ROOT, 'dist', 'src', 'watch', 'read-worker.js'));
    // The same rows as read in one thread.
    const one = await tokcapLoading(['watch', store, '--once', '--json'], { TOKCAP_WORKERS: '1' });
    expectFromModules(one.loaded);
    expect(one.loaded).not.toContain(join(CLI, 'read-worker.cjs'));
    expect(JSON.parse(r.stdout).rollouts).toEqual(JSON.parse(one.stdout).rollouts);
  });
});
