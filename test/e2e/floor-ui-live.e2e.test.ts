// The floor UI's live state in chromium against a demo site (`tilstand start --demo --headless`),
// for what needs the page itself: the events socket breaking off and coming back. Set up as
// floor-ui.e2e.test.ts (the same demo site, a shift lead made with the users CLI, Debian's
// chromium through playwright-core; support.ts's startDemo and openPage), with the events socket
// routed through the test so it can cut it.
//
// Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with a loud notice — and fails
// under CI=true.

import { type BrowserContext, type Page, type WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiSession, CHROMIUM, CI, HAVE_CHROMIUM, openPage, runCli, startDemo, stopDemo, untilWith, warnSkipped, type DemoChild, type SuiteBrowser, scanKeys } from './support.ts';
import type { ProposalView } from '../../core/site/api.ts';

warnSkipped('test/e2e/floor-ui-live.e2e.test.ts');

const output = { out: '', err: '' };
let demo: DemoChild | undefined;
let browser: SuiteBrowser | undefined;
let data: string;
let url = '';
let context: BrowserContext;
let page: Page;
/** The page's events socket as the test routes it; while `eventsDown`, every new one is closed at once. */
let events: WebSocketRoute | undefined;
let eventsDown = false;

const run = runCli;

const until = untilWith(() => output);

/** The site API as the test's own session (another shift lead's screen, say). */
const api = apiSession(() => url);

const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

