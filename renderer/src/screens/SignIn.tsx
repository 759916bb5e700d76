import { useRef, useState, type FocusEvent, type FormEvent, type KeyboardEvent, type PointerEvent } from 'react';
import { runAfter, scanEndedBy, type KeyRun } from '../badge-scan.ts';
import { useApp, useT } from '../context.tsx';
import { LanguagePicker } from '../components/LanguagePicker.tsx';
import { PinPad } from '../components/PinPad.tsx';
import { padPress } from '../pin-pad.ts';
import { formatDuration, LANG_NAMES, type Lang } from '../i18n/messages.ts';
import { selectSignInErrorText } from '../store/store.ts';

const isLang = (v: string): v is Lang => Object.hasOwn(LANG_NAMES, v);

export function SignIn() {
  const t = useT();
  const signIn = useApp((s) => s.signIn);
  const signInBadge = useApp((s) => s.signInBadge);
  const setLang = useApp((s) => s.setLang);
  const error = useApp(selectSignInErrorText);
  const idleMs = useApp((s) => s.signedOutIdleMs);
  const lang = useApp((s) => s.lang);
  // One sign-in at a time: a double tap would count a mistyped PIN twice towards the lockout.
  const busy = useApp((s) => s.signingIn);
  const [user, setUser] = useState('');
  const [secret, setSecret] = useState('');
  const [badge, setBadge] = useState('');
  /** The keys typed since the last pause (badge-scan.ts): a reader's quick run is a scan. */
  const run = useRef<KeyRun | null>(null);
  /** When the last key that was neither a character, Shift nor Enter came (a Tab): a run right after it is no scan. */
  const otherKey = useRef<number | null>(null);
  /**
   * The PIN field given the focus (a tap, a Tab) since the last sign-in went out. A quick run there
   * is then a PIN auto-typed (a password manager, a keyboard wedge), not a scan: one went out as an
   * unknown badge. A reader scans into the PIN field only where a refused sign-in left the focus.
   */
  const secretChosen = useRef(false);
  /**
   * A PIN pad key tapped since the PIN field was last chosen, and the field not emptied by the pad
   * since (Clear, or the backspace down to nothing). Nothing auto-types after pad taps, so a quick
   * run into the chosen field after them is a badge scan, not an auto-typed PIN: taken as one, the
   * card's number went out behind the pad's digits as the name's PIN. Pad taps taken back to an
   * empty field leave it as it was chosen: a PIN a password manager auto-typed there next went out
   * as a badge.
   */
  const padSinceChosen = useRef(false);
  /**
   * The field the focus was in when the whole window lost it (another window, a notification):
   * chromium gives that field its focus event again when the window comes back, and a refused
   * PIN's field then counted as chosen — the reader's scan there went out as that name's PIN.
   */
  const windowLeftFrom = useRef<unknown>(null);
  // A scan into the PIN or name field (the focus left there by a refused PIN) or onto the button
  // went out as a PIN, or an empty one, and onto the language picker as nothing: as quick as a
  // reader and ending in Enter, it is a badge; into the badge field it is one already. The name
  // field gets back what it held. A badge going out empties the PIN field (as `submit` does), the
  // scan's own field included: given back the pad's digits tapped before the scan, it sent them in
  // front of the next PIN once the badge was refused ("12" and then "1234" as "121234").
  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    if (e.key !== 'Shift' && e.key !== 'Enter' && (e.key.length !== 1 || e.repeat)) otherKey.current = e.timeStamp;
    if (e.key !== 'Enter') {
      run.current = runAfter(run.current, { key: e.key, timeStamp: e.timeStamp, repeat: e.repeat, target: e.target as { name?: unknown; value?: unknown } }, otherKey.current);
      return;
    }
    const scan = scanEndedBy(run.current, e.timeStamp);
    run.current = null;
    // Into the chosen PIN field it is a PIN only after a name and with no pad key tapped since the
    // choice: without a name no PIN signs anybody in (a badge scanned after a tap on that field went
    // out as a PIN with no name), and after pad taps nothing auto-types.
    if (!scan || scan.field === 'badge' || (scan.field === 'secret' && secretChosen.current && !padSinceChosen.current && user.trim() !== '')) return;
    e.preventDefault();
    setSecret('');
    secretChosen.current = false;
    if (scan.field === 'user') setUser(scan.before);
    // Onto the language picker (the focus left there by a language just chosen): its type-ahead
    // took the badge's letters for a language's ("N…" for Norsk), and Enter there sent nothing.
    else if (scan.field === 'lang' && isLang(scan.before)) setLang(scan.before);
    // While a sign-in is answered, the scan waits in its field for the next Enter, as one there does.
    if (busy) setBadge(scan.chars);
    else void signInBadge(scan.chars);
  };
  const choose = () => {
    secretChosen.current = true;
    padSinceChosen.current = false;
  };
  const onFocus = (e: FocusEvent<HTMLFormElement>) => {
    const name = (e.target as { name?: unknown }).name;
    const windowBack = windowLeftFrom.current !== null && windowLeftFrom.current === name;
    windowLeftFrom.current = null;
    if (name === 'secret' && !windowBack) choose();
  };
  // A tap on the PIN field (or its label) chooses it too: one on the field that already has the
  // focus, left there by a refused sign-in, gives it no focus event, and a PIN auto-typed after that
  // tap went out as a badge until the person tapped elsewhere and back.
  const onPointerDown = (e: PointerEvent<HTMLFormElement>) => {
    const target = e.target as { name?: unknown; closest?: (s: string) => { querySelector?: (s: string) => { name?: unknown } | null } | null };
    const name = target.name ?? target.closest?.('label')?.querySelector?.('input')?.name;
    if (name === 'secret') choose();
  };
  const onBlur = (e: FocusEvent<HTMLFormElement>) => {
    // The document has no focus during the blur only when the window loses it (a tap on a blank
    // part of the page keeps it: the field tapped next is chosen).
    const target = e.target as { name?: unknown; ownerDocument?: { hasFocus?: () => boolean } | null };
    windowLeftFrom.current = e.relatedTarget === null && target.ownerDocument?.hasFocus?.() === false ? (target.name ?? null) : null;
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    // Enter pressed again while the last one is answered: the scan stays in its field, not lost.
    if (busy) return;
    secretChosen.current = false;
    if (badge) {
      // A scan is sent once: one the site did not know must not stand in for the name and PIN
      // typed next (nor wait in the field for the next person). The PIN field is emptied too: the
      // pad's digits tapped before the scan stayed there, and the next PIN went out behind them.
      setBadge('');
      setSecret('');
      void signInBadge(badge);
    } else {
      // So is a PIN or password (the name stays): left in its masked field, what was typed next
      // was added to it, and the refused "1235" and then "1234" went out as "12351234".
      setSecret('');
      void signIn(user, secret);
    }
  };
  return (
    <main className="signin">
      <h1>{t('signIn.title')}</h1>
      {idleMs !== null && (
        <p role="status" className="notice">
          {t('signIn.idle', { after: formatDuration(lang, idleMs) })}
        </p>
      )}
      <form onSubmit={submit} onKeyDown={onKeyDown} onFocus={onFocus} onBlur={onBlur} onPointerDown={onPointerDown}>
        <label>
          {t('signIn.user')}
          <input name="user" autoComplete="username" value={user} onChange={(e) => setUser(e.target.value)} />
        </label>
        <label>
          {t('signIn.secret')}
          <input name="secret" type="password" autoComplete="current-password" value={secret} onChange={(e) => setSecret(e.target.value)} />
        </label>
        {/* A touch screen's PIN pad (shown by the stylesheet where one is a pointer): it types into
            this field's value, as the keyboard does, and leaves the focus (its keys take none) and
            a run of keys (it types none) as they were. A tap on it chooses nothing: choosing the
            PIN field tells a PIN auto-typed after the tap from a scan, and nothing auto-types after
            pad taps, while a scan after them is the person giving up on the PIN for the badge.
            So a quick run after pad taps is a scan wherever it goes, the PIN field the person
            chose included (`padSinceChosen`): taken as a PIN, the card's number went out behind
            the pad's digits as that name's PIN. A key that leaves the field empty (Clear, the
            backspace on its last digit) takes that back: the field is as it was chosen, and a PIN
            auto-typed next is a PIN. Set from the value the key makes, in the updater, so the
            flag and the field agree whatever the render saw; the same for the same value, so an
            updater run twice (React's strict mode) sets the same. */}
        <PinPad
          onPress={(key) => {
            setSecret((s) => {
              const next = padPress(s, key);
              padSinceChosen.current = next !== '';
              return next;
            });
          }}
        />
        <label>
          {t('signIn.badge')}
          {/* Focused when the screen appears: a badge reader types the card's number and Enter
              into whatever has focus, so a scan signs in without a tap on this field first. */}
          <input name="badge" autoComplete="off" autoFocus value={badge} onChange={(e) => setBadge(e.target.value)} />
        </label>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {/* aria-disabled, not disabled, while a sign-in is answered (`submit` sends nothing then):
            chromium drops the focus of a button that becomes disabled to the page, and a badge
            scanned after a PIN refused from a tap on it went nowhere (floor-ui-focus-kept.e2e). */}
        <button type="submit" className="primary" aria-disabled={busy || undefined}>
          {t('signIn.submit')}
        </button>
      </form>
      {/* Its keys go through the scan check too (onKeyDown): a badge scanned after picking a language. */}
      <div onKeyDown={onKeyDown}>
        <LanguagePicker />
      </div>
    </main>
  );
}
