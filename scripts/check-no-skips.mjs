#!/usr/bin/env node
// Fails CI when any test was skipped, marked todo, or not run: a skipped conformance case would
// otherwise pass silently. Reads vitest's JSON reporter output.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.ci-test-results.json';
const report = JSON.parse(readFileSync(file, 'utf8'));
const bad = [];
for (const suite of report.testResults ?? []) {
  for (const t of suite.assertionResults ?? []) {
    if (t.status !== 'passed') bad.push(`${t.status}: ${t.fullName ?? t.title} (${suite.name})`);
  }
}
const total = report.numTotalTests ?? 0;
if (total === 0) bad.push('no test ran');
if (bad.length) {
  console.error(`check-no-skips: ${bad.length} test(s) not passed:\n  ${bad.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-no-skips: all ${total} tests passed, none skipped`);
