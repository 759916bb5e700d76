import type { PointerEvent } from 'react';
import { useT } from '../context.tsx';
import { PAD_ROWS, type PadKey } from '../pin-pad.ts';

// Its keys take no focus: a tap keeps it where it was (the pointerdown's default, which would move
// it to the key, prevented), so the keyboard's next key and a badge reader's scan go where they
// would have gone without the pad. Nor are they in the Tab order (tabIndex -1): the keyboard's way
// to the PIN is its field, and twelve keys between it and the badge field would be in its way.
const keepFocus = (e: PointerEvent<HTMLButtonElement>) => e.preventDefault();

/**
 * The sign-in screen's PIN pad, for a touch screen with no keyboard (SignIn.tsx): digits, Clear and
 * a backspace, each a button that only calls `onPress` (type="button": none sends the form). Shown
 * by the stylesheet only where a touch screen is among the pointers (`any-pointer: coarse`).
 */
export function PinPad({ onPress }: { onPress: (key: PadKey) => void }) {
  const t = useT();
  return (
    <div role="group" className="pin-pad" aria-label={t('signIn.pad')}>
      {PAD_ROWS.flat().map((k) => (
        <button
          key={k}
          type="button"
          tabIndex={-1}
          data-pad={k}
          className={k === 'back' || k === 'clear' ? 'pad-edit' : undefined}
          aria-label={k === 'back' ? t('signIn.padBack') : k === 'clear' ? t('signIn.padClear') : undefined}
          onPointerDown={keepFocus}
          onClick={() => onPress(k)}
        >
          {k === 'back' ? '⌫' : k === 'clear' ? t('signIn.padClearKey') : k}
        </button>
      ))}
    </div>
  );
}
