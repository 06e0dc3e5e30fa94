import { TokcapError } from '../errors.js';
import { isJsonObject, JsonFloat, type JsonValue } from '../json/value.js';

/**
 * The few Python behaviours the projection relies on when output items carry unexpected values
 * (stray inline token fields, docs/format.md#projection, docs/format.md#prefix-contiguity): exception classes the consumer catches,
 * `len()`, `==` on JSON values, and type names for error texts.
 */

/** Exception classes the reference consumer turns into a failed build (docs/format.md#consumer-result). */
export const CONSUMER_CAUGHT_CLASSES = ['AssertionError', 'ValueError', 'KeyError', 'IndexError', 'TypeError'] as const;
export type ConsumerCaughtClass = (typeof CONSUMER_CAUGHT_CLASSES)[number];

/**
 * A builder failure whose Python class is not one of `TokcapError`'s (`TypeError`,
 * `IndexError`). ValueError/AssertionError/KeyError failures are raised as `TokcapError`.
 */
export class PythonBuildError extends Error {
  constructor(
    readonly pyClass: ConsumerCaughtClass,
    message: string,
  ) {
    super(message);
    this.name = 'PythonBuildError';
  }

  pythonString(): string {
    return `${this.pyClass}: ${this.message}`;
  }
}

/** A builder failure with the given Python class, as the most specific error type available. */
export function builderError(pyClass: ConsumerCaughtClass, message: string): Error {
  if (pyClass === 'TypeError' || pyClass === 'IndexError') return new PythonBuildError(pyClass, message);
  return new TokcapError('other', message, { pyClass });
}

/** Python's type name of a JSON value (for error texts). */
export function pyTypeName(v: JsonValue | undefined): string {
  if (v === undefined || v === null) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (v instanceof JsonFloat) return 'float';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

/** Python's `len()` of a JSON value; TypeError for values without a length. */
export function pyLen(v: JsonValue | undefined): number {
  if (Array.isArray(v)) return v.length;
  if (typeof v === 'string') {
    let n = 0;
    for (const _ of v) n++;
    return n;
  }
  if (isJsonObject(v)) return Object.keys(v).length;
  throw builderError('TypeError', `object of type '${pyTypeName(v)}' has no len()`);
}

function numeric(v: JsonValue): number | bigint | undefined {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof JsonFloat) return v.value;
  return undefined;
}

/** Python `==` between two JSON values (ints, floats and bools compare by value). */
export function pyEquals(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined || y !== undefined) {
    if (x === undefined || y === undefined) return false;
    if (typeof x === 'bigint' || typeof y === 'bigint') {
      // eslint-disable-next-line eqeqeq
      return x == y;
    }
    return x === y;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!pyEquals(a[i], b[i])) return false;
    return true;
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) {
      if (!Object.prototype.hasOwnProperty.call(b, k) || !pyEquals(a[k], b[k])) return false;
    }
    return true;
  }
  return false;
}
