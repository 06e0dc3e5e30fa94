#!/usr/bin/env node
// The Node floor for the benchmarks: read every file given on the command line, split it into
// lines, JSON.parse each line and SHA-256 it. No validation, no locks, no state files: the
// least work any correct reader of the same bytes has to do. Prints "<files> <lines> <bytes>".
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

const CHUNK = 1 << 20;
const buf = Buffer.allocUnsafe(CHUNK);
const decoder = new TextDecoder();
let lines = 0;
let bytes = 0;
let sink = 0;

function onLine(line) {
  if (line.length === 0) return;
  lines++;
  const digest = createHash('sha256').update(line).digest('hex');
  try {
    const v = JSON.parse(decoder.decode(line));
    sink += digest.length + (typeof v === 'object' && v !== null ? 1 : 0);
  } catch {
    sink += 1;
  }
}

for (const file of process.argv.slice(2)) {
  const fd = openSync(file, 'r');
  let carry = null;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) break;
      bytes += n;
      const chunk = buf.subarray(0, n);
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(10, from);
        if (nl === -1) break;
        if (carry) {
          onLine(Buffer.concat([carry, chunk.subarray(from, nl)]));
          carry = null;
        } else onLine(chunk.subarray(from, nl));
        from = nl + 1;
      }
      if (from < n) carry = carry ? Buffer.concat([carry, chunk.subarray(from)]) : Buffer.from(chunk.subarray(from));
    }
    if (carry) onLine(carry);
  } finally {
    closeSync(fd);
  }
}
process.stdout.write(`${process.argv.length - 2} ${lines} ${bytes}${sink < 0 ? '!' : ''}\n`);
