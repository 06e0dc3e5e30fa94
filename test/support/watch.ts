/**
 * Helpers for the watch tests: real temporary capture directories generated through the core
 * writer, byte-level listings to prove the view changed nothing, and plain styles.
 */
import { useTempDirs as useSharedTempDirs } from './temp-dirs.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createStyles, type Styles } from '../../commands/render/styles.js';
import { generateStore, type FixtureOptions } from '../../src/fixture/generate-store.js';

export const PLAIN: Styles = createStyles(0);

export function useTempDirs(prefix = 'tokcap-watch-'): () => string {
  return useSharedTempDirs(prefix);
}

/** A generated store without lock files (so that creating one would show). */
export async function makeStore(dir: string, options: Partial<FixtureOptions> = {}): Promise<string[]> {
  const { rollouts } = await generateStore(
    { dir },
    { rollouts: 8, calls: 3, prompt: 12, gen: 3, turn: 2, mix: true, ...options },
  );
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
