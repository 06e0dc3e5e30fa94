/**
 * The view state and the keys that change it. The state lives in a ref as well as in React
 * state: keys that arrive together are applied one after the other on the ref, without waiting
 * for a render (see ../keys.ts); and they apply to what is on screen, the key context of the
 * render last committed (`useKeyContext`).
 */
import { useLayoutEffect, useRef, useState, type RefObject } from 'react';
import { useApp, useInput } from 'ink';
import type { SortMode } from '../../../src/watch/rows.js';
import { initialUi, reduceKey, splitKeys, type KeyContext, type UiState } from '../keys.js';

/** The view state, and where the keys find their context (set by `useKeyContext`). */
export function useKeys(initialSort: SortMode | undefined): [UiState, RefObject<KeyContext | null>] {
  const { exit } = useApp();
  const [ui, setUi] = useState<UiState>(() => initialUi(initialSort));
  const uiRef = useRef(ui);
  const ctxRef = useRef<KeyContext | null>(null);
  useInput((input, key) => {
    let next = uiRef.current;
    for (const [i, k] of splitKeys(input, key)) {
      next = reduceKey(next, i, k, ctxRef.current!);
      if (next.quit) break;
    }
    if (next === uiRef.current) return;
    uiRef.current = next;
    setUi(next);
    if (next.quit) exit();
  });
  return [ui, ctxRef];
}

/** What the keys need, current as of this render: theirs once this render is on screen. */
export function useKeyContext(ctxRef: RefObject<KeyContext | null>, keyContext: KeyContext): void {
  useLayoutEffect(() => {
    ctxRef.current = keyContext;
  });
}
