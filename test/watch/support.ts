/**
 * Helpers for the watch tests: real temporary capture directories generated through the core
 * writer, byte-level listings to prove the view changed nothing, and plain styles.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach } from 'vitest';
import { createStyles, type Styles } from '../../commands/styles.js';
import { generateStore, type FixtureOptions } from '../../src/fixture/generate-store.js';

export const PLAIN: Styles = createStyles(0);

/** Registers an afterEach that removes every directory handed out by the returned factory. */
export function useTempDirs(prefix = 'tokcap-watch-'): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}

/** A generated store without lock files (so that creating one would show). */
export async function makeStore(dir: string, options: Partial<FixtureOptions> = {}): Promise<string[]> {
  const { rollouts } = await generateStore({ dir }, { rollouts: 8, calls: 3, prompt: 12, gen: 3, turn: 2, mix: true, ...options });
  for (const n of fs.readdirSync(dir)) if (n.endsWith('.tokens.lock')) fs.rmSync(path.join(dir, n));
  return rollouts;
}

/** name -> size, mtime, inode, content digest: everything a read-only view must leave alone. */
export function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of fs.readdirSync(dir).sort()) {
    const p = path.join(dir, n);
    const s = fs.lstatSync(p);
    const content = s.isFile() ? fs.readFileSync(p).toString('base64') : '';
    out[n] = `${s.size}:${s.mtimeMs}:${s.ino}:${s.mode}:${content}`;
  }
  return out;
}

/** Lines of a rendered frame with trailing spaces removed. */
export function frameLines(frame: string | undefined): string[] {
  return (frame ?? '').split('\n').map((l) => l.trimEnd());
}
