// The sign-in screen's PIN pad (components/PinPad.tsx): what a tap on one of its keys makes of the
// PIN field's value. A floor PC is often a touch screen with no keyboard, used with gloves; the pad
// types into the field the keyboard types into (SignIn.tsx `secret`), so digits from both mix, and
// the field's own value is what is sent and what a refused sign-in or a badge going out clears.
//
// Pure: the screen keeps the value.

/** A key of the pad: a digit, the backspace, or Clear. */
export type PadKey = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9' | 'back' | 'clear';

/** The pad's keys row by row, as a phone's: 1 2 3 on top, Clear, 0 and the backspace at the bottom. */
export const PAD_ROWS: readonly (readonly PadKey[])[] = [
  ['1', '2', '3'],
  ['4', '5', '6'],
  ['7', '8', '9'],
  ['clear', '0', 'back'],
];

/**
 * The field's value after `key`: a digit added at its end (where the keyboard's next key goes too,
 * the caret following a value set by the page), the backspace taking the last character off —
 * a whole one: a password typed on a keyboard may end in a character outside the BMP, whose two
 * UTF-16 halves a `slice(0, -1)` split — and Clear emptying it.
 */
export function padPress(value: string, key: PadKey): string {
  if (key === 'clear') return '';
  if (key === 'back') return Array.from(value).slice(0, -1).join('');
  return value + key;
}
