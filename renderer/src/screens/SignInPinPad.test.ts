// The sign-in screen's PIN pad (components/PinPad.tsx, shown on a touch screen): its keys type into
// the PIN field's value, mixed with what the keyboard types there; none sends the form or takes the
// focus; a refused sign-in empties the field as before; and a tap on it chooses nothing
// (SignIn.tsx `secretChosen`), so a badge scanned into the PIN field a refused PIN left the focus in
// still goes out as a badge — a pad tap taken as choosing the field would send the card's number,
// behind the pad's digits, as the name's PIN. Nothing auto-types after pad taps, so a quick run
// after them is a scan in the PIN field the person chose too (`padSinceChosen`), unless Clear or
// the backspace left the field empty again. Every badge going out empties the PIN field, so pad
// digits tapped before a refused badge are not added to the next PIN.
//
// No DOM here (as SignInScanAfterRefusal.test.ts): hooks that keep their state between renders, the
// screen's function called; a key is its keydown on the form, then what the browser does unless the
// handler prevented it; a pad key's tap is its pointerdown, then, unless that was prevented (the
// focus would go to the key), its click. In chromium: test/e2e/ui-sign-in-pin-pad.e2e.test.ts.
import { describe, expect, it, vi } from 'vitest';
import { refusingSignIn, type SignInHolder } from './testing/sign-in.ts';

const holder: SignInHolder = { store: null, slots: [], at: 0 };

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  return fake.fakeReact(await importOriginal(), () => holder.store, fake.slotHooks(() => holder));
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

/** A reader's pace, and a hand's. */
const SCAN_GAP_MS = 8;
const HAND_GAP_MS = 140;

/** The sign-in screen over a site that refuses every sign-in (testing/sign-in.ts). */
const screen = () => refusingSignIn(holder);

