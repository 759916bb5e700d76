// Where the keyboard focus is after the error line is closed, in chromium against a demo site
// (support.ts's startDemo and signedInPage). The line's ✖ button (or the line clicked) goes with
// the line, and chromium dropped the focus to the page: a keyboard user's next Tab began again at
// the top, an Enter or a scan went nowhere. The focus goes back to where the person was (the button
// of what failed), else to the navigation's current screen (renderer `errorLineFocus`, App.tsx).
//
// Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with a loud notice — and fails
// under CI=true.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CI, HAVE_CHROMIUM, signedInPage, startDemo, stopDemo, warnSkipped, type DemoChild, type SuiteBrowser } from './support.ts';

warnSkipped('test/e2e/floor-ui-error-close.e2e.test.ts');

const output = { out: '', err: '' };
let demo: DemoChild | undefined;
let browser: SuiteBrowser | undefined;
const pageErrors: string[] = [];

const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

/** What has the keyboard focus: 'page', or the element's tag and text ("button Add user"). */
const focused = (page: SuiteBrowser['page']) =>
  page.evaluate<string>(`(() => {
    const el = document.activeElement;
    if (el === null || el === document.body) return 'page';
    return (el.tagName.toLowerCase() + ' ' + (el.textContent ?? '')).trim();
  })()`);

suite('closing the error line keeps the keyboard focus on the page (chromium)', () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    demo = await startDemo('tilstand-e2e-error-close-', output);
    browser = await signedInPage(demo.url, 'demo', '1234', pageErrors, { width: 1280, height: 800 });
  }, 120_000);

  afterAll(async () => {
    await stopDemo(demo, browser);
  }, 60_000);

  /** A new user the site refuses (one digit repeated), sent from the keyboard: the error line. */
  async function refused(page: SuiteBrowser['page']) {
    await page.fill('form.add-user input[name="name"]', 'Ola');
    await page.fill('form.add-user input[name="newSecret"]', '0000');
    await page.focus('form.add-user button[type="submit"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('p.error[role="alert"] button.close-error');
    expect(await focused(page)).toBe('button Add user');
  }

  it('closed with its button from the keyboard: the focus goes back to the button that failed', async () => {
    const page = browser!.page;
    await page.click('nav [data-screen="users"]');
    await page.waitForSelector('form.add-user');
    await refused(page);
    await page.focus('p.error button.close-error');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('p.error').count()).toBe(0);
    await expect.poll(() => focused(page)).toBe('button Add user');
  });

  it('closed by a click on the line: the same', async () => {
    const page = browser!.page;
    await refused(page);
    await page.click('p.error span');
    await expect.poll(() => page.locator('p.error').count()).toBe(0);
    await expect.poll(() => focused(page)).toBe('button Add user');
    expect(pageErrors).toEqual([]);
  });
});
