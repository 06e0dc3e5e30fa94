import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TokcapError } from '../../src/errors.js';
import { JsonFloat } from '../../src/json/value.js';
import { createContext, ExitCodeAccumulator } from '../../commands/cli/context.js';
import { orderedJsonMembers, outputJson as stringifyJson, RawJsonText } from '../../src/json/canonical-json.js';
import type { GlobalOptions, InspectCommandOptions } from '../../commands/cli/options.js';
import type { CliIo } from '../../commands/cli/context.js';
import { fakeIo, SlowStdout, type FakeIo } from '../support/cli.js';

const BASE: GlobalOptions & InspectCommandOptions = {
  json: false,
  color: 'auto',
  quiet: false,
  lockWait: 10,
  deep: false,
  status: 'all',
  sort: 'id',
  limit: undefined,
  call: undefined,
  tokenizer: undefined,
  idsFrom: undefined,
  shard: undefined,
  allowEmpty: false,
};

/** A context on fake streams, or on the io given (a test's own stdout, say). */
function ctxWith<I extends CliIo = FakeIo>(
  options: Partial<GlobalOptions & InspectCommandOptions> = {},
  io: I = fakeIo() as unknown as I,
) {
  const ctx = createContext({
    command: 'inspect',
    dir: '/d',
    ids: [],
    idsGiven: false,
    positionals: ['/d'],
    options: { ...BASE, ...options },
    io,
  });
  return { ctx, io };
}

describe('ExitCodeAccumulator', () => {
  it('keeps the highest code raised', () => {
    const acc = new ExitCodeAccumulator();
    expect(acc.value).toBe(0);
    acc.raise(1);
    acc.raise(3);
    acc.raise(2);
    acc.raise(0);
    expect(acc.value).toBe(3);
  });
});

