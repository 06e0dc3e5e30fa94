import { describe, expect, it } from 'vitest';
import { loadCases } from '../support/conformance-corpus.js';
import { runCase } from '../support/conformance-runner.js';
import { library } from '../support/conformance-library-adapter.js';

describe('conformance corpus through the library', () => {
  const cases = loadCases();
  it('has cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });
  for (const c of cases) {
    it(`${c.dirName}: ${c.description.slice(0, 80)}`, async () => {
      expect(await runCase(c, library)).toEqual([]);
    });
  }
});
