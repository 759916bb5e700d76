// Test support for the sign-in screen tests that call the screen's function without a DOM
// (SignInPinPad, SignInScanAfterRefusal, SignInSecretSent): the screen over a site that refuses
// every sign-in, and the hands that type, tap and scan into it. Each test file still declares its
// own vi.mock of react (with src/testing/fake-react.ts's slotHooks, so state is kept between
// renders) and of zustand (hoisted per file), handing them the `holder` it passes here. Only tests
// import this file (a `testing/` folder: scripts/check-imports.mjs `TEST_ONLY`).
import type { SiteApi } from '../../../../core/site/api.ts';
import { LANG_NAMES, type Lang } from '../../i18n/messages.ts';
import { createAppStore, type AppStore } from '../../store/store.ts';
import { elementsOf, settle } from '../../testing/fake-react.ts';
import { SignIn } from '../SignIn.tsx';

/** What a test file's mocks of React read: the store, and the hook slots of slotHooks. */
export interface SignInHolder {
  store: AppStore | null;
  slots: unknown[];
  at: number;
}

/**
 * The sign-in screen in English over a site that refuses every sign-in as a wrong PIN; `sent` what
 * each sign-in carried (`badge <number>` or `<name>/<secret>`). The store and fresh hook slots go
 * in `holder`. A key is its keydown on the form (where it bubbles to), stamped with the harness's
 * clock, then what the browser does unless the handler prevented it: the character into the
 * field, or, for Enter, the form sent.
 */
export function refusingSignIn(holder: SignInHolder) {
  const sent: string[] = [];
  const api = {
    signIn: async (req: { user?: string; secret?: string; badge?: string }) => {
      sent.push(req.badge !== undefined ? `badge ${req.badge}` : `${req.user}/${req.secret}`);
      throw Object.assign(new Error('wrong name, PIN or password (4 attempts left)'), { kind: 'unauthenticated', code: 'signin.wrong', params: { left: 4 } });
    },
  } as unknown as SiteApi;
  const store = createAppStore(api);
  store.setState({ lang: 'en' });
  holder.store = store;
  holder.slots = [];
  const render = () => ((holder.at = 0), elementsOf(SignIn()));
  const form = () => render().find((e) => e.type === 'form')!;
  const field = (name: string) => render().find((e) => e.type === 'input' && e.props.name === name)!;
  /** The PIN pad's key `k` ('0'…'9', 'clear', 'back'). */
  const padKey = (k: string) => render().find((e) => e.type === 'button' && e.props['data-pad'] === k)!;
  let clock = 1_000;
  /** One key down at `clock` on the element named `on` (null: the Sign in button; 'lang': the language picker); true when its default went ahead. */
  const key = (k: string, on: string | null): boolean => {
    let prevented = false;
    if (on === 'lang') {
      // The language picker, beside the form: its key handler is the nearest element's above it
      // that has one (none: the browser's default alone). The default: a letter picks the language
      // whose name starts with it (type-ahead), Enter does nothing.
      const els = render();
      const at = els.findIndex((e) => e.type === 'select' && e.props.name === 'lang');
      const handler = els.slice(0, at).reverse().find((e) => e.type !== 'label' && typeof e.props.onKeyDown === 'function' && elementsOf(e.props.children).some((c) => c.type === 'select'));
      const select = els[at]!;
      (handler?.props.onKeyDown as ((e: unknown) => void) | undefined)?.({ key: k, timeStamp: clock, repeat: false, target: { name: 'lang', value: select.props.value }, preventDefault: () => void (prevented = true) });
      if (prevented) return false;
      const lang = (Object.entries(LANG_NAMES) as [Lang, string][]).find(([, n]) => n.toLowerCase().startsWith(k.toLowerCase()))?.[0];
      if (k.length === 1 && lang !== undefined) select.props.onChange!({ target: { value: lang } });
      return true;
    }
    const target = on === null ? {} : { name: on, value: field(on).props.value };
    // Without a handler, the browser's default alone.
    (form().props.onKeyDown as ((e: unknown) => void) | undefined)?.({ key: k, timeStamp: clock, repeat: false, target, preventDefault: () => void (prevented = true) });
    if (prevented) return false;
    if (k === 'Enter') form().props.onSubmit!({ preventDefault: () => undefined });
    else if (on !== null && k.length === 1) field(on).props.onChange!({ target: { value: `${field(on).props.value}${k}` } });
    return true;
  };
  /** `text` and (`enter`) Enter typed into `on`, a key every `gapMs`; true when the Enter sent the form. */
  const type = async (on: string | null, text: string, gapMs: number, enter = true): Promise<boolean> => {
    for (const ch of text) {
      key(ch, on);
      clock += gapMs;
    }
    const sentForm = enter && key('Enter', on);
    clock += 2_000;
    await settle();
    return sentForm;
  };
  /** Keys one after another `gapMs` apart, each into its place (no pause between places); true when the last one's default went ahead. */
  const keys = async (seq: readonly (readonly [string, string | null])[], gapMs: number): Promise<boolean> => {
    let went = false;
    for (const [k, on] of seq) {
      went = key(k, on);
      clock += gapMs;
    }
    clock += 2_000;
    await settle();
    return went;
  };
  /** The focus put on field `name` (a tap, a Tab): its focus event, which bubbles to the form. */
  const focus = (name: string) => (form().props.onFocus as ((e: unknown) => void) | undefined)?.({ target: { name, value: field(name).props.value } });
  /** A tap on field `name` (on `label`: on the text of its label): its pointerdown, which bubbles to the form; no focus event when the field has the focus already. */
  const tap = (name: string, on: 'field' | 'label' = 'field') =>
    (form().props.onPointerDown as ((e: unknown) => void) | undefined)?.({
      target: on === 'field' ? { name, value: field(name).props.value } : { closest: (sel: string) => (sel === 'label' ? { querySelector: (q: string) => (q === 'input' ? { name } : null) } : null) },
    });
  /**
   * Taps on the pad's keys, 400 ms apart: each its pointerdown (on the key, bubbling to the form)
   * and its click; true when every pointerdown was prevented (the focus stayed where it was).
   */
  const tapPad = (...padKeys: string[]): boolean => {
    let focusKept = true;
    for (const k of padKeys) {
      let prevented = false;
      const down = { target: { type: 'button' }, preventDefault: () => void (prevented = true) };
      (padKey(k).props.onPointerDown as ((e: unknown) => void) | undefined)?.(down);
      (form().props.onPointerDown as ((e: unknown) => void) | undefined)?.(down);
      focusKept &&= prevented;
      padKey(k).props.onClick!();
      clock += 400;
    }
    return focusKept;
  };
  /**
   * The focus leaving field `name` for nothing in the page: its blur, which bubbles to the form. With
   * `window` the whole window lost it (another window, a notification: the document has no focus
   * during the blur, and chromium gives the same field its focus event again when the window comes
   * back); without, a tap on a blank part of the page.
   */
  const blur = (name: string, window: boolean) =>
    (form().props.onBlur as ((e: unknown) => void) | undefined)?.({ target: { name, value: field(name).props.value, ownerDocument: { hasFocus: () => !window } }, relatedTarget: null });
  /** Field `name` given `value` through its onChange alone (no key events), as a keyboard leaves it. */
  const change = (name: string, value: string) => field(name).props.onChange!({ target: { value } });
  /** The form sent (its onSubmit, no key events), and the reply settled. */
  const send = async () => {
    form().props.onSubmit!({ preventDefault: () => undefined });
    await settle();
  };
  return { store, sent, render, field, padKey, focus, tap, tapPad, blur, type, keys, change, send };
}
