// The sign-in screen's PIN pad, in chromium against a demo site (support.ts's startDemo): a floor PC
// is often a touch screen with no keyboard, used with gloves, where a shift lead had to summon the
// OS keyboard to type a PIN. Two contexts of one chromium: one with a touch screen (playwright's
// `hasTouch`, which makes `any-pointer: coarse` match, as a touch screen does) and one with a mouse
// and keyboard only.
// - with a mouse and keyboard the pad is not shown (renderer/src/styles.css `.pin-pad`);
// - on a touch screen it is: twelve keys of at least 56 × 56 px, the edit keys named for a screen
//   reader, none in the Tab order; the Sign in button still in view at the floor PC's 1366 × 768,
//   a refusal said above it (the pad stands beside the fields);
// - its keys type into the PIN field, the backspace and Clear edit it, none sends the form, none
//   takes the focus; the demo user signs in with the pad and a tap on Sign in; a refused PIN empties
//   the field and the pad goes on from empty; digits from the pad and the keyboard mix;
// - a badge scanned after pad taps goes out as a badge (SignIn.tsx: a pad tap chooses nothing, and
//   a quick run after pad taps is a scan even in the PIN field the person tapped); wherever it was
//   scanned, the PIN field a refused PIN left the focus in included, the badge going out empties
//   the PIN field, so the PIN from the pad next goes out alone.
//
// Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with a loud notice — and fails
// under CI=true.

import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CI, HAVE_CHROMIUM, scanKeys, startDemo, stopDemo, untilWith, warnSkipped, type DemoChild } from './support.ts';

warnSkipped('test/e2e/ui-sign-in-pin-pad.e2e.test.ts');

const output = { out: '', err: '' };
let demo: DemoChild | undefined;
let chrome: Browser | undefined;
let url = '';
/** The touch screen's page, and the mouse-and-keyboard PC's. */
let touch: Page;
let mouse: Page;
const until = untilWith(() => output);
const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

/** The floor PC's screen, in en-GB (as support.ts launchChromium), with or without a touch screen. */
const context = (b: Browser, hasTouch: boolean): Promise<BrowserContext> => b.newContext({ viewport: { width: 1366, height: 768 }, locale: 'en-GB', hasTouch });

const focusedName = (p: Page) => p.evaluate("document.activeElement?.getAttribute('name') ?? null");
const secret = (p: Page) => p.inputValue('input[name="secret"]');
/** Taps on the pad's keys, one after another. */
const tapPad = async (p: Page, ...keys: string[]) => {
  for (const k of keys) await p.tap(`.pin-pad button[data-pad="${k}"]`);
};