describe('CommandContext output', () => {
  it('out writes lines to stdout; err always writes to stderr', () => {
    const { ctx, io } = ctxWith();
    ctx.out('hello');
    ctx.err('tokcap: boom');
    expect(io.stdout.text).toBe('hello\n');
    expect(io.stderr.text).toBe('tokcap: boom\n');
  });

  it('with --json, stdout holds exactly one JSON document', () => {
    const { ctx, io } = ctxWith({ json: true });
    ctx.out('human text is dropped');
    ctx.json({ ok: true, n: [1, 2] });
    expect(io.stdout.text).toBe('{"ok":true,"n":[1,2]}\n');
    expect(() => ctx.json({})).toThrow(/twice/);
  });

  it('jsonArray writes, element by element, the bytes json(array) would write', () => {
    const values: unknown[] = [
      { a: 1, skip: undefined },
      [new JsonFloat(1), 2.5, 'x'],
      null,
      [0, 7, 4294967295, 4294967296],
    ];
    const streamed = ctxWith({ json: true });
    const arr = streamed.ctx.jsonArray();
    for (const v of values) void arr.push(v);
    arr.end();
    const whole = ctxWith({ json: true });
    whole.ctx.json(values);
    expect(streamed.io.stdout.text).toBe(whole.io.stdout.text);
    expect(() => streamed.ctx.json({})).toThrow(/twice/);
  });

  it('jsonArray: an empty array is [], an unwritable element throws before anything of it is written', () => {
    const empty = ctxWith({ json: true });
    empty.ctx.jsonArray().end();
    expect(empty.io.stdout.text).toBe('[]\n');
    const { ctx, io } = ctxWith({ json: true });
    const arr = ctx.jsonArray();
    void arr.push({ ok: 1 });
    expect(() => arr.push({ id: 2n ** 64n })).toThrow(TokcapError);
    void arr.push({ ok: 2 });
    arr.end();
    expect(JSON.parse(io.stdout.text)).toEqual([{ ok: 1 }, { ok: 2 }]);
  });

  it("jsonArray: a stdout that cannot keep up makes push wait for it; the bytes' memory is released once written", async () => {
    // A pipe whose reader is slower than the builds: bytes queue in the stream until written.
    const written: string[] = [];
    const slow = new Writable({
      highWaterMark: 4,
      write(chunk: Buffer, _encoding, done) {
        written.push(chunk.toString());
        setTimeout(done, 5);
      },
    });
    const { ctx } = ctxWith({ json: true }, { ...fakeIo(), stdout: slow });
    const arr = ctx.jsonArray();
    let released = 0;
    const wait = arr.push(new RawJsonText([Buffer.from('{"a":1'), Buffer.from(',"b":2}')]), () => released++);
    expect(wait).toBeInstanceOf(Promise);
    expect(released).toBe(0);
    await wait;
    await new Promise((resolve) => setImmediate(resolve));
    expect(released).toBe(1);
    expect(written.join('')).toBe('[{"a":1,"b":2}');
    // A stream that wrote everything in the call (a file): released at once, nothing to wait for.
    const file = ctxWith(
      { json: true },
      { ...fakeIo(), stdout: new Writable({ write: (_chunk, _encoding, done) => done() }) },
    );
    let now = 0;
    expect(file.ctx.jsonArray().push(new RawJsonText(Buffer.from('{}')), () => now++)).toBeUndefined();
    expect(now).toBe(1);
  });

  it('jsonMap writes, entry by entry, the bytes json() of the whole object would write', () => {
    const entries: [string, unknown][] = [
      ['r-2', { files: ['a'], n: 1, f: new JsonFloat(2) }],
      ['10', [1, 2]],
      ['r-1', null],
    ];
    for (const [head, tail] of [
      [{ dir: '/d' }, { invalid_names: ['x'], temp_state_files: [] as string[] }],
      [{}, {}],
      [
        { dir: 'é"\\', skipped: undefined },
        { last: undefined, more: 1 },
      ],
    ] as const) {
      for (const n of [0, 1, 3]) {
        const streamed = ctxWith({ json: true });
        const map = streamed.ctx.jsonMap(head, 'rollouts');
        for (const [k, v] of entries.slice(0, n)) void map.entry(k, v);
        map.end(tail);
        const whole = ctxWith({ json: true });
        // The map's keys keep their order (an integer-like key stays where it was given).
        whole.ctx.json({ ...head, rollouts: new RawJsonText(orderedJsonMembers(entries.slice(0, n))), ...tail });
        expect(streamed.io.stdout.text).toBe(whole.io.stdout.text);
        expect(() => streamed.ctx.json({})).toThrow(/twice/);
      }
    }
  });

  it('jsonMap: a stdout that cannot keep up makes entry wait for it, as jsonArray().push does', async () => {
    const slow = new SlowStdout(4);
    const map = ctxWith({ json: true }, { ...fakeIo(), stdout: slow }).ctx.jsonMap({}, 'm');
    const wait = map.entry('a', { n: 1 });
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    expect(slow.writableLength).toBe(0);
    expect(slow.text).toBe('{"m":{"a":{"n":1}');
    // A stream that wrote everything in the call (a file): nothing to wait for.
    const file = ctxWith(
      { json: true },
      {
        ...fakeIo(),
        stdout: Object.assign(new Writable({ write: (_chunk, _encoding, done) => done() }), { text: '' }),
      },
    );
    expect(file.ctx.jsonMap({}, 'm').entry('a', 1)).toBeUndefined();
  });

  it('jsonMap: an unwritable entry throws before anything of it is written; nothing without --json', () => {
    const { ctx, io } = ctxWith({ json: true });
    const map = ctx.jsonMap({}, 'm');
    void map.entry('a', 1);
    expect(() => map.entry('b', { id: 2n ** 64n })).toThrow(TokcapError);
    void map.entry('c', 3);
    map.end({});
    expect(JSON.parse(io.stdout.text)).toEqual({ m: { a: 1, c: 3 } });
    const quiet = ctxWith();
    const none = quiet.ctx.jsonMap({ dir: 'd' }, 'm');
    void none.entry('a', 1);
    none.end({});
    expect(quiet.io.stdout.text).toBe('');
  });

  it('jsonArray prints nothing without --json', () => {
    const { ctx, io } = ctxWith();
    const arr = ctx.jsonArray();
    void arr.push({ a: 1 });
    arr.end();
    expect(io.stdout.text).toBe('');
  });

  it('warn is prefixed and silenced by --quiet; err is not', () => {
    const loud = ctxWith();
    loud.ctx.warn('skipped r1');
    expect(loud.io.stderr.text).toBe('tokcap: warning: skipped r1\n');
    const quiet = ctxWith({ quiet: true });
    quiet.ctx.warn('skipped r1');
    quiet.ctx.err('tokcap: real error');
    expect(quiet.io.stderr.text).toBe('tokcap: real error\n');
  });

  it('fail reports one line, raises by kind, and returns the inline JSON error', () => {
    const { ctx, io } = ctxWith({ json: true });
    const inline = ctx.fail(new TokcapError('lock_timeout', 'lock busy after 10s', { rolloutId: 'r7' }), 'r7');
    expect(inline).toEqual({ rollout_id: 'r7', error: { kind: 'lock_timeout', message: 'lock busy after 10s' } });
    expect(io.stderr.text).toBe('tokcap: r7: lock busy after 10s\n');
    expect(ctx.exitCode.value).toBe(3);
    ctx.raise(1);
    expect(ctx.exitCode.value).toBe(3);
  });

  it('styles follow the stream and the options', () => {
    expect(ctxWith().ctx.styles.level).toBe(0); // stdout not a TTY
    expect(ctxWith({}, fakeIo({ stdoutTTY: true })).ctx.styles.level).toBeGreaterThan(0);
    expect(ctxWith({ color: 'never' }, fakeIo({ stdoutTTY: true })).ctx.styles.level).toBe(0);
    expect(ctxWith({}, fakeIo({ stdoutTTY: true, env: { NO_COLOR: '1' } })).ctx.styles.level).toBe(0);
  });

  it('table picks plain layout off a TTY and boxed on one', () => {
    const cols = [{ header: 'ID' }];
    expect(ctxWith().ctx.table(cols, [['r1']])).toBe('ID\nr1');
    expect(ctxWith({}, fakeIo({ stdoutTTY: true })).ctx.table(cols, [['r1']])).toContain('┌');
  });
});

