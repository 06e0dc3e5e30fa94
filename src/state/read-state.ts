import { TokcapError } from '../errors.js';
import { readRegularFileSync } from '../layout/safe-open.js';
import { parseJsonBytes, type JsonBytesReader } from '../json/parse-json.js';
import { isJsonObject } from '../json/value.js';
import { defaultStateData, type RolloutState } from './rollout-state.js';

/**
 * Reads `<R>.tokens.state.json` (docs/format.md#state-defaults). Missing → defaults. Not JSON → `corrupt`
 * (JSONDecodeError). Not an object → `corrupt` with the reference's ValueError message.
 */
export async function readState(statePath: string, rolloutId: string): Promise<RolloutState> {
  return readStateSync(statePath, rolloutId);
}

/** `readState` with synchronous calls: for a caller holding the rollout's lock (a freeze). */
export function readStateSync(statePath: string, rolloutId: string): RolloutState {
  const bytes = readRegularFileSync(statePath, rolloutId);
  if (bytes === undefined) return { exists: false, data: defaultStateData() };
  return parseStateBytes(bytes, statePath, rolloutId);
}

/** `jsonReader`: the calling thread's reader, when it reads many rollouts (default: one for this file). */
export function parseStateBytes(
  bytes: Uint8Array,
  statePath: string,
  rolloutId: string,
  jsonReader?: JsonBytesReader,
): RolloutState {
  let value;
  try {
    value = jsonReader ? jsonReader.read(bytes) : parseJsonBytes(bytes);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new TokcapError('corrupt', msg, { rolloutId, file: statePath, pyClass: 'JSONDecodeError', cause: e });
  }
  if (!isJsonObject(value)) {
    throw new TokcapError('corrupt', `Invalid token-capture state for rollout ${rolloutId}`, {
      rolloutId,
      file: statePath,
      pyClass: 'ValueError',
    });
  }
  return { exists: true, data: value };
}
