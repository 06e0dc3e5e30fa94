import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const projectRoot = resolve(here, '..', '..');

/** ../shared/conformance when present (the source of truth), else the committed copy. */
export function corpusDir(): string {
  const shared = resolve(projectRoot, '..', 'shared', 'conformance');
  if (existsSync(join(shared, 'cases'))) return shared;
  return join(projectRoot, 'fixtures', 'conformance');
}

export interface CaseStep {
  op: string;
  rollout?: string;
  rollouts?: string[];
  model?: string;
  snapshot_id?: string;
  version?: number;
  older_than_seconds?: number;
  expect: { result?: unknown; error?: { kind: string; message_contains: string }; error_contains?: string };
  files_after: Record<string, unknown>;
}

export interface ConformanceCase {
  dirName: string;
  name: string;
  description: string;
  ages?: Record<string, number>;
  steps: CaseStep[];
}

export function loadCases(): ConformanceCase[] {
  const base = join(corpusDir(), 'cases');
  return readdirSync(base)
    .sort()
    .map((dirName) => ({ dirName, ...JSON.parse(readFileSync(join(base, dirName, 'case.json'), 'utf8')) }));
}

/** Copies a case's store to a fresh writable temp dir (dot-files kept) and applies `ages`. */
export function materializeStore(c: ConformanceCase): string {
  const src = join(corpusDir(), 'cases', c.dirName, 'store');
  const dst = mkdtempSync(join(tmpdir(), `tokcap-conf-${c.dirName}-`));
  cpSync(src, dst, { recursive: true });
  const fix = (p: string) => {
    const st = statSync(p);
    chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
    if (st.isDirectory()) for (const n of readdirSync(p)) fix(join(p, n));
  };
  fix(dst);
  const now = Date.now() / 1000;
  for (const [name, age] of Object.entries(c.ages ?? {})) {
    utimesSync(join(dst, name), now - age, now - age);
  }
  return dst;
}

/** Snapshot ids present in the input store: a placeholder must not match these. */
export function inputSnapshotIds(c: ConformanceCase): Set<string> {
  const src = join(corpusDir(), 'cases', c.dirName, 'store');
  const out = new Set<string>();
  for (const n of readdirSync(src)) {
    if (!n.endsWith('.tokens.state.json')) continue;
    try {
      const v = JSON.parse(readFileSync(join(src, n), 'utf8'));
      if (v && typeof v === 'object' && typeof v.snapshot_id === 'string' && v.snapshot_id) out.add(v.snapshot_id);
    } catch {
      /* not JSON: no snapshot id */
    }
  }
  return out;
}
