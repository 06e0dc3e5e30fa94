/** Damaged JSON lines of `n` bytes or so, one per shape a torn or corrupt line takes. */
export const DAMAGED: Record<string, (n: number) => Buffer> = {
  'a torn run of digits': (n) => Buffer.concat([Buffer.from('{"a":'), Buffer.alloc(n, '1')]),
  'a run of digits too long for a double': (n) =>
    Buffer.concat([Buffer.from('{"a":'), Buffer.alloc(n, '7'), Buffer.from('}')]),
  'digits in an array': (n) => Buffer.concat([Buffer.from('{"a":[1,'), Buffer.alloc(n, '9')]),
  'a torn fraction': (n) => Buffer.concat([Buffer.from('{"a":1.'), Buffer.alloc(n, '5')]),
  'a torn string': (n) => Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(n, 'x')]),
  'a torn string with escapes': (n) => Buffer.concat([Buffer.from('{"a":"'), Buffer.from('\\n'.repeat(n / 2))]),
  'deep nesting': (n) => Buffer.alloc(n, '['),
};
