import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { BIN, cleanEnv } from './cli.js';

const PRELOAD = pathToFileURL(join(fileURLToPath(new URL('.', import.meta.url)), 'report-max-rss.mjs')).href;

/** Runs the built tokcap binary with `args` and returns its exit code and peak RSS in KiB. */
export async function tokcapPeakRss(
  args: string[],
): Promise<{ exitCode: number | undefined; maxRssKiB: number; stderr: string }> {
  const scratch = mkdtempSync(join(tmpdir(), 'tokcap-rss-'));
  const file = join(scratch, 'max-rss');
  try {
    const r = await execa('node', ['--import', PRELOAD, BIN, ...args], {
      env: cleanEnv({ TOKCAP_MAX_RSS_FILE: file }),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    return { exitCode: r.exitCode, maxRssKiB: Number(readFileSync(file, 'utf8')), stderr: r.stderr };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
