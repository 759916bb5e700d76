// The floor UI when something goes wrong, in chromium against a demo site (set up as
// floor-ui-shift.e2e.test.ts: free ports, the demo snapshot, Debian's chromium through
// playwright-core, skipped with a loud notice without it and failing under CI=true):
// - a screen that fails to render (here: the site answers the dead-letters read with a payload
//   that is no text, which React refuses as a child) says so in the chosen language under a header
//   and navigation that still work, instead of a white page on a kiosk PC;
// - item and location codes never break inside ("ITEM-/007" at 1366 wide in nb), nor in History's
//   cells or the work queue's "Blocked because" ("material short: ITEM-/003"), and at 1024 wide in
//   en, nb and de every column of Stock, Work queue and Tables shows without its panel scrolling
//   ("Waiting for a decision" was cut to "W fo de"), a due time stays on one line and the
//   navigation keeps one row;
// - after a dead letter is dismissed the focus is on the next one's Dismiss, not on the page;
// - the Tables screen's decisions are in nb and de (core's default texts).
// And, without a browser: the renderer's English copy of core's default decisions is core's text.

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TABLE_BUDGETS } from '../../core/ingest/freshness.ts';
import { MESSAGES, tableDecision, type MessageKey } from '../../renderer/src/i18n/messages.ts';
import { apiSession, CHROMIUM, CI, HAVE_CHROMIUM, ROOT, runCli, signedInPage, startDemo, stopDemo, untilWith, warnSkipped, type DemoChild } from './support.ts';

describe('the Tables screen’s default decisions (no browser)', () => {
  // The renderer may import only types from core: its English copy of the defaults is checked here.
  it('are core’s DEFAULT_TABLE_BUDGETS texts word for word, each with its nb and de', () => {
    expect(DEFAULT_TABLE_BUDGETS.length).toBeGreaterThan(0);
    for (const b of DEFAULT_TABLE_BUDGETS) {
      const key = `tables.decision.${b.table}` as MessageKey;
      expect(MESSAGES.en[key], b.table).toBe(b.decision);
      for (const lang of ['nb', 'de'] as const) expect(tableDecision(lang, b.table, b.decision), `${lang} ${b.table}`).not.toBe(b.decision);
    }
  });
});

warnSkipped('test/e2e/floor-ui-robust.e2e.test.ts');

const output = { out: '', err: '' };
let demo: DemoChild | undefined;
let browser: { context: BrowserContext; page: Page; profile: string } | undefined;
let data = '';
let url = '';
let page: Page;
const pageErrors: string[] = [];

const until = untilWith(() => output);
const api = apiSession(() => url);
const SHOTS = join(ROOT, 'test-artifacts/screenshots');

const go = async (screen: string) => {
  await page.click(`nav [data-screen="${screen}"]`);
  await page.waitForSelector(`nav [data-screen="${screen}"][aria-current="page"]`);
};
const lang = (l: string) => page.selectOption('header select[name="lang"]', l);

const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

