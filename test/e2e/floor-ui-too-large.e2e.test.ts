// A request over the UI server's size limit, as the floor UI sends one: a shift lead pastes a
// huge text into a proposal's comment and approves. The server refuses the body (413, api.ts
// `request.tooLarge` with the limit; ui-server.ts) and the error line says so in the reader's
// language — English included — with what to do, instead of "request body over 65536 bytes";
// the proposal stays open. A demo site, an admin made with the users CLI, an agent run for
// proposals, Debian's chromium through playwright-core (support.ts's startDemo and signedInPage).
//
// Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with a loud notice — and fails
// under CI=true.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProposalView } from '../../core/site/api.ts';
import { apiSession, CHROMIUM, CI, HAVE_CHROMIUM, runCli, signedInPage, startDemo, stopDemo, untilWith, warnSkipped, type DemoChild, type SuiteBrowser } from './support.ts';

warnSkipped('test/e2e/floor-ui-too-large.e2e.test.ts');

const output = { out: '', err: '' };
let demo: DemoChild | undefined;
let browser: SuiteBrowser | undefined;
let url = '';
const pageErrors: string[] = [];
const until = untilWith(() => output);
/** The site API as the test's own session (not the page's). */
const api = apiSession(() => url);

const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

suite('a request over the UI server’s size limit (chromium)', () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    demo = await startDemo('tilstand-e2e-too-large-', output);
    url = demo.url;
    const add = await runCli(['users', 'add', '--data', demo.data, '--name', 'Ada', '--role', 'admin', '--pin', '2580']);
    expect(add.code, add.stderr).toBe(0);
    await api('signIn', { user: 'Ada', secret: '2580' });
    await until(async () => (await api<{ jobs: unknown[] }>('workQueue')).jobs.length >= 30, 'the demo snapshot in the tables', 40_000);
    const agent = await runCli(['agent', 'run', '--data', demo.data]);
    expect(agent.code, agent.stderr).toBe(0);
    browser = await signedInPage(url, 'Ada', '2580', pageErrors);
  }, 120_000);

  afterAll(async () => {
    await stopDemo(demo, browser);
  }, 60_000);

  it('says a comment too long to send in the chosen language, with the limit, and leaves the proposal open', async () => {
    const { page } = browser!;
    const p = (await api<ProposalView[]>('listProposals', { status: ['open'] }))[0];
    expect(p, 'an open proposal').toBeDefined();
    await page.click(`[data-proposal="${p!.id}"]`);
    await page.waitForSelector('.proposal .actions .approve');
    // A pasted log, say: over the server's 64 KiB a request may have, far past what a comment may hold.
    await page.fill('.proposal textarea[name="comment"]', 'x'.repeat(70_000));
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/decide');
    await page.click('.proposal .actions .approve');
    expect((await answered).status()).toBe(413);
    await page.waitForSelector('p.error[role="alert"]');
    const line = () => page.textContent('p.error[role="alert"]');
    expect(await line()).toMatch(/^The site refused this: a request may be at most 65\.5 kB; shorten what you typed \(a comment, say\) and send it again/);
    expect(await line()).not.toContain('65536');
    const lang = (l: string) => page.selectOption('header select[name="lang"]', l);
    try {
      await lang('nb');
      expect(await line()).toMatch(/^Stedet avviste dette: en forespørsel kan være på høyst 65,5 kB; gjør det du skrev kortere/);
      await lang('de');
      expect(await line()).toMatch(/^Der Standort hat das abgelehnt: eine Anfrage darf höchstens 65,5 kB groß sein/);
    } finally {
      await lang('en');
    }
    // Nothing was decided, and what was typed is still there to shorten.
    expect((await api<ProposalView>('getProposal', { id: p!.id })).status).toBe('open');
    expect((await page.inputValue('.proposal textarea[name="comment"]')).length).toBe(70_000);
    expect(pageErrors).toEqual([]);
  });
});
