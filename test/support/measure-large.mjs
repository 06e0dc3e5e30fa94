#!/usr/bin/env node
// Measures the live view on a large generated store, in-process behind a fake 100x30 terminal
// (no tmux overhead): time to the first frame with rows, time until every rollout is read, and
// key-to-frame latency during the load and when idle. Not a test (timings depend on the host).
//
//   npx tsc -p tsconfig.json && node test/support/measure-large.mjs [DIR] [--rollouts N]
//
// Without DIR, a store of N (default 10000) small rollouts is generated in a temporary directory.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

process.env.NODE_ENV = 'production';
process.env.CI = 'false';
const dist = new URL('../../dist/', import.meta.url);
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rollouts: { type: 'string', default: '10000' } },
});
const React = (await import('react')).default;
const { render } = await import('ink');
const { WatchApp } = await import(new URL('commands/watch/App.js', dist).href);
const { DirectoryModel } = await import(new URL('src/watch/directory-model.js', dist).href);
const { createWorkerReaders } = await import(new URL('src/watch/worker-readers.js', dist).href);
const { createStyles } = await import(new URL('commands/render/styles.js', dist).href);
const { generateStore } = await import(new URL('src/fixture/generate-store.js', dist).href);

let dir = positionals[0];
let cleanup = () => {};
if (!dir) {
  dir = mkdtempSync(join(tmpdir(), 'tokcap-watch-large-'));
  cleanup = () => rmSync(dir, { recursive: true, force: true });
  const t = performance.now();
  await generateStore({ dir }, { rollouts: Number(values.rollouts), calls: 2, prompt: 10, gen: 2, turn: 2, mix: true });
  console.error(`generated ${values.rollouts} rollouts in ${Math.round(performance.now() - t)} ms`);
}

class Out extends EventEmitter {
  columns = 100;
  rows = 30;
  isTTY = true;
  writes = 0;
  bytes = 0;
  clears = 0;
  write(s) {
    this.writes++;
    this.bytes += s.length;
    if (s.includes('\u001b[2J')) this.clears++;
    this.onWrite?.(s);
    return true;
  }
}
class In extends EventEmitter {
  isTTY = true;
  data = null;
  setRawMode() {}
  setEncoding() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
  read() {
    const d = this.data;
    this.data = null;
    return d;
  }
  send(s) {
    this.data = s;
    this.emit('readable');
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const workers = createWorkerReaders();
const model = new DirectoryModel({ dir, readers: { readBatch: workers.readBatch } });
const out = new Out();
const input = new In();
const t0 = performance.now();
let firstRows = 0;
out.onWrite = (s) => {
  if (!firstRows && /^[ ›][ •]\S+ +(live|frozen|retired|unavailable) /m.test(s)) firstRows = performance.now() - t0;
};
const app = render(React.createElement(WatchApp, { model, styles: createStyles(0) }), {
  stdout: out,
  stdin: input,
  patchConsole: false,
  exitOnCtrlC: false,
  maxFps: 60,
});

/** Time from a key to the next write to the terminal. */
async function press(key) {
  const before = out.writes;
  const s = performance.now();
  input.send(key);
  for (;;) {
    await new Promise((r) => setImmediate(r));
    if (out.writes > before) return performance.now() - s;
    if (performance.now() - s > 3000) return 3000;
  }
}
const stats = (a) => {
  if (a.length === 0) return null;
  const b = [...a].sort((x, y) => x - y);
  const at = (q) => Math.round(b[Math.min(b.length - 1, Math.floor(b.length * q))] * 10) / 10;
  return { n: b.length, p50: at(0.5), p95: at(0.95), max: at(1) };
};

await sleep(200);
const during = [];
while (!model.snapshot().ready) {
  during.push(await press(during.length % 2 ? 'j' : 'k'));
  await sleep(50);
}
const loaded = performance.now() - t0;
await sleep(300);
const idle = [];
for (let i = 0; i < 100; i++) {
  idle.push(await press(i % 4 === 3 ? '\u001b[6~' : 'j'));
  await sleep(20);
}
const heapMB = Math.round(process.memoryUsage().heapUsed / 1e6);
app.unmount();
model.dispose();
await workers.close();
console.log(
  JSON.stringify({
    rollouts: model.snapshot().totals.rollouts,
    firstRowsMs: Math.round(firstRows),
    allReadMs: Math.round(loaded),
    keyToFrameDuringLoadMs: stats(during),
    keyToFrameIdleMs: stats(idle),
    // Each frame is one write between the synchronized-update markers (two more writes).
    frames: Math.round(out.writes / 3),
    bytesPerFrame: Math.round(out.bytes / Math.max(1, out.writes / 3)),
    fullScreenClears: out.clears,
    mainHeapMB: heapMB,
  }),
);
cleanup();
process.exit(0);
