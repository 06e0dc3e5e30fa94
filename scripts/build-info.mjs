// dist/build-info.json: what `tokcap --version --json` says about the build (src/build-info.ts):
// the commit the package was built from, recorded at build time because an installed copy has no
// repository to ask. `git describe` style: the commit, with "-dirty" when tracked files differed
// from it; null when the package was not built in a git checkout of its own.
import { execFileSync } from 'node:child_process';
import { realpathSync, writeFileSync } from 'node:fs';

const git = (root, args) =>
  execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

function commitOf(root) {
  try {
    // Only tokcap's own checkout: not a repository that merely contains this folder.
    if (realpathSync(git(root, ['rev-parse', '--show-toplevel'])) !== realpathSync(root)) return null;
    const commit = git(root, ['rev-parse', 'HEAD']);
    return git(root, ['status', '--porcelain', '--untracked-files=no']) === '' ? commit : `${commit}-dirty`;
  } catch {
    return null; // no git, or no repository
  }
}

export function writeBuildInfo(root, file) {
  writeFileSync(file, `${JSON.stringify({ commit: commitOf(root) })}\n`);
}