suite('the floor UI keeps up with the site (chromium)', () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    demo = await startDemo('tilstand-e2e-live-', output);
    ({ data, url } = demo);
    const add = await run(['users', 'add', '--data', data, '--name', 'Lena', '--role', 'shift_lead', '--pin', '2580']);
    expect(add.code, add.stderr).toBe(0);
    await api('signIn', { user: 'Lena', secret: '2580' });
    await until(async () => (await api<{ jobs: unknown[] }>('workQueue')).jobs.length >= 30, 'the demo snapshot in the tables', 40_000);
    const agent = await run(['agent', 'run', '--data', data]);
    expect(agent.code, agent.stderr).toBe(0);
    // Not signed in yet: the events socket is routed through the test first, and the first test signs in.
    browser = await openPage();
    ({ context, page } = browser);
    await page.routeWebSocket(/\/api\/events$/, (ws) => {
      if (eventsDown) return void ws.close({ code: 1011, reason: 'the test keeps the events down' });
      ws.connectToServer();
      events = ws;
    });
    await page.goto(`${url}/`);
    await page.waitForSelector('form input[name="user"]');
  }, 120_000);

  afterAll(async () => {
    await stopDemo(demo, browser);
  }, 60_000);

  it('signs in with name and PIN after a badge the site did not know (the scan is not sent again), a scan after a refused PIN going out as a badge', async () => {
    const sent: unknown[] = [];
    const onRequest = (r: { url(): string; postData(): string | null }) => {
      if (new URL(r.url()).pathname === '/api/signIn') sent.push(JSON.parse(r.postData() ?? '{}'));
    };
    page.on('request', onRequest);
    // The badge field has focus when the screen appears: a badge reader (a keyboard wedge) types
    // the card's number and Enter into whatever has focus, with nobody tapping the field first.
    expect(await page.evaluate("document.activeElement?.getAttribute('name') ?? null")).toBe('badge');
    await page.keyboard.type('0000000042');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.signin [role="alert"]');
    // Not known: Lena types her name and a wrong PIN, sent with Enter from the PIN field…
    await page.fill('input[name="user"]', 'Lena');
    await page.fill('input[name="secret"]', '0000');
    const refused = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/signIn');
    await page.keyboard.press('Enter');
    expect((await refused).status()).toBe(401);
    // Answered: the screen takes a sign-in again (a scan while one is answered waits in its field).
    await page.waitForSelector('button[type="submit"]:not([aria-disabled="true"])');
    // …and, refused, the focus is still in the PIN field: a badge scan there goes out as a badge
    // (told by its pace, renderer/src/badge-scan.ts), not as her PIN — one attempt more toward
    // her lockout, the card's number sent as a PIN.
    expect(await page.evaluate("document.activeElement?.getAttribute('name') ?? null")).toBe('secret');
    await scanKeys(page, '0000000042');
    await until(() => sent.length === 3, 'the scan after the refused PIN');
    expect(await page.inputValue('input[name="secret"]')).toBe('');
    // Then her name and PIN, as a password manager types them (auto-type: name, Tab, PIN and
    // Enter, as quick as a reader): they go out as name and PIN, not as a badge. Once the scan is
    // answered (an Enter while it is, is not sent).
    await page.waitForSelector('button[type="submit"]:not([aria-disabled="true"])');
    await page.fill('input[name="user"]', '');
    await page.focus('input[name="user"]');
    await page.keyboard.type('Lena', { delay: 0 });
    await page.keyboard.press('Tab');
    await page.keyboard.type('2580', { delay: 0 });
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-proposal]');
    page.off('request', onRequest);
    expect(sent).toEqual([{ badge: '0000000042' }, { user: 'Lena', secret: '0000' }, { badge: '0000000042' }, { user: 'Lena', secret: '2580' }]);
    await until(() => events, 'the events socket');
  });

  it('reads the inbox and the open proposal again when the events socket comes back: no approve buttons on a proposal decided meanwhile', async () => {
    const open = await api<ProposalView[]>('listProposals', { status: ['open'] });
    const p = open[0]!;
    await page.click(`[data-proposal="${p.id}"]`);
    await page.waitForSelector('.proposal .actions .approve');
    // The events break off (the site restarted, a network blip, a slow page cut off by the site)…
    eventsDown = true;
    const before = events!;
    await before.close({ code: 1011, reason: 'cut by the test' });
    // …and meanwhile another shift lead rejects the proposal this screen has open.
    await api('decide', { id: p.id, decision: 'reject' });
    await page.waitForTimeout(1_500); // the page has tried again, and been refused
    eventsDown = false;
    await until(() => events !== before && events, 'the events socket again');
    // What was pushed during the break is lost: the page reads the inbox and the proposal again.
    await expect.poll(() => page.locator('.proposal .actions .approve').count(), { timeout: 8_000 }).toBe(0);
    expect(await page.textContent('.proposal')).toContain('rejected');
    await expect.poll(() => page.locator(`.inbox-list [data-proposal="${p.id}"]`).count(), { timeout: 8_000 }).toBe(0);
  });

  it("signs out after 10 minutes without use although the page asks the site every 30 s who is signed in", async () => {
    // A page of its own on the same browser session (the cookie signs it in), with its clock faked
    // from the start, so the 30 s check of `me` (main.tsx) runs under the same clock as the idle
    // timer. The site's own idle check runs on its real clock and is not reached here.
    // Playwright's clock is the browser context's: installed for this page, it runs the first
    // page's Date.now too, and that page's idle watch (the screen's clock, core/site screenNow's:
    // the wall clock) saw its own last input 10 minutes back first and signed the shared session
    // out, as a tab left alone does. The first page leaves the UI for this test (the last one).
    await page.goto('about:blank');
    const idle = await context.newPage();
    try {
      await idle.clock.install();
      await idle.goto(`${url}/`);
      await idle.waitForSelector('[data-proposal]');
      await idle.mouse.move(40, 40);
      for (let s = 0; s < 10 * 60; s += 30) {
        if ((await idle.locator('form input[name="user"]').count()) > 0) break;
        const me = idle.waitForResponse((r) => new URL(r.url()).pathname === '/api/me', { timeout: 5_000 }).catch(() => undefined);
        await idle.clock.runFor(30_000);
        await me; // the check's answer: the same person, still signed in
        await idle.waitForTimeout(50);
      }
      await idle.clock.runFor(5_000);
      await idle.waitForSelector('form input[name="user"]', { timeout: 5_000 });
      expect(await idle.locator('.signin [role="status"]').textContent()).toMatch(/Signed out after 10 mins? without use/);
      // Ready for the next person's badge scan.
      expect(await idle.evaluate("document.activeElement?.getAttribute('name') ?? null")).toBe('badge');
    } finally {
      await idle.close();
    }
  });
});
