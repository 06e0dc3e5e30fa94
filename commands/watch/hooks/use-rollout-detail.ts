/**
 * Loads the detail of one rollout (asynchronously, through the loader the app was given) and
 * reloads it whenever the rollout's row changes (its `seq`). The previous detail stays on screen
 * while a reload runs, so a live rollout does not flicker.
 */
import { useEffect } from 'react';
import { useShownState } from './use-shown-state.js';
import type { RolloutDetail } from '../../../src/rollout-read/rollout-detail.js';

/** `text`: the view shows a call's text, so its loader decodes every model of the rollout. */
export type DetailLoader = (id: string, options?: { text?: boolean }) => Promise<RolloutDetail>;

export interface DetailState {
  detail: RolloutDetail | null;
  loading: boolean;
  error?: string;
}

/** No rollout open. */
const CLOSED: DetailState = { detail: null, loading: false };

export function useRolloutDetail(load: DetailLoader, id: string | null, seq: number, text = false): DetailState {
  // Closed at mount stays the same CLOSED, not an equal new state: this effect runs at mount, on
  // the first screen's path, and a new state would render the app and write a whole frame.
  const [state, setState] = useShownState<DetailState>(id === null ? CLOSED : { detail: null, loading: true });
  useEffect(() => {
    if (id === null) {
      setState(CLOSED);
      return;
    }
    let live = true;
    setState((s) => ({ detail: s.detail?.id === id ? s.detail : null, loading: true }));
    load(id, text ? { text } : undefined).then(
      (detail) => {
        if (live) setState({ detail, loading: false });
      },
      (e: unknown) => {
        if (live)
          setState((s) => ({
            detail: s.detail?.id === id ? s.detail : null,
            loading: false,
            error: e instanceof Error ? e.message : String(e),
          }));
      },
    );
    return () => {
      live = false;
    };
  }, [load, id, seq, text, setState]);
  return state;
}
