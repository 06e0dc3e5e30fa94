import { readFileSync } from 'node:fs';

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
  banner: {
    js: "import { createRequire as __tokcapCreateRequire } from 'node:module';\nconst require = __tokcapCreateRequire(import.meta.url);",
  },
};

/**
 * What Ink needs in a bundle (scripts/bundle-view.mjs; bench/watch-live.mjs bundles its floor app
 * the same way), for an esbuild plugin's `setup`.
 */
export function inkInBundle(b) {
  // Ink imports React's devtools only with DEV=true, and says how to install them when the
  // import fails with ERR_MODULE_NOT_FOUND; they are not installed, so the bundle fails alike.
  b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'tokcap-absent' }));
  // Yoga's loader (Ink's layout) reads its WebAssembly from a base64 data: URL through
  // fetch() when fetch exists: that loads Node's HTTP client (undici) and percent-decodes
  // the URL, ~40 ms of the main thread on the first screen's path. Its own decoder (atob)
  // gives the same bytes without either.
  b.onLoad({ filter: /[\\/]yoga-layout[\\/]dist[\\/]binaries[\\/]yoga-wasm-base64-esm\.js$/ }, (args) => {
    const source = readFileSync(args.path, 'utf8');
    const FETCHED = 'return w||"function"!=typeof fetch?Promise.resolve()';
    if (!source.includes(FETCHED))
      return {
        contents: source,
        loader: 'js',
        warnings: [{ text: "yoga's wasm loader changed: it may load through fetch() again" }],
      };
    return { contents: source.replace(FETCHED, 'return true?Promise.resolve()'), loader: 'js' };
  });
  b.onLoad({ filter: /.*/, namespace: 'tokcap-absent' }, () => ({
    contents:
      "const e = new Error(\"Cannot find package 'react-devtools-core'\"); e.code = 'ERR_MODULE_NOT_FOUND'; throw e;",
    loader: 'js',
  }));
}
