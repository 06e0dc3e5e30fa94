/**
 * The library reads no process state and writes no stdio (the developers' guide): what a
 * job may do (threads, diagnostics) comes from its caller, the CLI's command context.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('src/', () => {
  it('reads no process.env and writes no stdio', () => {
    const found = sources(join(ROOT, 'src')).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /process\.(env|stdout|stderr)\b|\bconsole\./.test(line)
            ? [`${file.slice(ROOT.length + 1)}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(found).toEqual([]);
  });
});