describe('progress', () => {
  it('is a no-op unless stderr is a TTY', () => {
    const { ctx, io } = ctxWith();
    const bar = ctx.progress({ title: 'verifying', total: 3 });
    bar.tick();
    bar.update(3, 'r3');
    bar.done();
    expect(io.stderr.text).toBe('');
  });

  it('is a no-op with --quiet or --json even on a TTY', () => {
    for (const opts of [{ quiet: true }, { json: true }]) {
      const { ctx, io } = ctxWith(opts, fakeIo({ stderrTTY: true }));
      ctx.progress({ title: 'x', total: 1 }).tick();
      expect(io.stderr.text).toBe('');
    }
  });

  it('draws on a TTY stderr and erases itself; messages clear the line first', () => {
    const { ctx, io } = ctxWith({}, fakeIo({ stderrTTY: true }));
    const bar = ctx.progress({ title: 'verifying', total: 2 });
    bar.tick(1, 'r1');
    ctx.err('tokcap: r1: broken');
    bar.tick(1, 'r2');
    bar.done();
    expect(io.stderr.text).toContain('verifying');
    expect(io.stderr.text).toContain('\r\x1b[2Ktokcap: r1: broken\n');
    expect(io.stderr.text.endsWith('\r\x1b[2K')).toBe(true);
    expect(io.stdout.text).toBe('');
  });
});

describe('the --json writer (outputJson)', () => {
  it('writes bigints and integral floats the way the store does', () => {
    expect(stringifyJson({ a: 2n ** 64n - 1n, f: new JsonFloat(1), z: new JsonFloat(-0), x: 0.5 })).toBe(
      '{"a":18446744073709551615,"f":1.0,"z":-0.0,"x":0.5}',
    );
  });
  it('matches JSON.stringify on plain data, leaving out undefined keys', () => {
    const v = { s: 'é"\n\u2028', n: null, arr: [1, 'two', { t: true }], u: undefined, nested: { k: [] } };
    expect(stringifyJson(v)).toBe(JSON.stringify(v));
  });
  it('keeps insertion order and writes floats in the Python layout', () => {
    expect(stringifyJson({ b: 1e-7, a: 1e16 })).toBe('{"b":1e-7,"a":10000000000000000}');
    expect(stringifyJson({ f: new JsonFloat(1e16), g: 0.00001234 })).toBe('{"f":1e+16,"g":0.00001234}');
  });
  it('refuses values JSON cannot hold', () => {
    expect(() => stringifyJson({ d: new Date(0) })).toThrow(/not JSON serializable/);
  });
});
