/**
 * A clock that ticks every `intervalMs` (ages and the "changed recently" highlight follow it),
 * while `ticking`: a screen that shows no age (no rows yet) is not drawn again each second for
 * nothing (at 100,000 rollouts that frame fell within the first load's stat pass). While not
 * ticking, each render reads the clock; when ticking starts, the value is read afresh.
 */
import { useEffect, useMemo, useState } from 'react';

export function useNow(clock: () => number = Date.now, intervalMs = 1000, ticking = true): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!ticking) return;
    const t = setInterval(() => setTick((n) => n + 1), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs, ticking]);
  // `tick` and `ticking` say when to read the clock again.
  const ticked = useMemo(() => clock(), [clock, tick, ticking]);
  return ticking ? ticked : clock();
}
