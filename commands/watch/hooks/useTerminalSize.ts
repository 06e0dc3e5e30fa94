/**
 * The terminal's size, following resizes. Reads Ink's stdout (or the stream given, for tests);
 * defaults to 80x24 when the stream does not know.
 */
import { useEffect, useRef, useState } from 'react';
import { useStdout } from 'ink';

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
  const [size, setSize] = useState<TerminalSize>(() => readSize(target));
  // Compared here, not in an updater: an update that returns the same size still renders the app
  // and writes a whole frame (on the first screen's path: the effect below runs at mount).
  const shown = useRef(size);
  shown.current = size;
  useEffect(() => {
    const onResize = () => {
      const next = readSize(target);
      const prev = shown.current;
      if (prev.columns !== next.columns || prev.rows !== next.rows) setSize((shown.current = next));
    };
    onResize();
    target.on('resize', onResize);
    return () => {
      target.off('resize', onResize);
    };
  }, [target]);
  return size;
}
