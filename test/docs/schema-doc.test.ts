import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOC, withSchemaBlock } from '../../scripts/gen-export-doc.js';
import { CALL_COLUMNS, ROLLOUT_COLUMNS } from '../../src/export/parquet/schema.js';

describe('docs/export.md', () => {
  it('documents the Parquet schema as declared (npm run docs:export regenerates it)', () => {
    const doc = readFileSync(DOC, 'utf8');
    expect(withSchemaBlock(doc)).toBe(doc);
    for (const c of [...CALL_COLUMNS, ...ROLLOUT_COLUMNS]) expect(doc).toContain(`| \`${c.name}\` |`);
  });
});
