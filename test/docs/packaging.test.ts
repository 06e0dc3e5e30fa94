/**
 * What the package ships and what it says about itself agree: the man pages npm installs, the
 * license, the platforms package.json declares and README.md's "Platforms" section, and the
 * container image (Dockerfile) that examples/k8s runs, whose install lines are the script CI runs
 * into a fresh prefix for every Node version (scripts/ci-installed.sh, scripts/install-tarball.sh).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  man: string[];
  files: string[];
  os: string[];
  license: string;
  scripts: Record<string, string>;
};

describe('the package', () => {
  it('installs every man page of man/ (the "man" field)', () => {
    const pages = readdirSync(join(ROOT, 'man')).filter((f) => f.endsWith('.1'));
    expect(pkg.man.map((p) => p.replace(/^\.\//, '')).sort()).toEqual(pages.map((p) => `man/${p}`).sort());
  });

  it('ships the docs its help and man pages cite, no source maps, and builds its bundles when packed', () => {
    expect(pkg.files).toEqual(expect.arrayContaining(['bin', 'dist', 'man', 'docs', '!dist/**/*.map']));
    expect(read('man/tokcap-export.1')).toContain('docs/export\\.md');
    expect(pkg.scripts.prepare).toBe('npm run build');
    expect(pkg.scripts.build).toContain('bundle-view.mjs');
    expect(pkg.scripts.build).toContain('bundle-cli.mjs');
  });

  it('carries the Apache 2.0 text its license field names', () => {
    expect(pkg.license).toBe('Apache-2.0');
    expect(read('LICENSE')).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(read('LICENSE')).toContain('END OF TERMS AND CONDITIONS');
  });

  it("declares the platforms README.md's Platforms section names", () => {
    const section = read('README.md').split('## Platforms')[1]?.split('\n## ')[0] ?? '';
    expect(pkg.os).toEqual(['linux', 'darwin', 'freebsd']);
    for (const words of ['Linux with glibc', 'Node 20, 22 and 24', 'musl', 'macOS', 'FreeBSD', 'Windows', 'exits 3'])
      expect(section).toContain(words);
  });
});

describe('the container image', () => {
  const dockerfile = read('Dockerfile');
  const lines = dockerfile.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

  it('is Node on Debian slim, installs the packed tarball with the script CI checks, runs tokcap as a non-root user', () => {
    expect(lines[0]).toMatch(/^FROM node:\d+-bookworm-slim$/);
    expect(lines).toContain('COPY tokcap-*.tgz scripts/install-tarball.sh /tmp/tokcap/');
    expect(lines.find((l) => l.startsWith('RUN '))).toMatch(
      /^RUN sh \/tmp\/tokcap\/install-tarball\.sh \/usr\/local \/tmp\/tokcap\/tokcap-\*\.tgz /,
    );
    expect(lines.filter((l) => l.startsWith('USER '))).toEqual(['USER node']);
    expect(lines.at(-1)).toBe('ENTRYPOINT ["tokcap"]');
    // The build context holds the two files the COPY names.
    expect(
      read('.dockerignore')
        .split('\n')
        .filter((l) => l.startsWith('!')),
    ).toEqual(['!tokcap-*.tgz', '!scripts/install-tarball.sh']);
  });

  it('is the image examples/k8s runs, and the README names it', () => {
    const job = read('examples/k8s/export-job.yaml');
    const tag = dockerfile.match(/docker build -t (\S+) \./)?.[1];
    expect(tag).toBeDefined();
    expect(job).toContain(`image: ${tag}`);
    expect(job).toContain("repository's Dockerfile");
    expect(read('README.md')).toContain('`examples/k8s` runs');
  });

  it('is installed by the lines CI runs into a fresh prefix on every Node version', () => {
    const ci = read('scripts/ci-installed.sh');
    expect(ci).toContain('sh scripts/install-tarball.sh "$prefix" "$tarball"');
    expect(ci).toContain("grep -q '^RUN sh /tmp/tokcap/install-tarball.sh /usr/local ' Dockerfile");
    expect(read('.ci/run')).toContain('bash scripts/ci-installed.sh');
  });
});
