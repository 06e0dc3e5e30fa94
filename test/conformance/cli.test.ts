import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tokcap } from '../support/cli-binary.js';
import { loadCases } from '../support/conformance-corpus.js';
import { runCase, type ConformanceAdapter, type StepOutcome } from '../support/conformance-runner.js';

/**
 * The conformance corpus through the built binary, with the mapping of docs/cli.md#conformance-mapping:
 * facts -> inspect --deep --json, freeze -> freeze --json, build -> build --freeze --json,
 * drop -> retire --snapshot-id --version --json, retire, delete, sweep --older-than Ns,
 * verify -> verify-digests --json.
 */
async function run(args: string[]): Promise<{ code: number; json: any; stderr: string }> {
  const r = await tokcap(args);
  const stdout = String(r.stdout);
  let json: unknown;
  if (stdout.trim()) json = JSON.parse(stdout);
  return { code: r.exitCode ?? -1, json, stderr: String(r.stderr) };
}

/** An error the command reported without a JSON document (a usage failure, exit 2). */
function topLevelError(r: { code: number; stderr: string }): StepOutcome {
  const message = r.stderr.trim();
  const kind =
    r.code === 2 && message.includes('Invalid rollout id') ? 'invalid_rollout_id' : r.code === 2 ? 'usage' : 'other';
  return { error: { kind, message } };
}

function element(r: { code: number; json: any; stderr: string }, pick: (x: any) => unknown = (x) => x): StepOutcome {
  if (!Array.isArray(r.json)) return topLevelError(r);
  const e = r.json[0];
  if (e && typeof e.error === 'object' && e.error !== null && 'kind' in e.error) return { error: e.error };
  return { result: pick(e) };
}

const cli: ConformanceAdapter = {
  async facts(dir) {
    const r = await run(['inspect', dir, '--deep', '--json']);
    return r.json ? { result: r.json } : topLevelError(r);
  },
  async verify(dir) {
    const r = await run(['verify-digests', dir, '--json']);
    return r.json ? { result: { ok: r.json.ok, findings: r.json.findings } } : topLevelError(r);
  },
  async freeze(dir, id) {
    return element(await run(['freeze', dir, '--json', '--', id]));
  },
  async build(dir, id, model) {
    return element(await run(['build', dir, '--freeze', '--model', model, '--json', '--', id]));
  },
  async drop(dir, id, sid, version) {
    return element(
      await run(['retire', dir, '--snapshot-id', sid, '--version', String(version), '--json', '--', id]),
      (x) => x.dropped,
    );
  },
  async retire(dir, ids) {
    const r = await run(['retire', dir, '--json', '--', ...ids]);
    if (!r.json) return topLevelError(r);
    // A rollout the command could not retire is the operation's failure, as the reference raises (docs/cli.md#conformance-mapping).
    if (Array.isArray(r.json.errors) && r.json.errors.length > 0) return { error: r.json.errors[0].error };
    return { result: { removed: r.json.removed, absent: r.json.absent } };
  },
  async delete(dir, ids) {
    const r = await run(['delete', dir, '--json', '--', ...ids]);
    return r.json ? { result: { removed: r.json.removed, absent: r.json.absent } } : topLevelError(r);
  },
  async sweep(dir, olderThan) {
    const r = await run(['sweep', dir, '--older-than', `${olderThan}s`, '--json']);
    return r.json ? { result: r.json.count } : topLevelError(r);
  },
};

describe.concurrent('conformance corpus through the tokcap binary', () => {
  beforeAll(() => ensureBuilt(), 120_000);
  for (const c of loadCases()) {
    it(`${c.dirName}`, async () => {
      expect(await runCase(c, cli)).toEqual([]);
    });
  }
});
