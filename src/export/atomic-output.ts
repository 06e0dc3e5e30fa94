import { randomBytes } from 'node:crypto';
import { constants as fsConstants, renameSync, rmSync } from 'node:fs';
import {
  link,
  lstat,
  mkdir,
  open,
  readFile,
  readdir,
  realpath,
  rename,
  rm,
  stat,
  unlink,
  type FileHandle,
} from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, isAbsolute, sep } from 'node:path';
import { TokcapError, ioError } from '../errors.js';

/**
 * Atomic output for `export`: everything is written under a temporary name beside the target
 * (same directory, so the final rename stays on one filesystem) and renamed into place only
 * when complete. An interrupted export leaves nothing at the target.
 *
 * Temporary names are `.<target name>.tokcap-tmp-<12 hex>`: a dot-file with a suffix no reader
 * matches (`*.jsonl`, `iteration_*`, a run directory's `config.json`). A SIGKILL can leave one
 * behind; it is safe to delete. On SIGINT/SIGTERM the CLI removes it (`discardSync`).
 */

export type OutputKind = 'file' | 'directory';

export interface OutputTargetOptions {
  kind: OutputKind;
  /** Replace an existing target (atomically for a file; rename-aside-then-remove for a directory). */
  force: boolean;
  /**
   * Directories that must never be replaced or removed (the capture directory): a target that
   * is one of them or contains one is refused, with or without force.
   */
  protect?: readonly string[];
  /**
   * For a directory target with force: an existing directory is replaced only if it is empty or
   * this returns true for it (export: "it is a previous tokcap export"). Default: only empty.
   */
  replaceableDirectory?: (path: string) => Promise<boolean>;
}

export const TEMP_MARKER = '.tokcap-tmp-';
export const OLD_MARKER = '.tokcap-old-';

/** `.<name>.tokcap-tmp-<hex>` beside `target`. */
export function tempPathFor(target: string, marker: string = TEMP_MARKER): string {
  return join(dirname(target), `.${basename(target)}${marker}${randomBytes(6).toString('hex')}`);
}

/** True for names this module creates (temporary or set-aside outputs). */
export function isTemporaryOutputName(name: string): boolean {
  return /^\..*\.tokcap-(tmp|old)-[0-9a-f]{12}$/.test(name);
}

function usage(message: string): TokcapError {
  return new TokcapError('usage', message);
}

type Existing = { kind: 'absent' } | { kind: 'file' | 'directory' | 'other'; isSymlink: boolean };

async function existing(path: string): Promise<Existing> {
  let st;
  try {
    st = await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw usage(`--out ${path}: cannot be checked (${(e as Error).message})`);
  }
  if (st.isSymbolicLink()) return { kind: 'file', isSymlink: true };
  return { kind: st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other', isSymlink: false };
}

/**
 * Renaming onto a symbolic link replaces the link, not what it points to: never what was meant
 * (`--out /dev/stdout --force` as root would put a file in place of /dev/stdout).
 */
function symlinkRefused(target: string): TokcapError {
  return usage(`--out ${target}: is a symbolic link; not replacing it (name the file itself)`);
}

function within(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

async function realOrResolved(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    return resolve(p);
  }
}

/**
 * Where `p` would be written: the real path of its longest existing ancestor (symbolic links
 * resolved) joined with the part that does not exist yet.
 */
export async function resolvedTarget(p: string): Promise<string> {
  let head = resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(await realpath(head), ...rest.reverse());
    } catch {
      const up = dirname(head);
      if (up === head) return resolve(p);
      rest.push(basename(head));
      head = up;
    }
  }
}

/**
 * `export` never writes into the store it reads (docs/cli.md#export-formats): a target that
 * resolves into one of `stores` (or is one of them, or contains one) is a usage error, in every
 * format, with or without --force, before anything is read or written.
 */
export async function refuseTargetInStore(target: string, stores: readonly string[]): Promise<void> {
  const real = await resolvedTarget(target);
  for (const store of stores) {
    const storeReal = await realOrResolved(store);
    if (within(storeReal, real)) throw usage(`--out ${target}: refusing to write over the capture directory ${store}`);
    if (within(real, storeReal))
      throw usage(
        `--out ${target}: is inside the capture directory ${store}; export never writes into the store it reads`,
      );
  }
}

/**
 * Checks a target before anything is read: its directory exists, and the target is absent or
 * may be replaced. Throws usage errors (exit 2) naming the path.
 */
export async function checkOutputTarget(target: string, options: OutputTargetOptions): Promise<void> {
  if (target === '' || basename(target) === '' || basename(resolve(target)) === '')
    throw usage(`--out '${target}': not a file name`);
  if (target.endsWith(sep) && options.kind === 'file') throw usage(`--out ${target}: names a directory, not a file`);
  await refuseTargetInStore(target, options.protect ?? []);
  const parent = dirname(resolve(target));
  let pst;
  try {
    pst = await stat(parent);
  } catch {
    throw usage(`--out ${target}: directory ${parent} does not exist`);
  }
  if (!pst.isDirectory()) throw usage(`--out ${target}: ${parent} is not a directory`);
  const ex = await existing(target);
  if (ex.kind === 'absent') return;
  if (ex.isSymlink) throw symlinkRefused(target);
  if (!options.force) throw usage(`--out ${target} already exists; use --force to replace it`);
  if (ex.kind === 'other')
    throw usage(`--out ${target}: exists and is not a regular file or directory; not replacing it`);
  if (ex.kind === 'directory') {
    if (options.kind === 'file') throw usage(`--out ${target}: is a directory; not replacing it with a file`);
    const empty = (await readdir(target)).length === 0;
    const ok = empty || ((await options.replaceableDirectory?.(target)) ?? false);
    if (!ok) throw usage(`--out ${target}: refusing to replace a directory that is not empty and not a tokcap export`);
  }
}

