#!/bin/sh
# Installs a packed tokcap (npm pack) into PREFIX as a user would: `npm install -g` of the tarball,
# without dev dependencies. The container image runs it (Dockerfile: PREFIX /usr/local) and CI
# runs the same lines into a fresh prefix for each Node version (scripts/ci-installed.sh).
#   sh scripts/install-tarball.sh PREFIX ./tokcap-X.Y.Z.tgz
set -eu
if [ "$#" -ne 2 ]; then
  echo "usage: install-tarball.sh PREFIX TARBALL" >&2
  exit 2
fi
npm install --global --prefix "$1" --omit=dev --no-audit --no-fund --no-update-notifier "$2"
"$1/bin/tokcap" --version >/dev/null
