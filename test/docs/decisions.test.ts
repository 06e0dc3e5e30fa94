import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/conformance-corpus.js';

/**
 * docs/decisions/: code cites a record by its path (`docs/decisions/0005-worker-thresholds.md`), so
 * a renamed or renumbered record must not leave a citation behind, and every record is in the
 * index a reader starts from.
 */

const DECISIONS = join(projectRoot, 'docs', 'decisions');
const SKIP_DIRS = new Set(['node_modules', 'fixtures', 'dist', '.git', '.bench']);
const TEXT_FILE = /\.(ts|tsx|mts|mjs|js|cjs|md|json|sh|yml|yaml)$/;

function repoFiles(dir = projectRoot): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP_DIRS.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return repoFiles(path);
    return TEXT_FILE.test(name) && name !== 'package-lock.json' ? [path] : [];
  });
}

const records = readdirSync(DECISIONS).filter((name) => /^\d{4}-.+\.md$/.test(name));

describe('decision records', () => {
  it('are numbered once each, from 0001 without gaps', () => {
    const numbers = records.map((name) => Number(name.slice(0, 4))).sort((a, b) => a - b);
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  });

  it('are all in the index, docs/decisions/README.md', () => {
    const index = readFileSync(join(DECISIONS, 'README.md'), 'utf8');
    expect(records.filter((name) => !index.includes(`(${name})`))).toEqual([]);
  });

  it('each have a context, a decision and a measured consequence', () => {
    const incomplete = records.filter((name) => {
      const text = readFileSync(join(DECISIONS, name), 'utf8');
      return !['## Context', '## Decision', '## Measured consequence'].every((heading) =>
        text.includes(`\n${heading}\n`),
      );
    });
    expect(incomplete).toEqual([]);
  });

  it('cited anywhere in the repository exist', () => {
    const known = new Set(records);
    const broken: string[] = [];
    let cited = 0;
    for (const file of repoFiles()) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const m of line.matchAll(/decisions\/(\d{4}-[a-z0-9-]+\.md)/g)) {
          cited++;
          if (!known.has(m[1])) broken.push(`${relative(projectRoot, file)}:${i + 1}: ${m[1]}`);
        }
      });
    }
    expect(cited).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });
});
