/**
 * tokcap report DIR ID --out FILE.html — one rollout's bug report as a self-contained HTML page
 * (commands/report/report-html.ts): the detail `inspect DIR ID` shows, every call's text and the first
 * divergence of each broken boundary. Read-only on the store; the page is written beside its
 * final name and renamed into place, never inside DIR.
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { callTokens, type CallTokens } from '../../src/call-text/call-tokens.js';
import { noCaptureFilesError, TokcapError } from '../../src/errors.js';
import { refuseTargetInStore, tempPathFor } from '../../src/export/atomic-output.js';
import { scanDirectory } from '../../src/layout/scan-directory.js';
import { loadRolloutDetail } from '../../src/rollout-read/rollout-detail.js';
import type { CommandContext } from '../cli/context.js';
import { couldNotBeRead } from '../cli/errors.js';
import { reportHtml } from './report-html.js';

import { CommandTokenizers, textsByModel, tokenizerSource } from '../cli/tokenizers.js';

export async function run(ctx: CommandContext<'report'>): Promise<void> {
  if (ctx.ids.length !== 1) throw new TokcapError('usage', 'report: give exactly one rollout ID');
  const [id] = ctx.ids;
  const out = ctx.options.out;
  if (!/\.html?$/i.test(out))
    throw new TokcapError('usage', `report: --out ${out}: the report is an HTML file (name it FILE.html)`);
  await refuseTargetInStore(out, [ctx.dir]);
  const listing = await scanDirectory(ctx.dir);
  if (!listing.rollouts.has(id)) throw noCaptureFilesError({ rolloutId: id });
  const detail = await loadRolloutDetail(ctx.store, id, {}, { deep: true });
  const unread = detail.status.error ?? detail.recordsError;
  if (unread) throw new TokcapError(unread.kind, `${id}: ${couldNotBeRead(unread)}`, { rolloutId: id });

  const calls: CallTokens[] = [];
  if (detail.build) {
    for (const n of detail.tree) {
      const t = callTokens(detail.build, n.id, detail.divergences);
      if (t) calls.push(t);
    }
  }
  const notes: string[] = [];
  const tokenizers = new CommandTokenizers(tokenizerSource(ctx.options.tokenizer, ctx.env), (line) => {
    notes.push(line);
    ctx.warn(line);
  });
  const texts = await textsByModel(tokenizers, [
    ...calls.map((c) => c.model),
    ...detail.divergences.map((d) => d.model),
  ]);
  const html = reportHtml({ detail, calls, texts, notes, generatedAt: new Date().toISOString() });

  const temp = tempPathFor(out);
  try {
    await writeFile(temp, html, { flag: 'wx' });
    await rename(temp, out);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
  ctx.json({
    out,
    rollout_id: id,
    calls: calls.length,
    divergences: detail.divergences.length,
    decoded: [...texts.values()].some((t) => t !== null),
  });
  ctx.out(
    `wrote ${out}: rollout ${id}, ${calls.length} call${calls.length === 1 ? '' : 's'}, ${detail.divergences.length} divergence${detail.divergences.length === 1 ? '' : 's'}`,
  );
}
