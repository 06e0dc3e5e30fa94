/**
 * The terminal's size, following resizes. Reads Ink's stdout (or the stream given, for tests);
 * defaults to 80x24 when the stream does not know.
 */
import { useEffect } from 'react';
import { useStdout } from 'ink';
import { useShownState } from './use-shown-state.js';

export interface TerminalSize {
  columns: number;
  rows: number;
}

export interface SizedStream {
  columns?: number;
  rows?: number;
  on(event: 'resize', listener: () => void): unknown;
  off(event: 'resize', listener: () => void): unknown;
}

export function readSize(stream: SizedStream | undefined): TerminalSize {
  return { columns: stream?.columns || 80, rows: stream?.rows || 24 };
}

export function useTerminalSize(stream?: SizedStream): TerminalSize {
  const { stdout } = useStdout();
  const target: SizedStream = stream ?? (stdout as unknown as SizedStream);
  // Compared here, not in an updater: an update that returns the same size still renders the app
  // and writes a whole frame (on the first screen's path: the effect below runs at mount).
  const [size, setSize, shownSize] = useShownState<TerminalSize>(() => readSize(target));
  useEffect(() => {
    const onResize = () => {
      const next = readSize(target);
      const prev = shownSize();
      if (prev.columns !== next.columns || prev.rows !== next.rows) setSize(next);
    };
    onResize();
    target.on('resize', onResize);
    return () => {
      target.off('resize', onResize);
    };
  }, [target, setSize, shownSize]);
  return size;
}
