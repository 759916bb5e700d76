// The sign-in screen and the first focus after it, in chromium against a demo site (support.ts's
// startDemo and openPage):
// - a PIN auto-typed (a password manager, a keyboard wedge: each key a few ms apart, then Enter)
//   into the PIN field the person put the focus in goes out as the PIN: as quick as a badge
//   reader, it went out as a badge and was refused as unknown (renderer/src/badge-scan.ts,
//   SignIn.tsx `secretChosen`); a scan into the PIN field a refused PIN left the focus in still
//   goes out as a badge (floor-ui-live.e2e.test.ts); so does a scan onto the language picker (a
//   language just chosen), whose type-ahead took its letters and where Enter sent nothing;
// - after that keyboard sign-in the focus is on the inbox's heading (for a screen reader to start
//   from) with no ring on it — a 3 px ring round a heading that does nothing read as a fault —,
//   while Tab on to the list's panel shows the ring (styles.css).
//
// Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with a loud notice — and fails
// under CI=true.

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiSession, CHROMIUM, CI, HAVE_CHROMIUM, openPage, runCli, startDemo, stopDemo, untilWith, warnSkipped, type DemoChild, type SuiteBrowser, scanKeys } from './support.ts';

warnSkipped('test/e2e/ui-sign-in-autotype.e2e.test.ts');

const output = { out: '', err: '' };
let demo: DemoChild | undefined;
let browser: SuiteBrowser | undefined;
let url = '';
let page: Page;
const until = untilWith(() => output);
const api = apiSession(() => url);
const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

const focusedName = () => page.evaluate("document.activeElement?.getAttribute('name') ?? null");
const ring = () => page.evaluate("(() => { const s = getComputedStyle(document.activeElement); return `${s.outlineStyle} ${s.outlineWidth}`; })()");

suite('sign-in: a PIN auto-typed, and the focus after it (chromium)', () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    demo = await startDemo('tilstand-e2e-ui-autotype-', output);
    url = demo.url;
    const add = await runCli(['users', 'add', '--data', demo.data, '--name', 'Lena', '--role', 'shift_lead', '--pin', '2580']);
    expect(add.code, add.stderr).toBe(0);
    await api('signIn', { user: 'Lena', secret: '2580' });
    await until(async () => (await api<{ jobs: unknown[] }>('workQueue')).jobs.length >= 30, 'the demo snapshot in the tables', 40_000);
    const agent = await runCli(['agent', 'run', '--data', demo.data]);
    expect(agent.code, agent.stderr).toBe(0);
    browser = await openPage({ size: { width: 1366, height: 768 } });
    ({ page } = browser);
    await page.goto(`${url}/`);
    await page.waitForSelector('form input[name="user"]');
  }, 120_000);

  afterAll(async () => {
    await stopDemo(demo, browser);
  }, 60_000);

  it('a badge scanned right after picking the language (the focus on the picker) goes out as a badge, the language kept', async () => {
    const sent: unknown[] = [];
    const onRequest = (r: { url(): string; postData(): string | null }) => {
      if (new URL(r.url()).pathname === '/api/signIn') sent.push(JSON.parse(r.postData() ?? '{}'));
    };
    page.on('request', onRequest);
    await page.focus('select[name="lang"]');
    await page.selectOption('select[name="lang"]', 'de');
    expect(await focusedName()).toBe('lang');
    // A reader's scan; its "N" is Norsk's first letter for the picker's type-ahead.
    await scanKeys(page, 'N0042137');
    await until(() => sent.length >= 1, 'the scan');
    expect(sent).toEqual([{ badge: 'N0042137' }]);
    await page.waitForSelector('.signin [role="alert"]');
    expect(await page.inputValue('select[name="lang"]')).toBe('de');
    await page.waitForSelector('button[type="submit"]:not([aria-disabled="true"])');
    page.off('request', onRequest);
    await page.selectOption('select[name="lang"]', 'en');
  }, 60_000);

  it('a PIN auto-typed into the PIN field the person chose goes out as her PIN and signs her in; the heading focused, no ring on it, the ring on the list’s panel', async () => {
    const sent: unknown[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/signIn') sent.push(JSON.parse(r.postData() ?? '{}'));
    });
    await page.fill('input[name="user"]', 'Lena');
    await page.click('input[name="secret"]');
    expect(await focusedName()).toBe('secret');
    // As quick as a reader: 4 keys and Enter, no pause.
    await page.keyboard.type('2580', { delay: 0 });
    await page.keyboard.press('Enter');
    await until(() => sent.length >= 1, 'the sign-in');
    expect(sent).toEqual([{ user: 'Lena', secret: '2580' }]);
    await page.waitForSelector('.inbox-list [data-proposal]');
    await expect.poll(() => page.evaluate("document.activeElement?.matches('.inbox-list > h2') ?? false"), { timeout: 5_000 }).toBe(true);
    expect(await ring()).toMatch(/^none /);
    await page.keyboard.press('Tab');
    expect(await page.evaluate("document.activeElement?.matches('.inbox-list .table-wrap') ?? false")).toBe(true);
    expect(await ring()).toBe('solid 3px');
  }, 60_000);
});
