/**
 * `tokcap doctor` in the option table (../cli/options.ts): its help, arguments, options, examples
 * and usage checks. The program, `--help`, the man page and completion are made from it.
 */
import { parseDuration } from '../cli/duration.js';
import { DIR_ARG } from '../cli/common-options.js';
import type { CommandSpec } from '../cli/option-types.js';

export const DOCTOR_COMMAND: CommandSpec<'doctor'> = {
  name: 'doctor',
  summary: 'Check that a filesystem is safe for tokcap (locks, renames, clocks, space)',
  description: [
    "Runs the checks a person runs before trusting a filesystem with a capture directory, each with a one-line verdict: the filesystem type and mount options, and what they mean for locks (NFS `local_lock=flock|all` or `nolock` and Lustre `localflock` make locks local to one node; Lustre `noflock` has none); that an exclusive `flock` taken by one process excludes another process on this node, both ways, and that Python's `fcntl.flock` and tokcap exclude each other (when python3 is installed); that an atomic rename and a directory fsync work in DIR; the clock skew between this node and the file server (a new file's mtime against the local clock) and what it does to `sweep --older-than`; free space and inodes.",
    'Exit 1 when something found makes tokcap unsafe there (locks that do not exclude, a failed rename or fsync, a clock more than a minute off, no space or inodes left); 0 otherwise. Its files in DIR are dot-files that no capture scanner reads, removed before it exits (also on Ctrl-C).',
    'Across nodes: `tokcap doctor DIR --hold 60s` on one node takes an exclusive lock for that long; `tokcap doctor DIR --probe` on another node, started meanwhile, says whether that lock excludes it there (exit 1 when it does not). docs/cluster.md runs the pair as a two-task Slurm job.',
  ].join('\n\n'),
  args: [
    {
      ...DIR_ARG,
      description: 'the directory to check: the capture directory, or where one will be (default: $TOKCAP_DIR)',
    },
  ],
  options: {
    hold: {
      flags: '--hold <duration>',
      description:
        'two-node check: hold an exclusive lock in DIR for this long (run --probe on another node meanwhile)',
      parse: (raw) => parseDuration(raw, 'a hold needs a unit, e.g. 60s or 5m'),
    },
    probe: {
      flags: '--probe',
      description:
        'two-node check: try the lock that `--hold` holds on another node; exit 1 when it is granted (locks are local to each node)',
    },
    wait: {
      flags: '--wait <duration>',
      description: 'with --probe: how long to wait for the holder to start',
      default: 60,
      defaultLabel: '60s',
      parse: (raw) => parseDuration(raw, 'a wait needs a unit, e.g. 60s'),
    },
  },
  examples: [
    {
      command: 'tokcap doctor /lustre/captures',
      description: 'Check the filesystem of a capture directory on this node.',
    },
    { command: 'tokcap doctor /lustre/captures --json', description: 'The checks as one JSON document.' },
    {
      command: 'tokcap doctor /lustre/captures --hold 60s   # on node A',
      description: 'Hold a lock for a minute, for a probe from another node.',
    },
    {
      command: 'tokcap doctor /lustre/captures --probe      # on node B, meanwhile',
      description: 'Does the lock held on node A exclude this node?',
    },
  ],
  idValidation: 'none',
  mutates: () => false,
  check: ({ options }) => {
    if (options.hold !== undefined && options.probe)
      return 'doctor: --hold and --probe are the two ends of one check: run them on two nodes';
    return undefined;
  },
};
