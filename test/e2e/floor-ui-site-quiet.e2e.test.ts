// The site stops answering (here: its process stopped with SIGSTOP, its sockets left open, as a
// hung site or a dropped line leaves them): the header said "● within budget" and "Online" and the
// Tables screen's ages stood still at the last status's. Now, after 3 of the site's status
// intervals without one (at least 15 s), the header says "No word from the site since HH:MM:SS",
// every age shown grows by the page's clock, and once the site goes on (SIGCONT) its next status
// puts all of it back. In chromium against a demo site (support.ts's startDemo, signedInPage).
//
// Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with a loud notice — and fails
// under CI=true.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CI, HAVE_CHROMIUM, signedInPage, startDemo, stopDemo, untilWith, warnSkipped, type DemoChild, type SuiteBrowser } from './support.ts';

warnSkipped('test/e2e/floor-ui-site-quiet.e2e.test.ts');

const output = { out: '', err: '' };
let demo: DemoChild | undefined;
let browser: SuiteBrowser | undefined;
const pageErrors: string[] = [];
const until = untilWith(() => output);

const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

/** "1 min 5 secs", "22 secs", "800 ms" (en-GB formatDuration) in ms; undefined for anything else. */
function durationMs(text: string): number | undefined {
  let ms = 0;
  let any = false;
  for (const [, n, unit] of text.matchAll(/([\d.,]+)\s*(ms|secs?|mins?|hours?|hrs?|h|days?)\b/g)) {
    const v = Number(n!.replace(/,/g, ''));
    const per = unit === 'ms' ? 1 : unit!.startsWith('sec') ? 1_000 : unit!.startsWith('min') ? 60_000 : unit!.startsWith('day') ? 86_400_000 : 3_600_000;
    ms += v * per;
    any = true;
  }
  return any ? ms : undefined;
}

suite('the floor UI when the site stops answering (chromium)', () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    demo = await startDemo('tilstand-e2e-site-quiet-', output);
    browser = await signedInPage(demo.url, 'demo', '1234', pageErrors, { width: 1280, height: 800 });
  }, 120_000);

  afterAll(async () => {
    // Never leave the site stopped: SIGTERM would wait for a SIGCONT.
    if (demo?.child.exitCode === null) demo.child.kill('SIGCONT');
    await stopDemo(demo, browser);
  }, 60_000);

  it('says "no word from the site since", lets the ages grow, and is back to the site’s figures once it answers', async () => {
    const page = browser!.page;
    await page.click('nav [data-screen="tables"]');
    const ageCell = page.locator('tr[data-table="stock"] td.num').first();
    await ageCell.waitFor();
    const ageNow = async () => durationMs((await ageCell.textContent()) ?? '');
    // The site's own figures while it speaks; no marker.
    await until(async () => (await page.locator('[data-testid="freshness"]').textContent())?.includes('within budget'), 'the header within budget');
    expect(await page.locator('[data-testid="site-quiet"]').count()).toBe(0);
    const before = await ageNow();
    expect(before, `the stock age "${await ageCell.textContent()}"`).toBeDefined();
    expect(before!).toBeLessThan(15_000);

    const stoppedAt = Date.now();
    demo!.child.kill('SIGSTOP');
    try {
      const marker = page.locator('[data-testid="site-quiet"]');
      await marker.waitFor({ timeout: 30_000 });
      // 3 × 5 s (the demo's status interval) at least.
      expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(14_000);
      expect(await marker.textContent()).toMatch(/^⚠ No word from the site since \d\d:\d\d:\d\d$/);
      // The age grows: at least the time since the last status (≥ 15 s), and on, second by second.
      const first = await ageNow();
      expect(first!).toBeGreaterThanOrEqual(15_000);
      await page.waitForTimeout(2_500);
      const later = await ageNow();
      expect(later!).toBeGreaterThanOrEqual(first! + 1_000);
      // Not "Online" while nothing is known of the line.
      expect(await page.locator('[data-testid="sync-chip"]').textContent()).not.toBe('Online');
    } finally {
      demo!.child.kill('SIGCONT');
    }
    // The site goes on: its next status takes the marker away and its ages are shown again.
    await until(async () => (await page.locator('[data-testid="site-quiet"]').count()) === 0, 'the marker gone after the site went on', 30_000);
    await until(async () => ((await ageNow()) ?? Infinity) < 15_000 && true, 'the stock age as the site says it', 30_000);
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