suite('the floor UI when something goes wrong (chromium)', () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    demo = await startDemo('tilstand-e2e-robust-', output);
    ({ data, url } = demo);
    await api('signIn', { user: 'demo', secret: '1234' });
    await until(async () => (await api<unknown[]>('stock')).length >= 10, 'the demo snapshot in the tables', 40_000);
    // The agent's proposals on the stock rows (their "waiting" chips) narrow the item column as the reviewer saw it.
    const agent = await runCli(['agent', 'run', '--data', data]);
    expect(agent.code, agent.stderr).toBe(0);
    mkdirSync(SHOTS, { recursive: true });
    browser = await signedInPage(url, 'demo', '1234', pageErrors);
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await stopDemo(demo, browser);
  }, 60_000);

  it('says in the chosen language that a screen failed, and the navigation still works', async () => {
    await lang('nb');
    // The site's answer as a newer or broken site might send it: a payload that is no text.
    await page.route('**/api/deadLetters', async (route) => {
      const body = JSON.stringify({ ok: true, value: [{ id: 'dl-x', receivedMs: Date.now(), topic: 't', reason: 'bad_json', detail: 'x', payload: { not: 'text' }, status: 'open', dismissed: null }] });
      await route.fulfill({ status: 200, contentType: 'application/json', body });
    });
    await go('deadLetters');
    await page.waitForSelector('[data-crashed="deadLetters"]');
    expect(await page.textContent('[data-crashed="deadLetters"] h2')).toContain('Dette skjermbildet kunne ikke vises');
    expect(await page.locator('header').count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'robust-screen-failed-nb.png') });
    // The site mended: "Try again" reads the screen's data again and shows it.
    await page.unroute('**/api/deadLetters');
    await page.click('[data-crashed="deadLetters"] button.crash-retry');
    await expect.poll(() => page.locator('section.dead-letters').count()).toBe(1);
    expect(await page.locator('[data-crashed]').count()).toBe(0);
    // Broken again, then another screen and back shows the screen again.
    await page.route('**/api/deadLetters', async (route) => {
      const body = JSON.stringify({ ok: true, value: [{ id: 'dl-x', receivedMs: Date.now(), topic: 't', reason: 'bad_json', detail: 'x', payload: { not: 'text' }, status: 'open', dismissed: null }] });
      await route.fulfill({ status: 200, contentType: 'application/json', body });
    });
    await go('stock');
    await go('deadLetters');
    await page.waitForSelector('[data-crashed="deadLetters"]');
    await page.unroute('**/api/deadLetters');
    await go('stock');
    await page.waitForSelector('tbody tr');
    expect(await page.locator('[data-crashed]').count()).toBe(0);
    await go('deadLetters');
    await expect.poll(() => page.locator('section.dead-letters').count()).toBe(1);
    expect(await page.locator('[data-crashed]').count()).toBe(0);
    await lang('en');
  });

  it('keeps codes and times on one line, and every column of Stock, Work queue and Tables in view at 1024 wide in en, nb and de', async () => {
    await lang('nb');
    await go('stock');
    await page.waitForSelector('tbody tr td.code');
    // A text on two lines has client rects at two heights.
    const broken = `[...document.querySelectorAll('main td.code, main span.code, main span.when, main td.word')].filter((el) => {
      const r = document.createRange();
      r.selectNodeContents(el);
      return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1;
    }).map((el) => el.textContent)`;
    // A table wider than its panel scrolls there: its right-hand columns are cut off on the screen.
    const cut = `[...document.querySelectorAll('main .table-wrap')].filter((w) => w.scrollWidth > w.clientWidth + 1).map((w) => w.getAttribute('aria-label') + ': ' + w.scrollWidth + ' px > ' + w.clientWidth)`;
    const navRows = `new Set([...document.querySelectorAll('nav[aria-label="main"] button')].map((b) => Math.round(b.getBoundingClientRect().top))).size`;
    expect(await page.locator('td.code').count()).toBeGreaterThanOrEqual(20);
    expect(await page.evaluate(broken), 'codes broken over two lines at 1366×768, nb').toEqual([]);
    await page.setViewportSize({ width: 1024, height: 768 });
    const over: string[] = [];
    const ready: Record<string, string> = { stock: 'tbody tr td.code', work: 'tbody tr span.code', tables: '[data-table="stock"]', history: 'tbody tr span.code' };
    for (const l of ['en', 'nb', 'de']) {
      await lang(l);
      for (const screen of ['stock', 'work', 'tables', 'history']) {
        await go(screen);
        await page.waitForSelector(ready[screen]!);
        expect(await page.evaluate(broken), `codes or times broken over two lines at 1024×768, ${l} ${screen}`).toEqual([]);
        const fit = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })')) as { scroll: number; inner: number };
        if (fit.scroll > fit.inner) over.push(`${l} ${screen}: page ${fit.scroll} px > ${fit.inner}`);
        // History shows any table's columns as stored: a wide one scrolls in its panel by design.
        if (screen !== 'history') over.push(...((await page.evaluate(cut)) as string[]).map((x) => `${l} ${screen}: ${x}`));
        if ((await page.evaluate(navRows)) !== 1) over.push(`${l} ${screen}: the navigation takes ${await page.evaluate(navRows)} rows`);
        if (l === 'de') await page.screenshot({ path: join(SHOTS, `robust-${screen}-1024-de.png`) });
      }
    }
    await page.setViewportSize({ width: 1366, height: 768 });
    expect(over).toEqual([]);
    await lang('en');
  });

  it('puts the focus on the next letter’s Dismiss after one is dismissed from the keyboard', async () => {
    const secrets = JSON.parse(readFileSync(join(data, 'secrets/modules.json'), 'utf8')) as { modules: Record<string, { username: string; password: string }> };
    const mqttUrl = /mqtt:\s+(mqtt:\/\/127\.0\.0\.1:\d+)/.exec(output.out)![1]!;
    const inv = secrets.modules.inventory!;
    const client = await mqtt.connectAsync(mqttUrl, { username: inv.username, password: inv.password, clientId: 'e2e-robust', reconnectPeriod: 0 });
    for (const n of [1, 2, 3]) await client.publishAsync('tilstand/demo/events/inventory/stock', `robust test ${n}`, { qos: 1 });
    await client.endAsync();
    await until(async () => (await api<Array<{ payload: string }>>('deadLetters', { status: 'open' })).filter((d) => d.payload.startsWith('robust test')).length === 3, 'the dead letters');
    await go('work');
    await go('deadLetters');
    await page.waitForSelector('tr[data-letter] button.dismiss');
    const ids = await page.$$eval('tr[data-letter]', (rows) => rows.filter((r) => r.querySelector('button.dismiss')).map((r) => r.getAttribute('data-letter')!));
    expect(ids.length).toBeGreaterThanOrEqual(3);
    const [first, second] = ids as [string, string];
    await page.focus(`tr[data-letter="${first}"] button.dismiss`);
    await page.keyboard.press('Enter');
    // The dismissal is a row of its own under the letter's, across the table (DeadLetters.tsx `DismissRow`).
    await page.waitForSelector(`tr[data-dismissing="${first}"] input[name="dismissNote"]`);
    await page.keyboard.type('vendor test');
    await page.keyboard.press('Enter');
    await page.waitForSelector(`tr[data-letter="${first}"] .dismissed`);
    await expect.poll(() => page.evaluate(`document.activeElement?.closest('tr')?.getAttribute('data-letter') + ' ' + document.activeElement?.className`)).toBe(`${second} dismiss`);
    // Tab goes on from there, not from the top of the page.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(`document.activeElement?.closest('tr')?.getAttribute('data-letter') ?? document.activeElement?.tagName`)).toBe(second);
  });

  it('shows the tables’ default decisions in Norwegian and German', async () => {
    for (const l of ['nb', 'de'] as const) {
      await lang(l);
      await go('tables');
      await page.waitForSelector('[data-table="work_queue"]');
      const shown = await page.textContent('[data-table="work_queue"] td:first-child .small');
      expect(shown).toBe(MESSAGES[l]['tables.decision.work_queue']);
    }
    await lang('en');
    expect(pageErrors).toEqual([]);
  });
});
