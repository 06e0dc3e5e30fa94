/**
 * The records and intents of a rollout copied under its lock, with the markers opened too: every
 * capture file a rollout's answer needs must be a regular file that opens (the status read asks
 * the same), so a copy fails before anything is built or written when one is not.
 */
import { readIntoCopyBuffer } from '../jsonl/read-into-copy-buffer.js';
import type { RolloutPaths } from '../layout/file-names.js';
import { readRegularFileSync, withRegularFdSync } from '../layout/safe-open.js';

export function copyRecordFiles(
  paths: RolloutPaths,
  rolloutId: string,
): { j: ReturnType<typeof readIntoCopyBuffer>; intentBytes: Buffer | undefined } {
  const j = readIntoCopyBuffer(paths.jsonl, rolloutId);
  try {
    const intentBytes = readRegularFileSync(paths.intents, rolloutId);
    withRegularFdSync(paths.incomplete, rolloutId, () => undefined);
    return { j, intentBytes };
  } catch (e) {
    j?.release();
    throw e;
  }
}
