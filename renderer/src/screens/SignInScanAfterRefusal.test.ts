// A badge scan after a refused PIN. The badge field has the focus when the sign-in screen appears,
// but after a refused PIN the focus sits in the PIN field (or on the Sign in button, if it was
// pressed): a badge reader types into whatever has it, so the scan's number went out as the PIN of
// the name still typed — one more attempt toward that name's lockout, and the person not signed
// in. A run of keys as quick as a reader's, ending in Enter, goes out as a badge wherever it was
// typed (badge-scan.ts); a PIN typed by hand still goes out as a PIN, and so does one auto-typed
// quick into the PIN field the person put the focus in (a password manager, a keyboard wedge).
//
// No DOM here (as SignInSecretSent.test.ts): hooks that keep their state between renders, the
// screen's function called; a key is its keydown on the form (where it bubbles to), then what the
// browser does unless the handler prevented it: the character into the field, or, for Enter, the
// form sent. Each key's time is its event's timeStamp.
import { describe, expect, it, vi } from 'vitest';
import { SCAN_KEY_MEAN_MS_MAX } from '../badge-scan.ts';
import { refusingSignIn, type SignInHolder } from './testing/sign-in.ts';

const holder: SignInHolder = { store: null, slots: [], at: 0 };

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  return fake.fakeReact(await importOriginal(), () => holder.store, fake.slotHooks(() => holder));
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

/** A reader's pace, and a quick hand's. */
const SCAN_GAP_MS = 8;
const HAND_GAP_MS = 140;

/** The sign-in screen over a site that refuses every sign-in (testing/sign-in.ts), and `refusedPin`. */
function screen() {
  const s = refusingSignIn(holder);
  /** Name and PIN typed by hand (each field tapped first) and refused. */
  const refusedPin = async () => {
    s.focus('user');
    await s.type('user', 'Kari', HAND_GAP_MS, false);
    s.focus('secret');
    await s.type('secret', '1235', HAND_GAP_MS);
    expect(s.sent).toEqual(['Kari/1235']);
    expect(s.store.getState().signInError).toMatch(/wrong/);
  };
  return { ...s, refusedPin };
}

