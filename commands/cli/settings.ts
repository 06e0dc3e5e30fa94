/**
 * The environment, read into typed settings by one set of rules: the program, the work started
 * before the command line is parsed (./early-job.ts, ../watch/early.ts) and the commands all take
 * TOKCAP_WORKERS, TOKCAP_DIR and TOKCAP_DEBUG from here. ENVIRONMENT in ./options.ts documents
 * them.
 */
import { debugEnabled } from './errors.js';

export interface Settings {
  /** TOKCAP_DIR: DIR when the command line gives none (undefined when unset or empty). */
  readonly dir: string | undefined;
  /**
   * TOKCAP_WORKERS: threads in all, this one included, when it is a positive whole number (1: no
   * worker thread; 2 or more: workers whatever a job's size). Undefined (unset, 0 or anything
   * else): each job decides by its size.
   */
  readonly threads: number | undefined;
  /** TOKCAP_DEBUG: stack traces, and how many workers each job started. */
  readonly debug: boolean;
}

export function readSettings(env: NodeJS.ProcessEnv): Settings {
  const dir = env.TOKCAP_DIR;
  const workers = env.TOKCAP_WORKERS;
  return {
    dir: dir === undefined || dir === '' ? undefined : dir,
    threads: workers !== undefined && /^[1-9][0-9]*$/.test(workers) ? Number(workers) : undefined,
    debug: debugEnabled(env),
  };
}
