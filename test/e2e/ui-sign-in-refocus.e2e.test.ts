// A badge scan into the PIN field, in chromium against a demo site (support.ts's startDemo and
// openPage), where the screen counts that field as not chosen by the person (SignIn.tsx
// `secretChosen`), so the scan goes out as a badge and not as a PIN:
// - after a refused PIN, the window left and come back to (another window, a notification):
//   chromium gives the PIN field its focus event again, and that counted as the person choosing it
//   — the reader's scan went out as the PIN of the name typed, one more attempt toward its lockout;
// - the PIN field tapped with no name typed: a PIN with no name signs nobody in, and the scan went
//   out as one.
//
// Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with a loud notice — and fails
// under CI=true.

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiSession, CHROMIUM, CI, HAVE_CHROMIUM, openPage, runCli, startDemo, stopDemo, untilWith, warnSkipped, type DemoChild, type SuiteBrowser, scanKeys } from './support.ts';

warnSkipped('test/e2e/ui-sign-in-refocus.e2e.test.ts');

const output = { out: '', err: '' };
let demo: DemoChild | undefined;
let browser: SuiteBrowser | undefined;
let url = '';
let page: Page;
const until = untilWith(() => output);
const api = apiSession(() => url);
const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

const focusedName = () => page.evaluate("document.activeElement?.getAttribute('name') ?? null");

suite('sign-in: a badge scanned into a PIN field the person did not choose (chromium)', () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    demo = await startDemo('tilstand-e2e-ui-refocus-', output);
    url = demo.url;
    const add = await runCli(['users', 'add', '--data', demo.data, '--name', 'Lena', '--role', 'shift_lead', '--pin', '2580']);
    expect(add.code, add.stderr).toBe(0);
    await api('signIn', { user: 'Lena', secret: '2580' });
    browser = await openPage({ size: { width: 1366, height: 768 } });
    ({ page } = browser);
  }, 120_000);

  afterAll(async () => {
    await stopDemo(demo, browser);
  }, 60_000);

  /** The sign-in screen afresh; what each sign-in request carried goes to `sent`. */
  const fresh = async (): Promise<unknown[]> => {
    const sent: unknown[] = [];
    page.removeAllListeners('request');
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/signIn') sent.push(JSON.parse(r.postData() ?? '{}'));
    });
    await page.goto(`${url}/`);
    await page.waitForSelector('form input[name="user"]');
    // The page's focus as chromium keeps it (after the navigation, which may change the page's
    // process): playwright's emulation has every page focused always.
    const cdp = await browser!.context.newCDPSession(page);
    await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: false });
    await cdp.detach();
    return sent;
  };
  /** A reader's scan: the keys as quick as it types them, then Enter. */
  const scan = (chars: string) => scanKeys(page, chars);

  it('after a refused PIN, the window left and come back to: a scan into the PIN field goes out as a badge', async () => {
    const sent = await fresh();
    await page.fill('input[name="user"]', 'Lena');
    await page.click('input[name="secret"]');
    await page.keyboard.type('1111', { delay: 150 });
    await page.keyboard.press('Enter');
    await until(() => sent.length >= 1, 'the PIN');
    await page.waitForSelector('.signin [role="alert"]');
    await page.waitForSelector('button[type="submit"]:not([aria-disabled="true"])');
    expect(await focusedName()).toBe('secret');
    // Another window in front, then this one again.
    const other = await browser!.context.newPage();
    await other.bringToFront();
    await expect.poll(() => page.evaluate('document.hasFocus()'), { timeout: 5_000 }).toBe(false);
    await page.bringToFront();
    await other.close();
    await expect.poll(() => page.evaluate('document.hasFocus()'), { timeout: 5_000 }).toBe(true);
    expect(await focusedName()).toBe('secret');
    await scan('00429911');
    await until(() => sent.length >= 2, 'the scan');
    expect(sent).toEqual([{ user: 'Lena', secret: '1111' }, { badge: '00429911' }]);
  }, 60_000);

  it('the PIN field tapped with no name typed: a scan there goes out as a badge', async () => {
    const sent = await fresh();
    await page.click('input[name="secret"]');
    expect(await focusedName()).toBe('secret');
    await scan('00429912');
    await until(() => sent.length >= 1, 'the scan');
    expect(sent).toEqual([{ badge: '00429912' }]);
  }, 60_000);
});
