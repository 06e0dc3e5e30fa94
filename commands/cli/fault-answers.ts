/**
 * What every command answers for each fault a store can have (docs/cli.md#faults): one table,
 * rendered into README.md, tokcap(1) and docs/cli.md by `npm run man` (commands/docs.ts). The
 * fault-matrix suite (test/faults/fault-matrix.test.ts) checks these answers command by command.
 */

export interface FaultAnswer {
  fault: string;
  /** The rollout's status, conditions and verdict: the same in every command. */
  answer: string;
  /** inspect, build, verify-digests, export, watch. */
  readers: string;
  /** freeze, build --freeze, export --freeze, retire, delete, sweep. */
  writers: string;
}

export const FAULT_ANSWERS: readonly FaultAnswer[] = [
  {
    fault: 'a capture file (J, S, I, M) absent or empty',
    answer: 'what the files present say (`missing_state` without S; an empty S does not parse: next rows)',
    readers: 'as usual',
    writers: 'as usual',
  },
  {
    fault: 'J, S, I or M not a regular file (FIFO, directory, symbolic link inside or outside DIR) or not readable',
    answer: '`unavailable`, verdict `unavailable`',
    readers:
      'the rollout on stderr, exit 3; never counted trainable, verified or ok; left out of exports; its unread values `-` in text, null in JSON',
    writers:
      'a freeze refuses before writing (exit 3, nothing changed); retire, delete and sweep remove the name itself, never a target',
  },
  {
    fault: 'S that does not parse (corrupt bytes, invalid UTF-8, empty)',
    answer: 'condition `corrupt`; the version unknown (`-`, null in watch)',
    readers: 'exit 3 (verify-digests: finding `state_unreadable`, exit 1); build: a failed build',
    writers: 'a freeze refuses before writing (exit 3)',
  },
  {
    fault: 'I with invalid UTF-8',
    answer: 'condition `corrupt`',
    readers: 'exit 3; build: a failed build',
    writers:
      'a freeze writes first, as the reference does, then says so: `frozen at snapshot S, version V; then: ...`, exit 3',
  },
  {
    fault: 'J with a line that is not an entry, past the index',
    answer: 'conditions `corrupt`, `unindexed_tail`',
    readers: 'exit 3 (verify-digests: a finding, exit 1)',
    writers: 'a freeze refuses before writing (exit 3)',
  },
  {
    fault: 'J with a torn tail (a huge one too)',
    answer: 'conditions `torn_tail`, `unindexed_tail`',
    readers: 'as usual: the preview leaves the tail out',
    writers: 'a freeze cuts the tail off',
  },
  {
    fault: "the rollout's lock held, J fully indexed",
    answer: '`live`, verdict `unavailable`',
    readers:
      'the summary (inspect) as usual; what needs the records (build, verify-digests, export, `--deep`, `inspect DIR ID`, watch) waits `--lock-wait`, then exit 3 (`lock_timeout`)',
    writers: 'wait `--lock-wait`, then exit 3, nothing changed',
  },
  {
    fault: 'the lock held after an unindexed append',
    answer: '`unavailable`, verdict `unavailable`',
    readers: 'wait `--lock-wait`, then exit 3',
    writers: 'wait `--lock-wait`, then exit 3, nothing changed',
  },
  {
    fault: 'the lock file not a regular file or not openable',
    answer: 'status as read, verdict `unavailable`',
    readers: 'the summary as usual; what needs the records exit 3',
    writers: 'exit 3, nothing changed',
  },
  {
    fault: 'DIR not readable, missing or not a directory',
    answer: '-',
    readers: '`tokcap: DIR: permission denied` (or `no such directory`, `not a directory`), exit 3',
    writers: 'the same',
  },
  {
    fault: 'DIR read-only, or its disk full',
    answer: 'as read',
    readers: 'as usual',
    writers: 'the write fails, exit 3, the store as it was (state files are replaced atomically)',
  },
];

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** The table as Markdown. */
export function faultAnswersMarkdown(): string {
  const rows = FAULT_ANSWERS.map(
    (f) => `| ${cell(f.fault)} | ${cell(f.answer)} | ${cell(f.readers)} | ${cell(f.writers)} |`,
  );
  return [
    '| fault | status and verdict (every command) | read-only commands | commands that write |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
