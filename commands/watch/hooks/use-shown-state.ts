/**
 * useState for what is on screen: its setter does nothing when handed the value shown already
 * (Object.is); an updater function goes to React as it is. Setting an equal value can still render the app again, and Ink then writes a
 * whole frame; the watch's hooks set their state in effects that run at mount, on the first
 * screen's path (0.2-0.4 s for a cold second frame).
 */
import { useCallback, useRef, useState } from 'react';

/**
 * The state, its setter, and the value shown now (for effects that compare before setting). Not
 * for function values: a function handed to the setter is an updater, as with useState.
 */
export function useShownState<T>(initial: T | (() => T)): [T, (next: T | ((prev: T) => T)) => void, () => T] {
  const [state, setState] = useState<T>(initial);
  const shown = useRef(state);
  shown.current = state;
  const set = useCallback((next: T | ((prev: T) => T)) => {
    if (typeof next === 'function') return setState(next as (prev: T) => T);
    if (Object.is(next, shown.current)) return;
    shown.current = next;
    setState(next);
  }, []);
  const current = useCallback(() => shown.current, []);
  return [state, set, current];
}
