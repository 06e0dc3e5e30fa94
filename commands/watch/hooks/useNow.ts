/** A clock that ticks every `intervalMs` (ages and the "changed recently" highlight follow it). */
import { useEffect, useState } from 'react';

export function useNow(clock: () => number = Date.now, intervalMs = 1000): number {
  const [now, setNow] = useState(clock);
  useEffect(() => {
    const t = setInterval(() => setNow(clock()), intervalMs);
    return () => clearInterval(t);
  }, [clock, intervalMs]);
  return now;
}