/** fsync a directory (best effort where the platform refuses it). */
export async function fsyncDirectory(path: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, fsConstants.O_RDONLY);
    await fh.sync();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'ENOTSUP') throw ioError(e, path);
  } finally {
    await fh?.close();
  }
}

type State = 'open' | 'committing' | 'aside' | 'committed' | 'discarded';

/**
 * A temporary file or directory beside `target`, renamed into place by `commit()`.
 * `create` checks the target first (see `checkOutputTarget`).
 */
export class AtomicOutput {
  private state: State = 'open';
  private asidePath: string | undefined;

  private constructor(
    readonly target: string,
    readonly tempPath: string,
    readonly kind: OutputKind,
    private readonly options: OutputTargetOptions,
  ) {}

  static async create(target: string, options: OutputTargetOptions): Promise<AtomicOutput> {
    await checkOutputTarget(target, options);
    const temp = tempPathFor(target);
    try {
      if (options.kind === 'directory') await mkdir(temp, { mode: 0o777 });
      else await (await open(temp, 'wx', 0o666)).close();
    } catch (e) {
      throw ioError(e, temp);
    }
    return new AtomicOutput(target, temp, options.kind, options);
  }

  get finished(): boolean {
    return this.state === 'committed' || this.state === 'discarded';
  }

  /**
   * Moves the temporary output into place. Without force, a target that appeared meanwhile is
   * not overwritten (a file is linked into place, which fails if the name exists). With force,
   * a file is replaced by one rename; a directory (or a file replaced by a directory) is renamed
   * aside first, the new one renamed in, then the old one removed.
   */
  async commit(): Promise<void> {
    if (this.state !== 'open') throw new Error(`internal: commit of an output that is ${this.state}`);
    this.state = 'committing';
    const { target, tempPath } = this;
    try {
      const ex = await existing(target);
      if (ex.kind !== 'absent' && ex.isSymlink) throw symlinkRefused(target);
      if (ex.kind !== 'absent' && !this.options.force)
        throw usage(`--out ${target} already exists; use --force to replace it`);
      if (ex.kind === 'absent') {
        if (this.kind === 'file') await this.linkIntoPlace();
        else await rename(tempPath, target);
      } else if (this.kind === 'file' && ex.kind === 'file') {
        await rename(tempPath, target);
      } else {
        await checkOutputTarget(target, this.options);
        const aside = tempPathFor(target, OLD_MARKER);
        await rename(target, aside);
        this.asidePath = aside;
        this.state = 'aside';
        try {
          await rename(tempPath, target);
        } catch (e) {
          await rename(aside, target);
          this.asidePath = undefined;
          throw e;
        }
        this.asidePath = undefined;
        this.state = 'committed';
        await fsyncDirectory(dirname(resolve(target)));
        // The new output is in place; removing the old one can only fail to tidy up.
        await rm(aside, { recursive: true, force: true }).catch(() => undefined);
        return;
      }
      this.state = 'committed';
      await fsyncDirectory(dirname(resolve(target)));
    } catch (e) {
      if (this.state !== 'committed') {
        await this.discard();
      }
      if (e instanceof TokcapError) throw e;
      throw ioError(e, target);
    }
  }

  private async linkIntoPlace(): Promise<void> {
    try {
      await link(this.tempPath, this.target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw usage(`--out ${this.target} already exists; use --force to replace it`);
      // Filesystems without hard links: a plain rename (the existence check above still holds).
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS' || code === 'EMLINK') {
        await rename(this.tempPath, this.target);
        return;
      }
      throw e;
    }
    await unlink(this.tempPath);
  }

  /** Removes the temporary output (idempotent; nothing happens after a commit). */
  async discard(): Promise<void> {
    if (this.state === 'committed' || this.state === 'discarded') return;
    this.restoreAsideSync();
    this.state = 'discarded';
    await rm(this.tempPath, { recursive: true, force: true });
  }

  /**
   * Synchronous `discard`, for signal handlers: removes the temporary output (and puts a target
   * that was set aside for replacement back) before the process dies.
   */
  discardSync(): void {
    if (this.state === 'committed' || this.state === 'discarded') return;
    this.restoreAsideSync();
    this.state = 'discarded';
    try {
      rmSync(this.tempPath, { recursive: true, force: true });
    } catch {
      // best effort: the process is going away
    }
  }

  private restoreAsideSync(): void {
    if (this.asidePath === undefined) return;
    try {
      renameSync(this.asidePath, this.target);
    } catch {
      // The new output is already in place (or the rename back failed): leave the old one.
    }
    this.asidePath = undefined;
  }
}

/** True if `dir` holds a `config.json` written by tokcap export (replaceable with --force). */
export async function isTokcapExportDirectory(dir: string): Promise<boolean> {
  try {
    const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as unknown;
    return typeof config === 'object' && config !== null && (config as Record<string, unknown>).exporter === 'tokcap';
  } catch {
    return false;
  }
}
