/**
 * The listing and the stat pass through the system calls (getdents64, statx) give exactly what
 * Node's opendir and lstat give: the same rollouts in the same order, the same other names, the
 * same mtimes, on directories with odd names, non-rollout entries, symlinks and files removed
 * between the listing and the stat pass.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listDirectory, listDirectoryNode, listDirectoryRaw, listedIds } from '../../../src/layout/scan-directory.js';
import { rawDirectory, type RawDirectory } from '../../../src/native/directory-entries.js';
import { sharedListing, statNextChunk } from '../../../src/watch/shared-stat.js';
import { useTempDirs } from '../../support/temp-dirs.js';

const tempDir = useTempDirs('tokcap-raw-list-');

function system(): RawDirectory {
  const raw = rawDirectory();
  // This suite runs on Linux with glibc; elsewhere the Node listing is the only one.
  expect(raw, 'getdents64 and statx through koffi').toBeDefined();
  return raw!;
}

/** A directory with every kind of entry the listing tells apart, and odd names among them. */
function oddDirectory(): string {
  const dir = tempDir();
  const write = (name: string | Buffer, mtimeSec?: number) => {
    const p = typeof name === 'string' ? path.join(dir, name) : Buffer.concat([Buffer.from(dir + '/'), name]);
    fs.writeFileSync(p, '');
    if (mtimeSec !== undefined) fs.utimesSync(p, mtimeSec, mtimeSec);
  };
  for (let i = 0; i < 300; i++) write(`r${i}.tokens.jsonl`, 1_000_000 + i * 7.123456);
  for (let i = 0; i < 300; i += 3) write(`r${i}.tokens.state.json`);
  for (let i = 0; i < 300; i += 5) write(`r${i}.tokens.lock`);
  for (let i = 0; i < 300; i += 11) write(`r${i}.tokens.intents`);
  write('m-only.tokens.incomplete');
  write('i-only.tokens.intents');
  write('lock-only.tokens.lock');
  write('lock-only-2.tokens.lock');
  write('..tokens.jsonl'); // id "."
  write('...tokens.state.json'); // id ".."
  write('a.tokens.tokens.jsonl'); // id "a.tokens"
  write('-x_.tokens.jsonl');
  write('x'.repeat(242) + '.tokens.jsonl'); // a 255-byte name
  // Invalid ids, foreign names, temporary state files.
  write('.tokens.jsonl');
  write('bad id!.tokens.jsonl');
  write('é.tokens.state.json');
  write('new\nline.tokens.intents');
  write('bad id.tokens.lock');
  write(Buffer.from([0x72, 0xff, 0xfe, 0x2e, ...Buffer.from('tokens.jsonl')])); // not UTF-8
  write(Buffer.from([0xc3, 0xa9, 0x78])); // foreign, UTF-8
  write('.tokens-state-abcd1234');
  write('.tokens-state-abcdefgl');
  write('.tokens-state-short');
  write('README');
  write('r1.tokens.jsonl.tmp');
  write('r1.tokens.JSONL');
  write('.hidden');
  // Symlinks (one dangling) and a directory named like capture files.
  fs.symlinkSync(path.join(dir, 'r1.tokens.jsonl'), path.join(dir, 'link.tokens.jsonl'));
  fs.symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'dangling.tokens.jsonl'));
  fs.mkdirSync(path.join(dir, 'sub.tokens.jsonl'));
  return dir;
}

