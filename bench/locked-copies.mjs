#!/usr/bin/env node
// Not a floor any target is measured against, but the reading every tokcap command does before
// it parses anything: for each rollout of DIR, in id order, tokcap's own locked read-only copy
// (docs/format.md#locking: open the lock file, flock shared, check the path still names it, then read the
// state file, J and the intents file as regular files, unlock, close). No parsing beyond the
// state's `retired` flag, no digests, no findings. It shows what the lock protocol and the side
// files cost per rollout next to the node floor's one open per JSONL file.
// Prints "<rollouts> <bytes of J copied> <rollouts refused (retired, damaged)>".
// Usage: node bench/locked-copies.mjs DIR   (needs the compiled build: npm run build)
import { copyReadOnlySnapshot } from '../dist/src/ops/read-snapshot.js';
import { scanDirectory, sortedRolloutIds } from '../dist/src/layout/scan-directory.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/locked-copies.mjs DIR');
  process.exit(2);
}
const listing = await scanDirectory(dir);
let bytes = 0;
let refused = 0;
const ids = sortedRolloutIds(listing);
for (const id of ids) {
  try {
    const copy = await copyReadOnlySnapshot({ dir }, id);
    bytes += copy.bytes?.length ?? 0;
    copy.release?.();
  } catch {
    refused++;
  }
}
console.log(`${ids.length} ${bytes} ${refused}`);
