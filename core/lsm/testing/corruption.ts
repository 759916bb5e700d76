// Tests' check that damaged input is refused as an LsmError of kind Corruption naming its file, and
// the LsmError any refusal throws.
import { expect } from 'vitest';
import { LsmError } from '../errors.ts';

/** Runs `f`, which must throw an LsmError; returns it. */
export function thrownLsmError(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected an LsmError; none was thrown');
}

/** `e` is Corruption, names `path` (as its path and in its message) and matches `msg`. */
export function expectCorruption(e: LsmError, path: string, msg: RegExp): void {
  expect(e.kind, e.message).toBe('Corruption');
  expect(e.path).toBe(path);
  expect(e.message).toContain(path);
  expect(e.message).toMatch(msg);
}
