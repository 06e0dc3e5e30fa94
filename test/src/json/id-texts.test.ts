import { describe, expect, it } from 'vitest';
import { JsonWriter, outputJsonBytes } from '../../../src/json/canonical-json.js';
import { IdArrayTexts } from '../../../src/json/id-texts.js';
import { JsonBytesReader } from '../../../src/json/parse-json.js';
import type { JsonObject } from '../../../src/json/value.js';

const memory = (size: number) => Buffer.alloc(size);

describe('the text of id arrays as read', () => {
  const line = Buffer.from(
    '{"a":[1,2,3],"b":[ 1,2],"c":[1,2 ],"d":[1, 2],"f":[1,-2],"g":[1.0,2],"i":[],"j":[[4,5]],"k":[0,10,999999999999999]}',
  );

  it('is kept only for arrays whose text is the canonical form of their ids: no space, sign or fraction', () => {
    const reader = new JsonBytesReader();
    const texts = new IdArrayTexts();
    reader.idTexts = texts;
    const v = reader.read(line) as JsonObject;
    const kept = Object.keys(v).filter((k) => texts.get(v[k] as unknown[]) !== undefined);
    expect(kept).toEqual(['a', 'k']);
    expect(Buffer.from(texts.get(v.a as unknown[])!).toString()).toBe('[1,2,3]');
    expect(Buffer.from(texts.get((v.j as unknown[][])[0])!).toString()).toBe('[4,5]');
    expect(Buffer.from(texts.get(v.k as unknown[])!).toString()).toBe('[0,10,999999999999999]');
  });

  it('gives the writer the bytes it writes without them', () => {
    const reader = new JsonBytesReader();
    const texts = new IdArrayTexts();
    reader.idTexts = texts;
    const v = reader.read(line);
    reader.idTexts = undefined;
    const withTexts = new JsonWriter().outputBytesInto(v, memory, undefined, texts);
    expect(withTexts.toString()).toBe(outputJsonBytes(v).toString());
    texts.clear();
    expect(texts.get((v as JsonObject).a as unknown[])).toBeUndefined();
  });

  it('is not kept for a document the byte parser leaves to the strict one (an id of 16 digits)', () => {
    const reader = new JsonBytesReader();
    const texts = new IdArrayTexts();
    reader.idTexts = texts;
    const v = reader.read(Buffer.from('{"a":[1,2],"h":[1234567890123456]}')) as JsonObject;
    expect(texts.get(v.a as unknown[])).toBeUndefined();
  });

  it('is not kept when no one asked for it', () => {
    const reader = new JsonBytesReader();
    const texts = new IdArrayTexts();
    const v = reader.read(line) as JsonObject;
    expect(texts.get(v.a as unknown[])).toBeUndefined();
  });
});
