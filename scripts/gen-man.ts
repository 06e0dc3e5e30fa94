#!/usr/bin/env -S npx tsx
/**
 * Generates man/tokcap.1 and man/tokcap-<command>.1 from the option table (commands/cli/options.ts,
 * via the markdown of commands/cli/docs.ts) with marked-man, and README.md's command and exit-code
 * tables and docs/cli.md's fault table (between `<!-- NAME:start -->` and `<!-- NAME:end -->`).
 * Output is reproducible: the date is a constant below (bump it when the pages change
 * meaningfully), the version comes from package.json, and nothing depends on the clock, the
 * locale or the machine.
 *
 *   npm run man            # write man/*.1 and README.md's tables
 *   npm run man -- --check # exit 1 if either is not up to date (for CI)
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { allManPages, cliDocBlocks, readmeBlocks } from '../commands/cli/docs.js';

/** The date printed in every page header (marked-man shows month and year). */
export const MAN_DATE = '2026-11-30';
const MANUAL = 'tokcap manual';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const manDir = join(root, 'man');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

// marked is marked-man's own dependency: resolve it from there, not from the project root.
// (Imported by URL: neither package needs type declarations for this script.)
const markedManPackage = createRequire(import.meta.url).resolve('marked-man/package.json');
const requireFromMarkedMan = createRequire(markedManPackage);
const { Marked } = (await import(pathToFileURL(requireFromMarkedMan.resolve('marked')).href)) as {
  Marked: new () => { use(ext: unknown): void; parse(md: string, options: unknown): string };
};
const markedMan = (
  (await import(pathToFileURL(join(dirname(markedManPackage), 'src', 'index.js')).href)) as { default: object }
).default;

function toRoff(markdown: string): string {
  // A fresh instance per page: marked-man keeps per-document state on the parser.
  const marked = new Marked();
  marked.use(markedMan);
  let roff = marked.parse(markdown, { date: MAN_DATE, manVersion: `tokcap ${version}`, manual: MANUAL });
  // Definition lists: marked-man renders "* term:\n  text" as bullets; use the man idiom .TP.
  roff = roff.replace(/\.IP \\\(bu 2\n(.*):\n\.br\n/g, '.TP\n$1\n');
  // marked leaves HTML entities for quotes in code spans; roff wants the characters.
  roff = roff.replace(/&quot;/g, '"').replace(/&#39;/g, "'");
  // Empty lines are vertical space in roff; the macros already space paragraphs.
  roff = roff.replace(/\n{2,}/g, '\n');
  // Two-column tables: a narrow first column, the second takes the rest of the line.
  roff = roff.replace(/tab\(\|\) expand nowarn box;\nl l\./g, 'tab(|) nowarn box;\nc lx.');
  // Tell man(1) to run tbl for the EXIT STATUS table.
  return `'\\" t\n${roff.trimEnd()}\n`;
}

const check = process.argv.includes('--check');
mkdirSync(manDir, { recursive: true });
const wanted = new Map(allManPages().map(([name, md]) => [`${name}.1`, toRoff(md)]));
let stale = 0;
for (const [file, roff] of wanted) {
  const path = join(manDir, file);
  const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (current === roff) continue;
  stale += 1;
  if (check) console.error(`gen-man: man/${file} is out of date`);
  else writeFileSync(path, roff);
}
for (const file of readdirSync(manDir)) {
  if (/^tokcap.*\.1$/.test(file) && !wanted.has(file)) {
    stale += 1;
    if (check) console.error(`gen-man: man/${file} is not generated any more`);
    else rmSync(join(manDir, file));
  }
}

// README.md and docs/cli.md: each generated block sits between its two markers; the rest is left as written.
for (const [file, blocks] of [
  ['README.md', readmeBlocks()],
  ['docs/cli.md', cliDocBlocks()],
] as const) {
  const path = join(root, file);
  const text = readFileSync(path, 'utf8');
  let updated = text;
  for (const [name, block] of blocks) {
    const start = `<!-- ${name}:start -->`;
    const end = `<!-- ${name}:end -->`;
    const from = updated.indexOf(start);
    const to = updated.indexOf(end);
    if (from === -1 || to < from) {
      console.error(`gen-man: ${file} has no ${start} ... ${end} block`);
      process.exit(1);
    }
    updated = `${updated.slice(0, from + start.length)}\n${block}\n${updated.slice(to)}`;
  }
  if (updated !== text) {
    stale += 1;
    if (check) console.error(`gen-man: the tables in ${file} are out of date`);
    else writeFileSync(path, updated);
  }
}

// package.json's "man": the pages npm installs where man(1) looks (`man tokcap-export` after
// `npm install -g`), the same list as man/.
const pkgPath = join(root, 'package.json');
const pkgText = readFileSync(pkgPath, 'utf8');
const pkg = JSON.parse(pkgText) as { man?: string[] };
const pages = [...wanted.keys()].sort().map((file) => `./man/${file}`);
if (JSON.stringify(pkg.man) !== JSON.stringify(pages)) {
  stale += 1;
  if (check) console.error('gen-man: the "man" field of package.json is out of date');
  else writeFileSync(pkgPath, `${JSON.stringify({ ...pkg, man: pages }, null, 2)}\n`);
}

if (check) {
  if (stale > 0) process.exit(1);
  console.log(`gen-man: ${wanted.size} pages and README.md's tables up to date`);
} else {
  console.log(`gen-man: ${wanted.size} pages in man/ and README.md's tables (${stale} changed)`);
}