describe('sign-in screen: the PIN pad', () => {
  it('has twelve keys, each a plain button out of the Tab order, the edit keys named in the chosen language', () => {
    const s = screen();
    const keys = s.render().filter((e) => e.type === 'button' && e.props['data-pad'] !== undefined);
    expect(keys.map((k) => k.props['data-pad'])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', 'clear', '0', 'back']);
    expect(keys.every((k) => k.props.type === 'button' && k.props.tabIndex === -1)).toBe(true);
    expect(s.padKey('back').props['aria-label']).toBe('Delete last digit');
    expect(s.padKey('clear').props['aria-label']).toBe('Clear PIN');
    holder.store!.getState().setLang('nb');
    expect(s.padKey('back').props['aria-label']).toBe('Slett siste siffer');
    expect(s.render().find((e) => e.props.className === 'pin-pad')!.props['aria-label']).toBe('Tastatur for PIN');
    holder.store!.getState().setLang('de');
    expect(s.padKey('clear').props['aria-label']).toBe('PIN löschen');
  });

  it('its keys type into the PIN field, the backspace and Clear edit it, the focus kept; nothing is sent', () => {
    const s = screen();
    expect(s.tapPad('5', '5', 'clear', '1', '2', '3', '9', 'back', '4')).toBe(true);
    expect(s.field('secret').props.value).toBe('1234');
    expect(s.sent).toEqual([]);
  });

  it('digits from the keyboard and the pad mix, and Enter sends them; refused, the field is empty and the pad goes on from there', async () => {
    const s = screen();
    s.focus('user');
    await s.type('user', 'Kari', HAND_GAP_MS, false);
    s.focus('secret');
    await s.type('secret', '1', HAND_GAP_MS, false);
    s.tapPad('2');
    await s.type('secret', '3', HAND_GAP_MS, false);
    s.tapPad('5');
    expect(await s.type('secret', '', HAND_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/1235']);
    expect(s.field('secret').props.value).toBe('');
    s.tapPad('1', '2', '3', '4');
    expect(s.field('secret').props.value).toBe('1234');
  });

  // The field was given back the pad's digits tapped before the scan, and after the badge was
  // refused the next PIN from the pad went out behind them ("Kari/121234"), one more attempt toward
  // the lockout.
  it('a badge scanned after pad taps into the PIN field a refused PIN left the focus in goes out as a badge and empties the field: the next PIN goes out alone', async () => {
    const s = screen();
    s.focus('user');
    await s.type('user', 'Kari', HAND_GAP_MS, false);
    s.focus('secret');
    await s.type('secret', '1111', HAND_GAP_MS);
    expect(s.sent).toEqual(['Kari/1111']);
    s.tapPad('1', '2');
    expect(await s.type('secret', '00421234', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['Kari/1111', 'badge 00421234']);
    expect(s.field('secret').props.value).toBe('');
    expect(s.field('user').props.value).toBe('Kari');
    s.tapPad('1', '2', '3', '4');
    await s.send();
    expect(s.sent).toEqual(['Kari/1111', 'badge 00421234', 'Kari/1234']);
  });

  // A gloved lead types the name, taps the PIN field (people do), taps a digit or two on the pad,
  // then scans the badge instead: the scan went out as the name's PIN, behind the pad's digits
  // ("Kari/1200421234"), one more attempt toward the lockout.
  it('a badge scanned after pad taps into the PIN field the person tapped goes out as a badge, the pad’s digits not sent and not kept', async () => {
    const s = screen();
    s.focus('user');
    await s.type('user', 'Kari', HAND_GAP_MS, false);
    s.tap('secret');
    s.focus('secret');
    s.tapPad('1', '2');
    expect(await s.type('secret', '00421234', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['badge 00421234']);
    expect(s.field('secret').props.value).toBe('');
    expect(s.field('user').props.value).toBe('Kari');
  });

  it('in the PIN field the person tapped, after pad taps: a PIN typed on by hand, or auto-typed after a tap on the field again, goes out as the PIN', async () => {
    const s = screen();
    s.focus('user');
    await s.type('user', 'Kari', HAND_GAP_MS, false);
    s.tap('secret');
    s.focus('secret');
    s.tapPad('1', '2');
    expect(await s.type('secret', '34', HAND_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/1234']);
    // Refused: the focus still in the field; tapped, it is chosen; pad taps, then a tap on the field
    // again chooses it anew, and a PIN auto-typed after that is a PIN.
    s.tap('secret');
    s.tapPad('9');
    s.tap('secret');
    expect(await s.type('secret', '2580', SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/1234', 'Kari/92580']);
  });

  // A pad key tapped and then taken back (Clear, or the backspace down to nothing) leaves the field
  // as it was chosen: a PIN a password manager auto-types there next went out as a badge
  // ("badge 2580"), refused as unknown.
  it('in the PIN field the person tapped, pad taps cleared to an empty field: a PIN auto-typed next goes out as the PIN', async () => {
    for (const undo of [['clear'], ['back'], ['2', 'back', 'back']]) {
      const s = screen();
      s.focus('user');
      await s.type('user', 'Kari', HAND_GAP_MS, false);
      s.tap('secret');
      s.focus('secret');
      s.tapPad('1', ...undo);
      expect(s.field('secret').props.value, `pad 1, ${undo.join(' ')}`).toBe('');
      expect(await s.type('secret', '2580', SCAN_GAP_MS), `pad 1, ${undo.join(' ')}`).toBe(true);
      expect(s.sent, `pad 1, ${undo.join(' ')}`).toEqual(['Kari/2580']);
    }
  });

  it('in the PIN field the person tapped, pad digits left after the backspace: a quick run is still a badge', async () => {
    const s = screen();
    s.focus('user');
    await s.type('user', 'Kari', HAND_GAP_MS, false);
    s.tap('secret');
    s.focus('secret');
    s.tapPad('1', '2', 'back');
    expect(s.field('secret').props.value).toBe('1');
    expect(await s.type('secret', '00421234', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['badge 00421234']);
    expect(s.field('secret').props.value).toBe('');
  });

  // Pad digits typed with the focus in the badge or name field, then a badge scanned and refused:
  // the digits stayed in the PIN field, and the next PIN from the pad went out behind them
  // ("Kari/1231234"), one more attempt toward the lockout.
  it('a badge going out empties the PIN field: scanned into the badge field or the name field after pad taps', async () => {
    const s = screen();
    s.tapPad('1', '2', '3');
    expect(await s.type('badge', '00421234', SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['badge 00421234']);
    expect(s.field('secret').props.value).toBe('');
    expect(s.field('badge').props.value).toBe('');
    s.focus('user');
    await s.type('user', 'Kari', HAND_GAP_MS, false);
    s.tapPad('1', '2', '3');
    expect(await s.type('user', '00425678', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['badge 00421234', 'badge 00425678']);
    expect(s.field('secret').props.value).toBe('');
    expect(s.field('user').props.value).toBe('Kari');
    s.tapPad('1', '2', '3', '4');
    await s.send();
    expect(s.sent).toEqual(['badge 00421234', 'badge 00425678', 'Kari/1234']);
  });
});
