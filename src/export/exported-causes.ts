import type { MaskCause } from '../chains/mask-causes.js';

/** `mask_causes` as exported: `{code, message, calls?}` (calls only when the cause names calls). */
export function exportedCauses(causes: readonly MaskCause[]): Record<string, unknown>[] {
  return causes.map((c) =>
    c.calls !== undefined
      ? { code: c.code, message: c.message, calls: [...c.calls] }
      : { code: c.code, message: c.message },
  );
}
