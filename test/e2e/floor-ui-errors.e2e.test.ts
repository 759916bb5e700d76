// The floor UI's own failures reach the site's log, in chromium against a demo site (the
// production build: no test hook; the failures are real ones): a screen that fails on a reply
// (routed, as floor-ui-robust does) is reported, logs/site.log has the line with the id and the
// user, and the screen shows that id in the chosen language; an uncaught error on the page (a
// timer's throw) is reported too, and so is one before sign-in. Set up as the other browser
// suites (support.ts); without chromium skipped with a loud notice — and fails under CI=true.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CI, HAVE_CHROMIUM, launchChromium, signedInPage, startDemo, stopDemo, untilWith, warnSkipped, type DemoChild, unrouteAfterTest, unrouteAll } from './support.ts';

warnSkipped('test/e2e/floor-ui-errors.e2e.test.ts');

const output = { out: '', err: '' };
let demo: DemoChild | undefined;
let browser: Awaited<ReturnType<typeof signedInPage>> | undefined;
let page: Page;
const pageErrors: string[] = [];
const until = untilWith(() => output);
/** The app's version, which the build gives the page (build/vite.renderer.config.ts) and its reports carry. */
const VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }).version.replace(/\./g, '\\.');
const siteLog = () => readFileSync(join(demo!.data, 'logs/site.log'), 'utf8');

const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

suite("the floor UI's errors in the site's log (chromium)", () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    demo = await startDemo('tilstand-e2e-errors-', output);
    browser = await signedInPage(demo.url, 'demo', '1234', pageErrors);
    page = browser.page;
  }, 120_000);

  // The routes a test put on the page come off when it ends, failed or not (support.ts).
  afterEach(({ task }) => unrouteAfterTest(page, task));

  afterAll(async () => {
    await stopDemo(demo, browser);
  }, 60_000);

  it('a screen that fails to render is logged under an id the screen shows, with the user, screen and language', async () => {
    await page.selectOption('header select[name="lang"]', 'nb');
    await page.route('**/api/deadLetters', async (route) => {
      const body = JSON.stringify({ ok: true, value: [{ id: 'dl-x', receivedMs: Date.now(), topic: 't', reason: 'bad_json', detail: 'x', payload: { not: 'text' }, status: 'open', dismissed: null }] });
      await route.fulfill({ status: 200, contentType: 'application/json', body });
    });
    await page.click('nav [data-screen="deadLetters"]');
    const shown = await page.waitForSelector('[data-crashed="deadLetters"] .crash-reported');
    const id = (await shown.getAttribute('data-reported'))!;
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(await shown.textContent()).toBe(`Skjer det igjen, si fra til IT: stedets logg har feilen som ${id}.`);
    const line = await until(() => siteLog().split('\n').find((l) => l.includes(`client error ${id} `)), 'the report in site.log', 10_000);
    expect(line).toMatch(new RegExp(`client error ${id} \\(user "demo", screen "deadLetters", lang "nb", version "${VERSION}", render\\): "`));
    expect(line).toContain('component stack:');
    // Once: the retries on each push of the store's state send it no more.
    await page.waitForTimeout(6_000);
    expect(siteLog().split('\n').filter((l) => l.includes('client error ')).length).toBe(1);
    await unrouteAll(page);
    await page.click('nav [data-screen="inbox"]');
  });

  it("an uncaught error on the page (a timer's throw) is logged too", async () => {
    await page.evaluate(() => void setTimeout(() => { throw new Error('kiosk timer failed'); }, 0));
    const line = await until(() => siteLog().split('\n').find((l) => l.includes('kiosk timer failed')), 'the uncaught error in site.log', 10_000);
    expect(line).toMatch(new RegExp(`client error [0-9a-f]{8} \\(user "demo", screen "inbox", lang "nb", version "${VERSION}", error\\): "Error: kiosk timer failed" stack: `));
  });

  it('before sign-in as well, naming no user', async () => {
    const profile = mkdtempSync(join(tmpdir(), 'tilstand-chromium-'));
    const other = await launchChromium(profile);
    try {
      const p = other.pages()[0] ?? (await other.newPage());
      await p.goto(`${demo!.url}/`);
      await p.waitForSelector('form input[name="user"]');
      await p.evaluate(() => void Promise.reject(new Error('sign-in screen promise lost')));
      const line = await until(() => siteLog().split('\n').find((l) => l.includes('sign-in screen promise lost')), 'the rejection in site.log', 10_000);
      expect(line).toMatch(new RegExp(`client error [0-9a-f]{8} \\(not signed in, from "loopback", screen "signIn", lang "en", version "${VERSION}", rejection\\)`));
    } finally {
      await other.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});