describe('the listing through getdents64', () => {
  it("gives what Node's listing gives, in the same order, for odd names and non-rollout entries", () => {
    const dir = oddDirectory();
    const node = listDirectoryNode(dir);
    const raw = listDirectoryRaw(dir, system());
    expect(raw).toEqual(node);
    expect(listDirectory(dir)).toEqual(node);
    // The checks above compare something: the directory holds every kind of entry.
    expect(listedIds(node)).toHaveLength(300 + 10);
    expect(listedIds(node)).toEqual(
      expect.arrayContaining(['.', '..', 'a.tokens', '-x_', 'link', 'dangling', 'sub', 'x'.repeat(242)]),
    );
    expect(node.lockOnly).toEqual(['lock-only', 'lock-only-2']);
    expect(node.invalidNames).toEqual([
      '.tokens.jsonl',
      'bad id!.tokens.jsonl',
      'new\nline.tokens.intents',
      'r\ufffd\ufffd.tokens.jsonl',
      'é.tokens.state.json',
    ]);
    expect(node.tempStateFiles).toEqual(['.tokens-state-abcd1234', '.tokens-state-abcdefgl']);
  });

  it('reads a directory in many calls when its entries do not fit in one buffer', () => {
    const dir = oddDirectory();
    const sys = system();
    const names: string[] = [];
    sys.forEachEntry(dir, (buf, start, end) => names.push(buf.toString('utf8', start, end)), 1024);
    const node: string[] = [];
    const handle = fs.opendirSync(dir);
    for (let ent = handle.readSync(); ent !== null; ent = handle.readSync()) node.push(ent.name);
    handle.closeSync();
    expect(names).toEqual(node);
    expect(names.length).toBeGreaterThan(500);
    // The same listing with the small buffer as with the large one.
    const small: RawDirectory = { ...sys, forEachEntry: (d, visit) => sys.forEachEntry(d, visit, 1024) };
    expect(listDirectoryRaw(dir, small)).toEqual(listDirectoryNode(dir));
  });

  it("fails where Node's listing fails, and listDirectory then gives Node's error", () => {
    const dir = tempDir();
    const file = path.join(dir, 'file');
    fs.writeFileSync(file, '');
    for (const target of [path.join(dir, 'missing'), file]) {
      expect(() => listDirectoryRaw(target, system())).toThrow();
      expect(() => listDirectory(target)).toThrow(expect.objectContaining({ kind: 'io' }));
    }
  });
});

describe('the stat pass through statx', () => {
  it("gives lstat's mtimeMs, to the nanosecond, for files, symlinks and directories; undefined when missing", () => {
    const dir = oddDirectory();
    const sys = system();
    const fd = sys.open(dir);
    try {
      // Names that are UTF-8 (a string cannot name the other one).
      const names = fs.readdirSync(dir).filter((name) => !name.includes('\ufffd'));
      expect(names.length).toBeGreaterThan(500);
      for (const name of names)
        expect([name, sys.mtimeAt(fd, name)]).toEqual([name, fs.lstatSync(path.join(dir, name)).mtimeMs]);
      // Fractions of a millisecond survive as in Node's figure.
      expect(sys.mtimeAt(fd, 'r5.tokens.jsonl')).toBe(fs.lstatSync(path.join(dir, 'r5.tokens.jsonl')).mtimeMs);
      expect(sys.mtimeAt(fd, 'r5.tokens.jsonl')! % 1).not.toBe(0);
      expect(sys.mtimeAt(fd, 'missing.tokens.jsonl')).toBeUndefined();
    } finally {
      sys.close(fd);
    }
  });

  it("gives every rollout the first file's mtime, and 0 for a rollout removed after the listing", () => {
    const dir = oddDirectory();
    const { shared, ids } = sharedListing(listDirectory(dir));
    for (const id of ['r7', 'r9', 'm-only'])
      for (const f of fs.readdirSync(dir)) if (f.startsWith(id + '.tokens.')) fs.rmSync(path.join(dir, f));
    while (statNextChunk(dir, ids, shared));
    const mtimes = new Float64Array(shared.mtimes);
    const first = (id: string) => {
      for (const suffix of ['.tokens.jsonl', '.tokens.state.json', '.tokens.intents', '.tokens.incomplete']) {
        const st = fs.lstatSync(path.join(dir, id + suffix), { throwIfNoEntry: false });
        if (st) return st.mtimeMs;
      }
      return 0;
    };
    expect(ids.map((id) => [id, mtimes[ids.indexOf(id)]])).toEqual(ids.map((id) => [id, first(id)]));
    expect(mtimes[ids.indexOf('r7')]).toBe(0);
    expect(mtimes[ids.indexOf('m-only')]).toBe(0);
    expect(mtimes[ids.indexOf('r8')]).toBeGreaterThan(0);
  });
});
