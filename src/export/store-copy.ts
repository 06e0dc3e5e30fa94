/**
 * `export --format store`: the chosen rollouts copied as a capture directory
 * (docs/cli.md#export-formats), the way to cut a CI fixture out of a production store.
 *
 * - Each rollout's files (J, S, I, M) are copied under ONE shared lock (src/ops/rollout-copy.ts,
 *   docs/format.md#lock-modes: no lock file created in the source), so the copy of a rollout is of one
 *   moment: the state's index matches the J it was copied with.
 * - Bytes are unchanged (entry lines byte for byte, a torn tail included), so `verify-digests`
 *   of the copy finds exactly what it finds on the source for those rollouts.
 * - No lock files and no temporary state files are copied; the copy's lock files appear when
 *   something locks a rollout there.
 * - The copy is built in a temporary sibling of the target (`.<name>.tokcap-tmp-<hex>`, a name
 *   no reader takes for a capture directory), every file fsynced, and renamed into place at the
 *   end: an interrupted copy leaves nothing at the target (a SIGKILL can leave the sibling, safe to
 *   delete). With --force into a directory that is not empty, the finished files are moved in
 *   at the end, rollout by rollout, each state file last. Modes are the writer's (S 0600, the
 *   others 0666 less the umask); the source's mtimes are kept, so ages (`sweep --older-than`)
 *   read the same in the copy.
 * - A rollout whose lock cannot be had in time, or one of whose files cannot be read, is left
 *   out (never half copied) and reported.
 */
import { closeSync, fsync, openSync, renameSync, rmSync, utimesSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { TokcapError, ioError } from '../errors.js';
import { rolloutPaths } from '../layout/file-names.js';
import { spanBytes, type CopiedKind, type RolloutCopyRecord } from '../ops/rollout-copy.js';
import { checkOutputTarget, fsyncDirectory, tempPathFor } from './atomic-output.js';

const fsyncAsync = promisify(fsync);

/** Write order within a rollout: the records and side files, then the state that indexes them. */
const WRITE_ORDER: readonly CopiedKind[] = ['jsonl', 'intents', 'incomplete', 'state'];

/** docs/format.md#files: the state file is 0600; the writer creates the others 0666 less the umask. */
const MODES: Record<CopiedKind, number> = { jsonl: 0o666, intents: 0o666, incomplete: 0o666, state: 0o600 };

function usage(message: string): TokcapError {
  return new TokcapError('usage', message);
}

/**
 * Checks the target directory before anything is read: absent (created later), or an empty
 * directory; a directory that is not empty only with `force` (the copied rollouts' files are then
 * replaced, other files left alone). Never the capture directory, nor a directory inside it or
 * containing it; never a file or a symbolic link. Throws usage errors.
 */
export async function checkStoreTarget(target: string, source: string, force: boolean): Promise<void> {
  // Parent, symbolic link, and "is or contains the capture directory" as for any target.
  await checkOutputTarget(target, {
    kind: 'directory',
    force: true,
    protect: [source],
    replaceableDirectory: async () => true,
  });
  let st;
  try {
    st = await lstat(target);
  } catch {
    return;
  }
  if (!st.isDirectory()) throw usage(`--out ${target}: exists and is not a directory; a store copy is a directory`);
  if (!force && (await readdir(target)).length > 0) {
    throw usage(
      `--out ${target}: is not empty; use --force to copy into it (the copied rollouts' files are replaced, other files left alone)`,
    );
  }
}

/** A file the copy has (moved into the target at the end) or has not (removed there with --force). */
interface Placement {
  name: string;
  present: boolean;
}

/**
 * Writes rollout copies into a temporary sibling of the target directory and puts them in place
 * with `finish` (see the module comment).
 */
export class StoreCopyWriter {
  private readonly placements: Placement[] = [];
  private done = false;

  private constructor(
    readonly target: string,
    /** The temporary sibling the files are written into. */
    readonly dir: string,
    /** The target exists and is not empty (--force): files are moved in one by one. */
    private readonly merge: boolean,
  ) {}

  /** Creates the temporary sibling (see `checkStoreTarget` for the target). */
  static async open(target: string): Promise<StoreCopyWriter> {
    let merge = false;
    try {
      merge = (await readdir(target)).length > 0;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError(e, target);
    }
    const staging = tempPathFor(resolve(target));
    try {
      await mkdir(staging, { mode: 0o777 });
    } catch (e) {
      throw ioError(e, staging);
    }
    return new StoreCopyWriter(target, staging, merge);
  }

  /** The temporary file being written, for `discardSync`. */
  private temp: string | undefined;

  /**
   * Writes one rollout's copied files. A kind the source did not have is removed from the target
   * at the end (only there when `--force` copies into a store that had the rollout), so the copy
   * of the rollout is the source's, not a mix.
   */
  async writeRollout(arena: Uint8Array, record: RolloutCopyRecord): Promise<void> {
    const paths = rolloutPaths(this.dir, record.rolloutId);
    for (const kind of WRITE_ORDER) {
      const bytes = spanBytes(arena, record.spans[kind]);
      this.placements.push({ name: basename(paths[kind]), present: bytes !== undefined });
      if (bytes !== undefined) await this.writeFile(paths[kind], bytes, MODES[kind], record.stamps[kind]?.mtimeMs);
    }
  }

  /**
   * A temporary name beside `path`, written, fsynced, given the mtime, renamed into place. The
   * temporary file is created and renamed synchronously, so whenever a signal handler can run
   * (only during the fsync) `this.temp` names exactly the file that exists.
   */
  private async writeFile(path: string, bytes: Uint8Array, mode: number, mtimeMs: number | undefined): Promise<void> {
    const temp = tempPathFor(path);
    let fd: number | undefined;
    try {
      fd = openSync(temp, 'wx', mode);
      this.temp = temp;
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      await fsyncAsync(fd);
      closeSync(fd);
      fd = undefined;
      // In seconds as a number: a Date keeps whole milliseconds only, and libuv's conversion can
      // then lose one more, so the copy's mtime could differ from the source's by over 1 ms.
      if (mtimeMs !== undefined) utimesSync(temp, new Date(), mtimeMs / 1000);
      renameSync(temp, path);
      this.temp = undefined;
    } catch (e) {
      if (fd !== undefined) closeSync(fd);
      rmSync(temp, { force: true });
      this.temp = undefined;
      // The output's failure, not the rollout's: the rollout was read.
      throw ioError(e, path);
    }
  }

  /** Puts the copy in place: one rename of the directory, or (merge) each file moved in. */
  async finish(): Promise<void> {
    await fsyncDirectory(this.dir);
    if (!this.merge) {
      try {
        // Onto an absent or empty target: rename(2) replaces an empty directory.
        await rename(this.dir, this.target);
      } catch (e) {
        throw ioError(e, this.target);
      }
      this.done = true;
      await fsyncDirectory(dirname(resolve(this.target)));
      return;
    }
    for (const { name, present } of this.placements) {
      const to = join(this.target, name);
      try {
        if (present) renameSync(join(this.dir, name), to);
        else rmSync(to, { force: true });
      } catch (e) {
        throw ioError(e, to);
      }
    }
    this.done = true;
    await fsyncDirectory(this.target);
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }

  /** Removes the temporary sibling (nothing once `finish` put the copy in place). */
  async discard(): Promise<void> {
    if (this.done) return;
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }

  /** `discard` for signal handlers: synchronous. */
  discardSync(): void {
    if (this.done) return;
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch {
      // best effort: the process is going away
    }
    this.temp = undefined;
  }
}
