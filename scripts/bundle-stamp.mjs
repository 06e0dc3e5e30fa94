// Writes the stamp that commands/bundle-stamp.ts checks before a bundle is loaded: the size and
// mtime of the bundle, of every module of ours it was made from (esbuild's metafile), of its other
// output files (chunks), and of npm's record of node_modules (rewritten by every npm install or
// npm ci, so a change of any bundled package changes it). Paths are relative to `dir`.
import { statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/**
 * `root`: the package; `dir`: the bundle's directory; `bundle`: its entry file; `metafile`:
 * esbuild's; `ours`: the directory whose modules are stamped (dist/); `stamp`: the file to write.
 */
export function writeStamp({ root, dir, bundle, metafile, ours, stamp }) {
  const fromDir = (p) => relative(dir, p).split(sep).join('/');
  const sig = (file) => {
    const s = statSync(file);
    return [s.size, s.mtimeMs];
  };
  const inputs = {};
  for (const input of Object.keys(metafile.inputs)) {
    const file = resolve(root, input);
    if (file.startsWith(ours + sep)) inputs[fromDir(file)] = sig(file);
  }
  for (const output of Object.keys(metafile.outputs)) {
    const file = resolve(root, output);
    if (file !== bundle) inputs[fromDir(file)] = sig(file);
  }
  const packages = join(root, 'node_modules', '.package-lock.json');
  if (statSync(packages, { throwIfNoEntry: false }) === undefined) throw new Error(`${packages} is missing (run npm install)`);
  inputs[fromDir(packages)] = sig(packages);
  writeFileSync(stamp, `${JSON.stringify({ bundle: sig(bundle), inputs }, null, 1)}\n`);
}
