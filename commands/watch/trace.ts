/**
 * TOKCAP_TRACE=FILE: `tokcap watch` writes when each stage of its start and load happened (ms
 * since the process started, one `<ms> <event>` line each) to FILE. For finding the critical
 * path of the first screen on a real terminal; nothing is recorded without it.
 */
import { appendFileSync, writeFileSync } from 'node:fs';

export type Trace = (event: string) => void;

export function traceFromEnv(env: NodeJS.ProcessEnv): Trace | undefined {
  const file = env.TOKCAP_TRACE;
  if (file === undefined || file === '') return undefined;
  // Line by line (a few tens of µs each): a terminal closed under the view ends the process
  // without an 'exit' event.
  const write = (text: string, first = false) => {
    try {
      (first ? writeFileSync : appendFileSync)(file, text);
    } catch {
      // a trace that cannot be written is not the user's problem
    }
  };
  write('', true);
  return (event) => write(`${performance.now().toFixed(1)} ${event}\n`);
}
