import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/conformance-corpus.js';

/**
 * The specification lives in the repository (docs/format.md, docs/cli.md, docs/conformance.md), so
 * a clone on its own can answer every citation. Fails when a file cites a document outside the
 * repository, or cites an anchor of docs/*.md (docs/format.md#freeze) that does not exist.
 */

// The three specification documents name the reference documents they map from; fixtures hold
// the upstream corpus verbatim; this file spells out the patterns it forbids.
const SPEC_DOCS = new Set(['docs/format.md', 'docs/cli.md', 'docs/conformance.md']);
const SKIP_DIRS = new Set(['node_modules', 'fixtures', 'dist', '.git', '.bench']);
const TEXT_FILE = /\.(ts|tsx|mts|mjs|js|cjs|py|md|json|sh|1|yml|yaml)$/;
const THIS_FILE = 'test/docs/citations.test.ts';

function repoFiles(dir = projectRoot): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name)) continue;
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...repoFiles(path));
    else if (TEXT_FILE.test(name) && name !== 'package-lock.json') out.push(relative(projectRoot, path));
  }
  return out.sort();
}

/** Citations of documents outside the repository. Paths the code reads (../shared/conformance) are not citations. */
const OUTSIDE = [
  { what: 'the reference format specification', re: /\bFORMAT\.md\b/ },
  { what: 'the reference command-line contract', re: /\bCLI\.md\b/ },
  { what: 'the upstream corpus README', re: /conformance(?:\/| )README/i },
  { what: 'a section number of a document outside the repository', re: /§/ },
  { what: 'a machine path', re: /\/work\/shared\b/ },
];

/** Explicit anchors (`<a id="...">`, the stable ones) and GitHub's heading slugs. */
function anchorsOf(doc: string): Set<string> {
  const text = readFileSync(join(projectRoot, doc), 'utf8');
  const ids = [...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]);
  const slugs = [...text.matchAll(/^#{1,6} +(.+)$/gm)].map((m) =>
    m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-'),
  );
  return new Set([...ids, ...slugs]);
}

describe('citations of the specification', () => {
  const files = repoFiles();
  const docs = files.filter((f) => /^docs\/[^/]+\.md$/.test(f));

  it('finds the specification documents and the sources', () => {
    for (const doc of SPEC_DOCS) expect(docs).toContain(doc);
    expect(files.filter((f) => f.startsWith('src/')).length).toBeGreaterThan(20);
  });

  it('no file cites a document outside the repository', () => {
    const found: string[] = [];
    for (const file of files) {
      if (SPEC_DOCS.has(file) || file === THIS_FILE) continue;
      const lines = readFileSync(join(projectRoot, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const { what, re } of OUTSIDE) if (re.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim()}`);
      });
    }
    expect(
      found,
      'cite docs/format.md#<anchor>, docs/cli.md#<anchor> or docs/conformance.md#<anchor> instead (see their section maps)',
    ).toEqual([]);
  });

  it('every cited docs/*.md#anchor exists', () => {
    const anchors = new Map(docs.map((d) => [d, anchorsOf(d)]));
    const broken: string[] = [];
    let cited = 0;
    const check = (file: string, line: number, doc: string, anchor: string) => {
      cited++;
      const known = anchors.get(doc);
      if (!known) broken.push(`${file}:${line}: ${doc} does not exist`);
      else if (!known.has(anchor)) broken.push(`${file}:${line}: ${doc}#${anchor} does not exist`);
    };
    for (const file of files) {
      const lines = readFileSync(join(projectRoot, file), 'utf8').split('\n');
      lines.forEach((text, i) => {
        // Citations by repository path, anywhere: docs/format.md#freeze.
        for (const m of text.matchAll(/\bdocs\/([\w-]+\.md)#([\w-]+)/g)) check(file, i + 1, `docs/${m[1]}`, m[2]);
        if (!file.startsWith('docs/')) return;
        // Inside docs/: relative links (format.md#freeze) and links within the page (#freeze).
        for (const m of text.matchAll(/\]\(([\w-]+\.md)?#([\w-]+)\)/g))
          check(file, i + 1, m[1] ? `docs/${m[1]}` : file, m[2]);
      });
    }
    expect(broken).toEqual([]);
    expect(cited).toBeGreaterThan(100);
  });
});
