// The esbuild settings both bundles share (scripts/bundle-view.mjs, scripts/bundle-cli.mjs): ES
// modules for this Node, a metafile for the stamp (./bundle-stamp.mjs), and a `require` for the
// CommonJS packages inside (React, commander), which call it for Node's modules.
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  metafile: true,
  logLevel: 'warning',
  banner: { js: "import { createRequire as __tokcapCreateRequire } from 'node:module';\nconst require = __tokcapCreateRequire(import.meta.url);" },
};
