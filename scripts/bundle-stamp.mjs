// The stamp of a bundle (scripts/bundle-view.mjs, scripts/bundle-cli.mjs): a JSON file beside it
// that lists the files it was made from (every module of ours in esbuild's metafile, its other
// output files, npm's record of node_modules) and one SHA-256 of their contents, computed at
// build time. Nothing reads it when tokcap runs: bin/tokcap.js loads the bundles as built
// (docs/decisions/0013-bundles-loaded-as-built.md). The tests and the build scripts use
// `stampHolds` to tell whether dist/ was changed since (a plain tsc, another npm install).
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/** SHA-256 over each file's path (relative to `dir`) and bytes, in the order given. */
export function contentHash(dir, paths) {
  const hash = createHash('sha256');
  for (const path of paths) {
    hash.update(`${path}\0`);
    hash.update(readFileSync(join(dir, path)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/**
 * `root`: the package; `dir`: the bundle's directory; `bundle`: its entry file; `metafile`:
 * esbuild's; `ours`: the directory whose modules are stamped (dist/); `stamp`: the file to write.
 */
export function writeStamp({ root, dir, bundle, metafile, ours, stamp }) {
  const fromDir = (p) => relative(dir, p).split(sep).join('/');
  const files = new Set([fromDir(bundle)]);
  for (const input of Object.keys(metafile.inputs)) {
    const file = resolve(root, input);
    if (file.startsWith(ours + sep)) files.add(fromDir(file));
  }
  for (const output of Object.keys(metafile.outputs)) files.add(fromDir(resolve(root, output)));
  const packages = join(root, 'node_modules', '.package-lock.json');
  if (statSync(packages, { throwIfNoEntry: false }) === undefined)
    throw new Error(`${packages} is missing (run npm install)`);
  files.add(fromDir(packages));
  const inputs = [...files].sort();
  writeFileSync(stamp, `${JSON.stringify({ sha256: contentHash(dir, inputs), inputs }, null, 1)}\n`);
}

/** Whether the stamp `stamp` (a path) still describes the files it lists: false when any changed or is gone. */
export function stampHolds(stamp) {
  try {
    const { sha256, inputs } = JSON.parse(readFileSync(stamp, 'utf8'));
    if (typeof sha256 !== 'string' || !Array.isArray(inputs)) return false;
    return contentHash(resolve(stamp, '..'), inputs) === sha256;
  } catch {
    return false;
  }
}