describe('sign-in screen: a badge scan after a refused PIN', () => {
  it('scanned into the PIN field, goes out as a badge, not as the PIN; the field as it was, the name kept', async () => {
    const s = screen();
    await s.refusedPin();
    expect(await s.type('secret', '00421234', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['Kari/1235', 'badge 00421234']);
    expect(s.field('secret').props.value).toBe('');
    expect(s.field('user').props.value).toBe('Kari');
    expect(s.field('badge').props.value).toBe('');
  });

  it('a PIN typed by hand after the refusal still goes out as the PIN', async () => {
    const s = screen();
    await s.refusedPin();
    expect(await s.type('secret', '1234', HAND_GAP_MS)).toBe(true);
    // Quicker than a hand goes, just slower than a reader.
    expect(await s.type('secret', '4321', SCAN_KEY_MEAN_MS_MAX + 1)).toBe(true);
    expect(s.sent).toEqual(['Kari/1235', 'Kari/1234', 'Kari/4321']);
  });

  it('with the Sign in button focused (pressed for the refused PIN), goes out as a badge: no empty PIN is sent', async () => {
    const s = screen();
    await s.refusedPin();
    expect(await s.type(null, 'BADGE-7781', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['Kari/1235', 'badge BADGE-7781']);
  });

  it('scanned into the name field, goes out as a badge and the name typed stays', async () => {
    const s = screen();
    await s.refusedPin();
    expect(await s.type('user', '00421234', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['Kari/1235', 'badge 00421234']);
    expect(s.field('user').props.value).toBe('Kari');
  });

  it('scanned into the badge field, goes out as before: the form sent', async () => {
    const s = screen();
    expect(await s.type('badge', '00421234', SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['badge 00421234']);
  });

  it('a name, Tab, PIN and Enter typed by a password manager (auto-type) as quick as a reader go out as name and PIN, not as a badge', async () => {
    const s = screen();
    const seq = [...[...'Kari'].map((k) => [k, 'user'] as const), ['Tab', 'user'] as const, ...[...'2580'].map((k) => [k, 'secret'] as const), ['Enter', 'secret'] as const];
    expect(await s.keys(seq, SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/2580']);
  });

  it('a PIN auto-typed (a password manager, a keyboard wedge) into the PIN field the person put the focus in goes out as the PIN, not as a badge', async () => {
    const s = screen();
    s.focus('user');
    await s.type('user', 'Kari', HAND_GAP_MS, false);
    s.focus('secret');
    expect(await s.type('secret', '2580', SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/2580']);
  });

  it('after a refused PIN, the PIN field chosen again (the focus put elsewhere and back): a PIN auto-typed there goes out as the PIN', async () => {
    const s = screen();
    await s.refusedPin();
    s.focus('user');
    s.focus('secret');
    expect(await s.type('secret', '2580', SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/1235', 'Kari/2580']);
  });

  // The focus left in the PIN field by the refusal: a tap on that field gives it no focus event, and
  // the PIN auto-typed next went out as a badge (refused as unknown) until the person tapped
  // elsewhere and back.
  it('after a refused PIN, a tap on the PIN field that still has the focus chooses it: a PIN auto-typed there goes out as the PIN', async () => {
    const s = screen();
    await s.refusedPin();
    s.tap('secret');
    expect(await s.type('secret', '2580', SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/1235', 'Kari/2580']);
    // Refused again: the focus still there, the field is not chosen until it is tapped again —
    // here on its label's text.
    expect(await s.type('secret', '00421234', SCAN_GAP_MS)).toBe(false);
    s.tap('secret', 'label');
    expect(await s.type('secret', '2581', SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/1235', 'Kari/2580', 'badge 00421234', 'Kari/2581']);
  });

  it('a tap on another field or the button chooses nothing: a scan into the PIN field after a refused PIN still goes out as a badge', async () => {
    const s = screen();
    await s.refusedPin();
    s.tap('user');
    s.tap('badge');
    expect(await s.type('secret', '00421234', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['Kari/1235', 'badge 00421234']);
  });

  it('a badge scanned into the PIN field the person tapped with no name typed goes out as a badge: a PIN needs a name', async () => {
    const s = screen();
    s.focus('secret');
    expect(await s.type('secret', '00421234', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['badge 00421234']);
    expect(s.field('secret').props.value).toBe('');
  });

  it('after a refused PIN, the window losing and getting back the focus (another window, a notification) chooses nothing: a scan goes out as a badge', async () => {
    const s = screen();
    await s.refusedPin();
    s.blur('secret', true);
    s.focus('secret');
    expect(await s.type('secret', '00421234', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['Kari/1235', 'badge 00421234']);
  });

  it('after a refused PIN, a tap on a blank part of the page and back on the PIN field chooses it: a PIN auto-typed there goes out as the PIN', async () => {
    const s = screen();
    await s.refusedPin();
    s.blur('secret', false);
    s.focus('secret');
    expect(await s.type('secret', '2580', SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/1235', 'Kari/2580']);
  });

  it('the window left and got back with the focus elsewhere, then a tap on the PIN field: chosen, a PIN auto-typed there goes out as the PIN', async () => {
    const s = screen();
    await s.refusedPin();
    s.blur('secret', true);
    s.focus('user');
    s.focus('secret');
    expect(await s.type('secret', '2580', SCAN_GAP_MS)).toBe(true);
    expect(s.sent).toEqual(['Kari/1235', 'Kari/2580']);
  });

  it('a scan after a refused badge scan, the focus still in the PIN field, goes out as a badge again', async () => {
    const s = screen();
    await s.refusedPin();
    expect(await s.type('secret', '00421234', SCAN_GAP_MS)).toBe(false);
    expect(await s.type('secret', '00425678', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['Kari/1235', 'badge 00421234', 'badge 00425678']);
  });

  it('scanned with the focus on the language picker (a language just chosen), goes out as a badge and the language stays', async () => {
    const s = screen();
    s.store.getState().setLang('de');
    // A badge with letters: a picker's type-ahead took its "N" for Norsk, and Enter there sent nothing.
    expect(await s.type('lang', 'N0042137', SCAN_GAP_MS)).toBe(false);
    expect(s.sent).toEqual(['badge N0042137']);
    expect(s.store.getState().lang).toBe('de');
  });

  it('a language picked from the keyboard by its first letter is picked, nothing sent', async () => {
    const s = screen();
    expect(await s.type('lang', 'D', HAND_GAP_MS, false)).toBe(false);
    expect(s.sent).toEqual([]);
    expect(s.store.getState().lang).toBe('de');
  });
});
