import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { ensureBuilt, tokcap } from '../support/cli-binary.js';
import { projectRoot } from '../support/conformance-corpus.js';
import { qwen3Store } from '../support/qwen3.js';

/** Where CI keeps the screenshot (.ci/run prints the path). */
const ARTIFACTS = join(projectRoot, '.ci-artifacts');
/** Debian's chromium, with the flags of the project's guide (no download, no network, fresh profile). */
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('report DIR ID --out FILE.html, rendered by headless Chromium', () => {
  let root: string;
  let dir: string;
  let env: Record<string, string>;
  let remove = () => {};
  beforeAll(() => {
    ensureBuilt();
    ({ root, dir, env, remove } = qwen3Store('tokcap-report-', [
      ['r-drift', 'drift'],
      ['r-markup', 'drift', '<script>alert(1)</script>&'],
    ]));
  });
  afterAll(() => remove());

  it('writes one self-contained page that renders the divergence, without console errors or requests', async () => {
    const out = join(root, 'r-drift.html');
    const r = await tokcap(['report', dir, 'r-drift', '--out', out], { env });
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).toContain(`wrote ${out}: rollout r-drift, 2 calls, 1 divergence`);
    const html = readFileSync(out, 'utf8');
    expect(html).not.toMatch(/<(script|link|img|iframe)\b|https?:\/\//i);

    const context = await chromium.launchPersistentContext(join(root, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
    });
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('request', (q) => {
        if (!q.url().startsWith('file:')) problems.push(`request: ${q.url()}`);
      });
      await page.setViewportSize({ width: 1200, height: 1400 });
      await page.goto(pathToFileURL(out).href);
      expect(await page.locator('h1').textContent()).toBe('rollout r-drift');
      const divergence = page.locator('#divergence-call-002');
      await expect.poll(() => divergence.isVisible()).toBe(true);
      expect(await divergence.locator('p').first().textContent()).toMatch(
        /call-002 diverges from call-001 at token \d+: generated `<\/think>` `⏎⏎` \[151668, 271\], re-rendered `<\/think>` `⏎` `⏎` \[151668, 198, 198\]/,
      );
      // The differing ids are highlighted in both windows, and each token names its id on hover.
      const diffs = divergence.locator('.window .diff');
      expect(await diffs.count()).toBeGreaterThan(4);
      expect(await diffs.first().isVisible()).toBe(true);
      expect(await diffs.first().getAttribute('title')).toMatch(/^id \d+ · token \d+$/);
      expect(
        await page.locator('#call-call-002 .b0, #call-call-002 .b1, #call-call-002 .b2, #call-call-002 .b3').count(),
      ).toBeGreaterThan(0);
      expect(await page.locator('#call-call-001 h3').textContent()).toContain('call-001');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'report-drift.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('escapes store text (call ids with markup stay text)', async () => {
    const out = join(root, 'x.html');
    const r = await tokcap(['report', dir, 'r-markup', '--out', out], { env });
    expect(r.exitCode).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&amp;call-002');
    expect(html).not.toContain('<script>');
  });

  it('refuses an output inside the capture directory (exit 2)', async () => {
    const r = await tokcap(['report', dir, 'r-drift', '--out', join(dir, 'r.html')], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('inside the capture directory');
  });
});
