/**
 * The one escaping function for text that came from a store (rollout ids, call ids, intent lines,
 * markers, file names, error texts) before it reaches a terminal (docs/cli.md#terminal-safety).
 *
 * Escaped: C0 controls, DEL, C1 controls (a raw ESC or CSI starts a sequence that can retitle the
 * pane, clear or spoof the screen), the bidirectional marks, embeddings, overrides and isolates
 * (they reorder what the reader sees), and the Unicode line and paragraph separators (they break
 * a line on some terminals). Each is shown as `\xHH` (up to U+00FF) or `\uHHHH`, so the text keeps
 * one printable form and the escaped form is idempotent (escaping twice changes nothing).
 */

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const UNSAFE_KEEP_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

export interface TerminalSafeOptions {
  /** Keep `\n` as a line break (for whole blocks of output composed by tokcap itself). */
  keepNewlines?: boolean;
}

/** `text` with every character that could control or reorder a terminal shown escaped. */
export function terminalSafe(text: string, options: TerminalSafeOptions = {}): string {
  const re = options.keepNewlines ? UNSAFE_KEEP_NEWLINE : UNSAFE;
  re.lastIndex = 0;
  return re.test(text) ? text.replace(re, escapeChar) : text;
}
