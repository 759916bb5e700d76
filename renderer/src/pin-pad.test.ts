// The PIN pad's keys on the PIN field's value (pin-pad.ts).
import { describe, expect, it } from 'vitest';
import { PAD_ROWS, padPress, type PadKey } from './pin-pad.ts';

const press = (value: string, ...keys: PadKey[]) => keys.reduce(padPress, value);

describe('PIN pad', () => {
  it('adds digits at the end of what the field holds (typed on a keyboard or with the pad)', () => {
    expect(press('', '1', '2', '3', '4')).toBe('1234');
    expect(press('12', '3', '4')).toBe('1234');
  });

  it('the backspace takes the last character off, nothing from an empty field', () => {
    expect(press('1239', 'back', '4')).toBe('1234');
    expect(press('', 'back')).toBe('');
    expect(press('7', 'back', 'back')).toBe('');
  });

  it('the backspace takes a character outside the BMP off whole (a password typed on a keyboard)', () => {
    expect(press('pass\u{1F512}', 'back')).toBe('pass');
  });

  it('Clear empties the field', () => {
    expect(press('12345', 'clear')).toBe('');
    expect(press('55', 'clear', '1')).toBe('1');
  });

  it('has every digit once, Clear and the backspace, three keys a row', () => {
    const keys = PAD_ROWS.flat();
    expect([...keys].sort()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'back', 'clear']);
    expect(PAD_ROWS.every((row) => row.length === 3)).toBe(true);
  });
});