suite('sign-in: the PIN pad on a touch screen (chromium)', () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    demo = await startDemo('tilstand-e2e-ui-pin-pad-', output);
    url = demo.url;
    chrome = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    touch = await (await context(chrome, true)).newPage();
    mouse = await (await context(chrome, false)).newPage();
    for (const p of [touch, mouse]) p.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await chrome?.close().catch(() => undefined);
    await stopDemo(demo, undefined);
  }, 60_000);

  /** The sign-in screen of `p` afresh (its session signed out, whatever a test before left); what each sign-in request carried goes to `sent`. */
  const fresh = async (p: Page): Promise<unknown[]> => {
    await p.request.post(`${url}/api/signOut`, { headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' }, data: {} }).catch(() => undefined);
    const sent: unknown[] = [];
    p.removeAllListeners('request');
    p.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/signIn') sent.push(JSON.parse(r.postData() ?? '{}'));
    });
    await p.goto(`${url}/`);
    await p.waitForSelector('form input[name="user"]');
    return sent;
  };
  /** A sign-in answered and refused: the error said and the button enabled again. */
  const refused = async (p: Page) => {
    await p.waitForSelector('.signin [role="alert"]');
    await p.waitForSelector('button[type="submit"]:not([aria-disabled="true"])');
  };

  it('with a mouse and keyboard only, no pad is shown', async () => {
    await fresh(mouse);
    expect(await mouse.evaluate("matchMedia('(any-pointer: coarse)').matches")).toBe(false);
    expect(await mouse.locator('.pin-pad').count()).toBe(1);
    expect(await mouse.locator('.pin-pad').isVisible()).toBe(false);
    expect(await mouse.getByRole('button', { name: 'Delete last digit' }).count()).toBe(0);
  });

  it('on a touch screen: twelve keys of at least 56 × 56 px, named for a screen reader, not in the Tab order; Sign in in view', async () => {
    await fresh(touch);
    expect(await touch.evaluate("matchMedia('(any-pointer: coarse)').matches")).toBe(true);
    expect(await touch.locator('.pin-pad').isVisible()).toBe(true);
    const keys = touch.locator('.pin-pad button');
    expect(await keys.evaluateAll((els) => els.map((e) => e.textContent))).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', 'Clear', '0', '⌫']);
    for (const box of await keys.evaluateAll((els) => els.map((e) => e.getBoundingClientRect()))) {
      expect(box.width).toBeGreaterThanOrEqual(56);
      expect(box.height).toBeGreaterThanOrEqual(56);
    }
    expect(await keys.evaluateAll((els) => els.map((e) => e.getAttribute('type')))).toEqual(Array(12).fill('button'));
    await expect(touch.getByRole('group', { name: 'PIN pad' }).count()).resolves.toBe(1);
    await expect(touch.getByRole('button', { name: 'Delete last digit' }).count()).resolves.toBe(1);
    await expect(touch.getByRole('button', { name: 'Clear PIN' }).count()).resolves.toBe(1);
    await expect(touch.getByRole('button', { name: '7', exact: true }).count()).resolves.toBe(1);
    // In Norwegian and German too.
    await touch.selectOption('select[name="lang"]', 'nb');
    await expect(touch.getByRole('button', { name: 'Slett siste siffer' }).count()).resolves.toBe(1);
    await expect(touch.getByRole('button', { name: 'Tøm PIN' }).count()).resolves.toBe(1);
    await touch.selectOption('select[name="lang"]', 'de');
    await expect(touch.getByRole('group', { name: 'PIN-Tastenfeld' }).count()).resolves.toBe(1);
    await expect(touch.getByRole('button', { name: 'Letzte Ziffer löschen' }).count()).resolves.toBe(1);
    await touch.selectOption('select[name="lang"]', 'en');
    // The keyboard's way is as it was: from the PIN field Tab goes to the badge field.
    await touch.focus('input[name="secret"]');
    await touch.keyboard.press('Tab');
    expect(await focusedName(touch)).toBe('badge');
    // The floor PC's 1366 × 768: the button that signs in is on the screen without a scroll.
    const submit = await touch.locator('button[type="submit"]').evaluate((e) => e.getBoundingClientRect().bottom);
    expect(submit).toBeLessThanOrEqual(768);
  });

  it('the pad types into the PIN field, backspace and Clear edit it, nothing is sent and the focus stays; Sign in tapped signs the demo user in', async () => {
    const sent = await fresh(touch);
    await touch.fill('input[name="user"]', 'demo');
    await tapPad(touch, '5', '5');
    expect(await secret(touch)).toBe('55');
    await tapPad(touch, 'clear');
    expect(await secret(touch)).toBe('');
    await tapPad(touch, '1', '2', '3', '9');
    expect(await secret(touch)).toBe('1239');
    await tapPad(touch, 'back');
    expect(await secret(touch)).toBe('123');
    await tapPad(touch, '4');
    expect(await secret(touch)).toBe('1234');
    expect(await focusedName(touch)).toBe('user');
    expect(sent).toEqual([]);
    await touch.tap('button[type="submit"]');
    await until(() => sent.length >= 1, 'the sign-in');
    expect(sent).toEqual([{ user: 'demo', secret: '1234' }]);
    await touch.waitForSelector('nav [data-screen="inbox"]');
  });

  it('a PIN from the pad refused: the field emptied, the pad goes on from empty and signs in', async () => {
    const sent = await fresh(touch);
    await touch.fill('input[name="user"]', 'demo');
    await tapPad(touch, '9', '9', '9', '9');
    await touch.tap('button[type="submit"]');
    await until(() => sent.length >= 1, 'the wrong PIN');
    await refused(touch);
    expect(await secret(touch)).toBe('');
    // The refusal said, and the button still on the floor PC's 1366 × 768 screen without a scroll
    // (under the fields, the pad pushed it past the edge: it stands beside them).
    expect(await touch.locator('button[type="submit"]').evaluate((e) => e.getBoundingClientRect().bottom)).toBeLessThanOrEqual(768);
    await tapPad(touch, '1', '2', '3', '4');
    expect(await secret(touch)).toBe('1234');
    await touch.tap('button[type="submit"]');
    await until(() => sent.length >= 2, 'the right PIN');
    expect(sent).toEqual([
      { user: 'demo', secret: '9999' },
      { user: 'demo', secret: '1234' },
    ]);
    await touch.waitForSelector('nav [data-screen="inbox"]');
  });

  it('digits from the pad and the keyboard mix in the PIN field, and Enter sends them', async () => {
    const sent = await fresh(touch);
    await touch.fill('input[name="user"]', 'demo');
    await touch.click('input[name="secret"]');
    await touch.keyboard.type('1', { delay: 150 });
    await tapPad(touch, '2');
    await touch.keyboard.type('3', { delay: 150 });
    await tapPad(touch, '4');
    expect(await secret(touch)).toBe('1234');
    expect(await focusedName(touch)).toBe('secret');
    await touch.keyboard.press('Enter');
    await until(() => sent.length >= 1, 'the sign-in');
    expect(sent).toEqual([{ user: 'demo', secret: '1234' }]);
    await touch.waitForSelector('nav [data-screen="inbox"]');
  });

  // The field was given back the pad's digits, and the next PIN from the pad went out behind them
  // ("121234"), one more attempt toward the lockout.
  it('a badge scanned after pad taps, into the PIN field a refused PIN left the focus in: a badge, the field emptied; the PIN from the pad next goes out alone and signs in', async () => {
    const sent = await fresh(touch);
    await touch.fill('input[name="user"]', 'demo');
    await touch.click('input[name="secret"]');
    await touch.keyboard.type('1111', { delay: 150 });
    await touch.keyboard.press('Enter');
    await until(() => sent.length >= 1, 'the wrong PIN');
    await refused(touch);
    expect(await focusedName(touch)).toBe('secret');
    await tapPad(touch, '1', '2');
    expect(await focusedName(touch)).toBe('secret');
    await scanKeys(touch, '00429911');
    await until(() => sent.length >= 2, 'the scan');
    expect(sent).toEqual([{ user: 'demo', secret: '1111' }, { badge: '00429911' }]);
    await refused(touch);
    expect(await secret(touch)).toBe('');
    expect(await touch.inputValue('input[name="user"]')).toBe('demo');
    await tapPad(touch, '1', '2', '3', '4');
    await touch.tap('button[type="submit"]');
    await until(() => sent.length >= 3, 'the PIN');
    expect(sent).toEqual([{ user: 'demo', secret: '1111' }, { badge: '00429911' }, { user: 'demo', secret: '1234' }]);
    await touch.waitForSelector('nav [data-screen="inbox"]');
  });

  it('a badge scanned after pad taps into the PIN field the person tapped, a name typed: a badge, the pad’s digits not sent and not kept', async () => {
    const sent = await fresh(touch);
    await touch.fill('input[name="user"]', 'demo');
    await touch.tap('input[name="secret"]');
    expect(await focusedName(touch)).toBe('secret');
    await tapPad(touch, '1', '2');
    await scanKeys(touch, '00429911');
    await until(() => sent.length >= 1, 'the scan');
    expect(sent).toEqual([{ badge: '00429911' }]);
    await refused(touch);
    expect(await secret(touch)).toBe('');
    expect(await touch.inputValue('input[name="user"]')).toBe('demo');
  });

  it('a badge scanned after pad taps and refused leaves no digits in the PIN field: the PIN from the pad next goes out alone and signs in', async () => {
    const sent = await fresh(touch);
    await tapPad(touch, '1', '2', '3');
    expect(await focusedName(touch)).toBe('badge');
    await scanKeys(touch, '00429913');
    await until(() => sent.length >= 1, 'the scan');
    await refused(touch);
    expect(await secret(touch)).toBe('');
    await touch.fill('input[name="user"]', 'demo');
    await tapPad(touch, '1', '2', '3', '4');
    await touch.tap('button[type="submit"]');
    await until(() => sent.length >= 2, 'the sign-in');
    expect(sent).toEqual([{ badge: '00429913' }, { user: 'demo', secret: '1234' }]);
    await touch.waitForSelector('nav [data-screen="inbox"]');
  });

  it('a badge scanned after pad taps with the badge field focused (as the screen appears): a badge', async () => {
    const sent = await fresh(touch);
    expect(await focusedName(touch)).toBe('badge');
    await tapPad(touch, '1', '2', '3');
    expect(await focusedName(touch)).toBe('badge');
    await scanKeys(touch, '00429912');
    await until(() => sent.length >= 1, 'the scan');
    expect(sent).toEqual([{ badge: '00429912' }]);
    await refused(touch);
  });
});
