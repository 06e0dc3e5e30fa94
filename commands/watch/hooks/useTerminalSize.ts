/**
 * The terminal's size, following resizes. Reads Ink's stdout (or the stream given, for tests);
 * defaults to 80x24 when the stream does not know.
 */
import { useEffect, useState } from 'react';
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
  useEffect(() => {
    const onResize = () => {
      const next = readSize(target);
      setSize((prev) => (prev.columns === next.columns && prev.rows === next.rows ? prev : next));
    };
    onResize();
    target.on('resize', onResize);
    return () => {
      target.off('resize', onResize);
    };
  }, [target]);
  return size;
}
