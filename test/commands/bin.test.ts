/**
 * The real binary, spawned: bin/tokcap.js -> dist/cli/main.js (the bundle, scripts/bundle-cli.mjs)
 * -> run.js (or complete.js), or the same from dist/commands/ where no bundle was built.
 * Needs a build (`npm test` runs tsc first; `ensureBuilt` compiles when dist/ is missing or
 * older than the sources).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, cleanEnv, ensureBuilt } from '../support/cli.js';

const DIR = mkdtempSync(join(tmpdir(), 'tokcap-bin-'));

function tokcap(args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []) {
  return execa('node', [...nodeArgs, BIN, ...args], {
    env: cleanEnv(env),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
}

function stderrLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l !== '');
}

/**
 * Runs the binary with hooks that log every bare specifier (package) it imports and the path of
 * every file module it loads (a package bundled into dist/cli/ is imported by no specifier).
 */
async function importedPackages(
  args: string[],
): Promise<{ exitCode: number | undefined; stdout: string; stderr: string; imported: string[]; loaded: string[] }> {
  const hookDir = mkdtempSync(join(DIR, 'hooks-'));
  const log = join(hookDir, 'imports.log');
  const loadLog = join(hookDir, 'loads.log');
  const hooks = join(hookDir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
export async function resolve(specifier, context, next) {
  if (!/^[./]|^node:|^file:/.test(specifier)) appendFileSync(${JSON.stringify(log)}, specifier + '\\n');
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(loadLog)}, fileURLToPath(url) + '\\n');
  return next(url, context);
}`,
  );
  writeFileSync(log, '');
  writeFileSync(loadLog, '');
  const register = join(hookDir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  const r = await tokcap(args, {}, ['--import', pathToFileURL(register).href]);
  const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr, imported: lines(log), loaded: lines(loadLog) };
}

/** The files of dist/cli/ among `loaded` that hold commander's code (bundled into a chunk). */
const withCommander = (loaded: string[]) =>
  loaded.filter(
    (f) =>
      f.startsWith(join(ROOT, 'dist', 'cli') + sep) && readFileSync(f, 'utf8').includes('commander.unknownCommand'),
  );

beforeAll(async () => {
  await ensureBuilt();
});

describe('tokcap binary', () => {
  it('is executable with a node shebang', () => {
    expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(statSync(BIN).mode & 0o111).not.toBe(0);
  });

  it('--help exits 0 with usage on stdout', async () => {
    const r = await tokcap(['--help']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('Usage: tokcap <command>');
    expect(r.stderr).toBe('');
  });

  it('-V prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await tokcap(['-V']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(version);
  });

  it('--version alone prints the version as -V does, without loading the program', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await importedPackages([flag]);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(version);
      expect(r.imported).toEqual([]);
      expect(r.loaded.filter((f) => f.startsWith(join(ROOT, 'dist', 'cli') + sep))).toEqual([]);
    }
  });

  it('a stdout that cannot be written (a full disk) is an I/O error: one line, exit 3, no stack trace', () => {
    const demo = join(ROOT, 'fixtures', 'demo-store');
    for (const args of [
      ['inspect', demo],
      ['inspect', demo, '--json'],
      ['verify-digests', demo, '--json'],
      ['build', demo, '--json'],
      ['export', demo, '--out', '-'],
    ]) {
      // stdout is /dev/full itself (every write fails with ENOSPC), not a pipe to it.
      const full = openSync('/dev/full', 'w');
      const r = spawnSync('node', [BIN, ...args], {
        env: cleanEnv({}),
        stdio: ['ignore', full, 'pipe'],
        encoding: 'utf8',
      });
      closeSync(full);
      expect([args.join(' '), r.status]).toEqual([args.join(' '), 3]);
      expect(stderrLines(r.stderr)).toEqual(['tokcap: standard output: no space left on device']);
    }
  });

  it('an unknown command exits 2 with one line on stderr', async () => {
    const r = await tokcap(['nosuchcmd']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(stderrLines(r.stderr)).toEqual(["tokcap: unknown command 'nosuchcmd'; see 'tokcap --help'"]);
  });

  it('a duration without unit exits 2 with the hint', async () => {
    const r = await tokcap(['sweep', DIR, '--older-than', '7']);
    expect(r.exitCode).toBe(2);
    const lines = stderrLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('a duration needs a unit, e.g. 7d or 36h');
  });

  it('sweep with no DIR and no TOKCAP_DIR exits 2', async () => {
    const r = await tokcap(['sweep', '--older-than', '7d']);
    expect(r.exitCode).toBe(2);
    expect(stderrLines(r.stderr)).toEqual([
      "tokcap: no capture directory: give DIR or set TOKCAP_DIR; see 'tokcap sweep --help'",
    ]);
  });

  it('an invalid rollout id exits 2', async () => {
    const r = await tokcap(['delete', DIR, 'a/b']);
    expect(r.exitCode).toBe(2);
    expect(stderrLines(r.stderr)).toEqual(["tokcap: Invalid rollout id: 'a/b'"]);
  });

  it('a store error exits 3 with one line naming the file, and a stack only with TOKCAP_DEBUG=1', async () => {
    const missing = join(DIR, 'no-such-dir');
    const r = await tokcap(['inspect', missing]);
    expect(r.exitCode).toBe(3);
    expect(stderrLines(r.stderr)).toHaveLength(1);
    expect(stderrLines(r.stderr)).toEqual([`tokcap: ${missing}: no such directory`]);
    const d = await tokcap(['inspect', missing], { TOKCAP_DEBUG: '1' });
    expect(d.exitCode).toBe(3);
    expect(stderrLines(d.stderr)[0]).toBe(stderrLines(r.stderr)[0]);
    expect(d.stderr).toMatch(/\n\s+at /);
    expect(d.stderr).toContain('ENOENT: no such file or directory, opendir');
  });

  it('a DIR that is a file: the same line from a reading and a changing command, exit 3', async () => {
    const file = join(DIR, 'a-file');
    writeFileSync(file, '');
    const s = await tokcap(['sweep', file, '--older-than', '0s', '--json']);
    expect([s.exitCode, s.stdout, stderrLines(s.stderr)]).toEqual([3, '', [`tokcap: ${file}: not a directory`]]);
    const v = await tokcap(['verify-digests', file]);
    expect([v.exitCode, v.stdout, stderrLines(v.stderr)]).toEqual([3, '', [`tokcap: ${file}: not a directory`]]);
  });

  it('completion prints a script', async () => {
    const r = await tokcap(['completion', 'zsh']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.startsWith('#compdef tokcap')).toBe(true);
  });

  it('does not load React or Ink for commands other than watch', async () => {
    const { exitCode, imported, loaded } = await importedPackages(['sweep', DIR, '--older-than', '1d']);
    expect(exitCode).toBe(0);
    // The hooks work: sweep's module was loaded, from dist/commands/ or from its bundle's chunk.
    expect(loaded.some((f) => /[/\\]dist[/\\](commands[/\\]sweep\.js|cli[/\\]sweep-\w+\.js)$/.test(f))).toBe(true);
    expect(imported.includes('commander') || withCommander(loaded).length === 1).toBe(true);
    expect(imported.filter((s) => /^(react|ink)(\/|$)/.test(s))).toEqual([]);
    expect(loaded.filter((f) => /[/\\]node_modules[/\\](react|ink)[/\\]|live\.bundle\.js$/.test(f))).toEqual([]);
  });

  it('__complete (run on every Tab) loads no CLI or UI package, and answers with rollout ids', async () => {
    const store = mkdtempSync(join(DIR, 'store-'));
    for (const id of ['demo-1', 'demo-2', 'other']) writeFileSync(join(store, `${id}.tokens.jsonl`), '');
    const { exitCode, imported, loaded, stdout, stderr } = await importedPackages([
      '__complete',
      'inspect',
      store,
      'demo-',
    ]);
    expect({ exitCode, stdout, stderr }).toEqual({ exitCode: 0, stdout: 'demo-1\ndemo-2\n:none', stderr: '' });
    expect(imported.filter((s) => /^(commander|react|ink|chalk|cli-table3|execa)(\/|$)/.test(s))).toEqual([]);
    expect(withCommander(loaded)).toEqual([]);
  });
});
