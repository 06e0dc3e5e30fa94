const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `s` has no lone surrogate (String.prototype.isWellFormed, with a fallback). */
export function isWellFormed(s: string): boolean {
  const native = (s as unknown as { isWellFormed?: () => boolean }).isWellFormed;
  return native !== undefined ? native.call(s) : !LONE_SURROGATE.test(s);
}
