/**
 * Loads the detail of one rollout (asynchronously, through the loader the app was given) and
 * reloads it whenever the rollout's row changes (its `seq`). The previous detail stays on screen
 * while a reload runs, so a live rollout does not flicker.
 */
import { useEffect, useState } from 'react';
import type { RolloutDetail } from '../../../src/status/rollout-detail.js';

export type DetailLoader = (id: string) => Promise<RolloutDetail>;

export interface DetailState {
  detail: RolloutDetail | null;
  loading: boolean;
  error?: string;
}

export function useRolloutDetail(load: DetailLoader, id: string | null, seq: number): DetailState {
  const [state, setState] = useState<DetailState>({ detail: null, loading: id !== null });
  useEffect(() => {
    if (id === null) {
      setState({ detail: null, loading: false });
      return;
    }
    let live = true;
    setState((s) => ({ detail: s.detail?.id === id ? s.detail : null, loading: true }));
    load(id).then(
      (detail) => {
        if (live) setState({ detail, loading: false });
      },
      (e: unknown) => {
        if (live) setState((s) => ({ detail: s.detail?.id === id ? s.detail : null, loading: false, error: e instanceof Error ? e.message : String(e) }));
      },
    );
    return () => {
      live = false;
    };
  }, [load, id, seq]);
  return state;
}
