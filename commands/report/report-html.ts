/**
 * The bug report of one rollout as one self-contained HTML page: no network, no external asset,
 * inline CSS only. The chain tree, the verdict and its mask causes, the first divergence of each
 * broken boundary (both windows, the differing ids highlighted), then every placed call's text:
 * the prompt it adds and its generation shaded by log-prob band, each token's id (and log
 * probability) on hover. Every text from the store is HTML-escaped here; the page renders the
 * library's answers (src/rollout-read/rollout-detail.ts, src/divergence, src/call-text) and computes none.
 */
import type { TokenId } from '../../src/digest/token-digest.js';
import { LOG_PROB_BANDS, logProbBand, type CallTokens } from '../../src/call-text/call-tokens.js';
import type { Divergence } from '../../src/divergence/first-divergence.js';
import type { RolloutDetail, TreeNode } from '../../src/rollout-read/rollout-detail.js';
import type { TokenText } from '../../src/tokenizer/token-text.js';
import { divergenceLine, formatCount } from '../render/divergence-lines.js';

/** Tokens of one part shown before its middle is folded to a count. */
export const HTML_KEEP_HEAD = 2000;
export const HTML_KEEP_TAIL = 2000;

export interface ReportInput {
  readonly detail: RolloutDetail;
  /** Each placed call's tokens, in tree order. */
  readonly calls: readonly CallTokens[];
  readonly texts: ReadonlyMap<string, TokenText | null>;
  /** Why some ids are not decoded (no tokenizer found), one line each. */
  readonly notes: readonly string[];
  readonly generatedAt: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Text of a token made visible in a span: a line feed as `⏎` plus a real break, a tab as `⇥`. */
function visible(text: string): string {
  // eslint-disable-next-line no-control-regex
  const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
  return escapeHtml(text.replace(controls, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`))
    .replace(/\t/g, '⇥')
    .replace(/\n/g, '⏎\n');
}

interface TokenSpan {
  readonly ids: readonly TokenId[];
  /** Position of the first id in the call's sequence. */
  readonly at: number;
  readonly text: string;
  readonly cls?: string;
  readonly logProbs?: readonly number[];
}

function spans(ids: readonly TokenId[], text: TokenText | null, offset: number): TokenSpan[] {
  if (text) return text.pieces(ids).map((p) => ({ ids: p.ids, at: offset + p.index, text: p.text }));
  return ids.map((id, i) => ({ ids: [id], at: offset + i, text: `${String(id)} ` }));
}

function spanHtml(s: TokenSpan): string {
  const lp = s.logProbs?.length ? ` · log p ${s.logProbs.map((x) => x.toFixed(3)).join(', ')}` : '';
  const title = `id ${s.ids.map(String).join(', ')} · token ${s.at}${lp}`;
  return `<span class="t${s.cls ? ' ' + s.cls : ''}" title="${escapeHtml(title)}">${visible(s.text)}</span>`;
}

/** Folds the middle of a long run of spans to a count. */
function folded(all: TokenSpan[]): string {
  const count = all.reduce((n, s) => n + s.ids.length, 0);
  if (count <= HTML_KEEP_HEAD + HTML_KEEP_TAIL) return all.map(spanHtml).join('');
  let head = 0;
  let taken = 0;
  while (head < all.length && taken < HTML_KEEP_HEAD) taken += all[head++].ids.length;
  let tail = all.length;
  let kept = 0;
  while (tail > head && kept < HTML_KEEP_TAIL) kept += all[--tail].ids.length;
  const hidden = count - taken - kept;
  return `${all.slice(0, head).map(spanHtml).join('')}<span class="fold">… ${formatCount(hidden)} tokens folded …</span>${all.slice(tail).map(spanHtml).join('')}`;
}

function treeHtml(tree: readonly TreeNode[]): string {
  if (tree.length === 0) return '<p class="dim">no placed calls</p>';
  const rows = tree.map((n) => {
    const marks = [
      n.onMain ? 'main' : '',
      n.quarantined ? 'quarantined retry' : '',
      n.unresolvedRetry ? 'unresolved retry' : '',
    ].filter(Boolean);
    const cls = n.unresolvedBoundary ? 'bad' : n.quarantined || n.unresolvedRetry ? 'warn' : n.onMain ? 'ok' : '';
    const outcome =
      n.outcome === 'boundary' ? `unresolved (${n.reason ?? ''})` : n.outcome === 'linked' ? 'resolved' : n.outcome;
    return `<li class="${cls}" style="margin-left:${n.depth * 1.5}em"><a href="#call-${escapeHtml(n.id)}">${escapeHtml(n.id)}</a> · ${escapeHtml(outcome)} · prompt ${n.promptLength ?? '?'} · gen ${n.generationLength}${marks.length ? ` · <b>${escapeHtml(marks.join(', '))}</b>` : ''}</li>`;
  });
  return `<ul class="tree">${rows.join('')}</ul>`;
}

function windowHtml(
  label: string,
  w: Divergence['generated'],
  position: number | null,
  text: TokenText | null,
): string {
  const parts = spans(w.ids, text, w.start).map((s) => ({
    ...s,
    cls: position !== null && s.at + s.ids.length > position ? 'diff' : undefined,
  }));
  return `<div class="window"><div class="label">${escapeHtml(label)} <span class="dim">from token ${formatCount(w.start)}</span></div><pre class="tokens">${parts.map(spanHtml).join('')}</pre><div class="ids dim">[${w.ids.map(String).join(', ')}]</div></div>`;
}

function divergenceHtml(d: Divergence, text: TokenText | null): string {
  const [theirs, ours] =
    d.candidatePart === 'prompt' ? ["candidate's prompt", 'this prompt'] : ['generated', 're-rendered'];
  const windows =
    d.candidateParentId === null
      ? ''
      : windowHtml(`${theirs} (${d.candidateParentId})`, d.generated, d.position, text) +
        windowHtml(`${ours} (${d.callId})`, d.rerendered, d.position, text);
  return `<div class="divergence" id="divergence-${escapeHtml(d.callId)}"><p>${escapeHtml(divergenceLine(d, text))}</p><div class="windows">${windows}</div></div>`;
}

function callHtml(t: CallTokens, text: TokenText | null): string {
  const added = t.prompt.slice(t.inheritedLength);
  const inherited =
    t.inheritedLength > 0 && t.inheritedFrom !== null
      ? `<p class="dim">${formatCount(t.inheritedLength)} tokens ${t.parentId !== null ? `from its parent ${escapeHtml(t.inheritedFrom)}` : `shared with ${escapeHtml(t.inheritedFrom)}, the candidate parent`}, not repeated</p>`
      : '';
  const divergeAt = t.divergence?.position ?? null;
  const promptSpans = spans(added, text, t.inheritedLength).map((s) => ({
    ...s,
    cls: divergeAt !== null && s.at < divergeAt + 8 ? 'diff' : undefined,
  }));
  const genSpans = spans(t.generation, text, t.prompt.length).map((s) => {
    const lps = t.logProbs.slice(s.at - t.prompt.length, s.at - t.prompt.length + s.ids.length);
    const band = lps.reduce((b, lp) => Math.max(b, logProbBand(lp)), 0);
    return { ...s, cls: `b${band}`, logProbs: lps };
  });
  const model = t.model === '' ? '' : ` · ${escapeHtml(t.model)}`;
  return `<section class="call" id="call-${escapeHtml(t.callId)}"><h3>${escapeHtml(t.callId)}<span class="dim">${model} · prompt ${formatCount(t.prompt.length)} · generation ${formatCount(t.generation.length)}</span></h3>${inherited}<h4>prompt added by this call (${formatCount(added.length)} tokens)</h4><pre class="tokens">${folded(promptSpans)}</pre><h4>generation</h4><pre class="tokens">${folded(genSpans)}</pre></section>`;
}

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72em;padding:1em 2em;color:#1d1d1f;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #ddd;margin-top:1.6em}h3{font-size:1em;margin-bottom:.2em}h4{font-size:.9em;margin:.6em 0 .2em;color:#555}
.dim{color:#777;font-weight:normal;margin-left:.5em}.ok{color:#17702e}.warn{color:#8a5a00}.bad{color:#b00020}
.badge{display:inline-block;padding:0 .5em;border-radius:.6em;background:#eee;margin-right:.3em}.badge.masked{background:#f6d5ef}.badge.trainable{background:#d5f0dc}
ul.tree{list-style:none;padding-left:0;font-family:ui-monospace,monospace}
pre.tokens{white-space:pre-wrap;word-break:break-all;font:13px/1.5 ui-monospace,monospace;background:#fafafa;border:1px solid #eee;padding:.5em;margin:0}
.t:hover{outline:1px solid #555}.b1{background:#fff3bf}.b2{background:#ffd8a8}.b3{background:#ffa8a8}
.diff{background:#ffc9c9;box-shadow:inset 0 -2px #c92a2a}
.fold{display:inline-block;color:#555;background:#e9ecef;padding:0 .5em;margin:.2em 0}
.divergence{border-left:4px solid #c92a2a;padding:.3em .8em;margin:.8em 0;background:#fff5f5}
.windows{display:grid;grid-template-columns:1fr 1fr;gap:.8em}.window .label{font-weight:600}.ids{font:12px ui-monospace,monospace;word-break:break-all}
.legend span{padding:0 .4em;margin-right:.4em;border:1px solid #ddd}
`;

export function reportHtml(input: ReportInput): string {
  const d = input.detail;
  const v = d.verdict;
  const verdict = v.verdict ?? 'not built';
  const causes = v.causes.map((c) => `<li><b>${escapeHtml(c.code)}</b>: ${escapeHtml(c.message)}</li>`).join('');
  const textOf = (model: string) => input.texts.get(model) ?? null;
  const divergences = d.divergences.length
    ? d.divergences.map((x) => divergenceHtml(x, textOf(x.model))).join('')
    : '<p class="dim">no broken boundary</p>';
  const legend = LOG_PROB_BANDS.map((b) => `<span class="b${b.band}">${escapeHtml(b.label)}</span>`).join('');
  const notes = input.notes.map((n) => `<p class="warn">${escapeHtml(n)}</p>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>tokcap report: ${escapeHtml(d.id)}</title><style>${CSS}</style></head>
<body>
<h1>rollout ${escapeHtml(d.id)}</h1>
<p><span class="badge">${escapeHtml(d.status.status)}</span>${d.status.conditions.map((c) => `<span class="badge">${escapeHtml(c)}</span>`).join('')}<span class="badge ${escapeHtml(verdict)}">${escapeHtml(verdict)}</span><span class="dim">generated ${escapeHtml(input.generatedAt)} by tokcap</span></p>
${notes}
<h2>verdict and mask causes</h2>
${v.error ? `<p class="bad">${escapeHtml(v.error)}</p>` : ''}${causes ? `<ul>${causes}</ul>` : '<p class="ok">trainable: nothing masks it</p>'}
<h2>chain tree</h2>
${treeHtml(d.tree)}
<h2>first divergence</h2>
${divergences}
<h2>calls</h2>
<p class="legend">generated tokens by log-probability: ${legend} · hover a token for its id</p>
${input.calls.map((c) => callHtml(c, textOf(c.model))).join('\n')}
</body></html>
`;
}
