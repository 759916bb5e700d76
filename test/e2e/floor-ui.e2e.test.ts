// The floor UI end to end: `tilstand start --demo --headless` as a child process, a shift lead
// made with the users CLI, and Debian's chromium driven by playwright-core through the real
// renderer, HTTP API and WebSocket events:
//   sign in → the inbox shows the agent's proposals → approve an assignment (keyboard A) and watch
//   the command go to `applied` and the work queue change → reject one (R) → the stale case (the
//   world changes between proposal and approval) → next (N) → languages (nb, de; number formats)
//   → time travel (History: an agent tag, diff with latest) → the tables' budget gauges →
//   axe-core on every screen → 1280×800 and 1920×1080.
// Screenshots of each screen go to test-artifacts/screenshots/ (gitignored); the inbox one also
// to docs/inbox.png for the README.
//
// Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with a loud notice — and fails
// under CI=true. The demo modules step only every 10 minutes here, so nothing but the test
// changes the world while it runs.

import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { type Page, type Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apiSession, CHROMIUM, CI, HAVE_CHROMIUM, openPage, ROOT, runCli, startDemo, stopDemo, untilWith, warnSkipped, type DemoChild, type SuiteBrowser, unrouteAfterTest } from './support.ts';
import type { ProposalView, StockView } from '../../core/site/api.ts';

const SHOTS = join(ROOT, 'test-artifacts/screenshots');
warnSkipped('test/e2e/floor-ui.e2e.test.ts', '!!! The floor UI was NOT tested end to end. Under CI=true this is a failure.\n');

/** The site's stdout and stderr so far. */
const output = { out: '', err: '' };
let demo: DemoChild | undefined;
/** chromium with its fresh --user-data-dir, removed with the site's data afterwards. */
let browser: SuiteBrowser | undefined;
let data: string;
let url = '';
let page: Page;

const run = runCli;

const until = untilWith(() => output);

/** The site API as the test's own session (to find proposals and check the world). */
const api = apiSession(() => url);

type Job = { job_id: string; status: string; assigned_resource: string | null };
const jobs = async () => (await api<{ jobs: Job[] }>('workQueue')).jobs;

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}

async function go(screen: string): Promise<void> {
  await page.click(`nav [data-screen="${screen}"]`);
}

/**
 * Opens proposal `id` from the inbox list and waits until the panel shows it, then for `ready`
 * in the panel. Not `ready` alone: the panel of the one open before has it too, and a key pressed
 * on that panel while the click's read is on its way is refused (the store decides only what is
 * shown and asked for last) — the Defer test below timed out so under CI.
 */
async function openProposal(id: string, ready: string): Promise<void> {
  await page.click(`[data-proposal="${id}"]`);
  await page.waitForSelector(`.inbox-list tr.selected [data-proposal="${id}"]`);
  await page.waitForSelector(ready);
}

/** axe-core on the current page; serious and critical violations fail. */
async function axe(where: string): Promise<void> {
  await page.addScriptTag({ path: join(ROOT, 'node_modules/axe-core/axe.min.js') });
  const result = (await page.evaluate(async () => {
    const r = await (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: unknown }> }> }> } }).axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target)) }));
  })) as Array<{ id: string; impact: string; help: string; targets: string[] }>;
  const bad = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad, `${where}: ${JSON.stringify(bad, null, 2)}`).toEqual([]);
}

const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

suite('the floor UI end to end (chromium)', () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    mkdirSync(SHOTS, { recursive: true });
    demo = await startDemo('tilstand-e2e-', output);
    ({ data, url } = demo);
    const add = await run(['users', 'add', '--data', data, '--name', 'Lena', '--role', 'shift_lead', '--pin', '2580']);
    expect(add.code, add.stderr).toBe(0);
    await api('signIn', { user: 'Lena', secret: '2580' });
    // The demo's start-up snapshot: 30 jobs, 6 resources, stock, committed.
    await until(async () => (await jobs()).length >= 30 && (await api<unknown[]>('stock', {})).length > 0, 'the demo snapshot in the tables', 40_000);
    const agent = await run(['agent', 'run', '--data', data]);
    expect(agent.code, agent.stderr).toBe(0);
    // axe-core is injected as an inline script; the app's CSP (tested in core/site) forbids that.
    // Not signed in: the first test signs in through the page and watches what it sends before.
    browser = await openPage({ bypassCSP: true });
    page = browser.page;
  }, 120_000);

  // The routes a test put on the page come off when it ends, failed or not (support.ts).
  afterEach(({ task }) => unrouteAfterTest(page, task));

  afterAll(async () => {
    await stopDemo(demo, browser);
  }, 60_000);

  it('signs in and shows the proposals in the inbox', async () => {
    // Every API call says how long ago the page saw input (core/site/api.ts InputAge): none yet
    // on a page just opened, a number once someone used it.
    const ages: string[] = [];
    const onRequest = (r: Request) => {
      if (new URL(r.url()).pathname.startsWith('/api/')) ages.push(r.headers()['x-tilstand-input-age'] ?? 'absent');
    };
    page.on('request', onRequest);
    // The events socket opens only once someone is signed in (renderer/src/api/follow.ts): the
    // site refuses it before, and the sign-in screen would retry it all night.
    const sockets: string[] = [];
    const consoleErrors: string[] = [];
    const onSocket = (ws: { url(): string }) => sockets.push(new URL(ws.url()).pathname);
    const onConsole = (m: { type(): string; text(): string }) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    };
    page.on('websocket', onSocket);
    page.on('console', onConsole);
    await page.goto(`${url}/`);
    await page.waitForSelector('form input[name="user"]');
    await shot('sign-in');
    await axe('sign-in');
    await page.waitForTimeout(1_500); // the old client's first retry came after 0.5 s, its next after 1 s
    expect(sockets).toEqual([]);
    await page.fill('input[name="user"]', 'Lena');
    await page.fill('input[name="secret"]', '2580');
    await page.click('button[type="submit"]');
    await page.waitForSelector('[data-proposal]');
    await expect.poll(() => sockets).toEqual(['/api/events']);
    page.off('websocket', onSocket);
    page.off('console', onConsole);
    expect(consoleErrors).toEqual([]);
    const n = await page.locator('[data-proposal]').count();
    expect(n).toBeGreaterThan(2);
    await expect.poll(() => page.locator('.inbox-list h2').textContent()).toMatch(/\d+ waiting for a decision/);
    page.off('request', onRequest);
    expect(ages[0]).toBe('none');
    expect(ages.at(-1)).toMatch(/^[0-9]+$/);
    expect(ages.filter((a) => a !== 'none' && !/^[0-9]+$/.test(a))).toEqual([]);
  });

  it('approves an assignment with A: the command goes to applied and the work queue changes', async () => {
    const open = await api<ProposalView[]>('listProposals', { status: ['open'] });
    const p = open.find((x) => x.action === 'assign_job')!;
    expect(p, JSON.stringify(open.map((x) => x.action))).toBeDefined();
    const { job_id, resource_id } = p.params as { job_id: string; resource_id: string };
    await openProposal(p.id, '.proposal .will-send');
    expect(await page.textContent('.proposal .will-send')).toBe('Approving sends “Assignment” (assign_job) to operations.');
    await shot('inbox');
    // The README's screenshot is refreshed on request only, so a test run leaves the tree clean.
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1') copyFileSync(join(SHOTS, 'inbox.png'), join(ROOT, 'docs/inbox.png'));
    await axe('inbox with a proposal open');
    await page.keyboard.press('a');
    // Progress through the write-back: approved, sent / acknowledged, then applied when the
    // module's events reach the work queue.
    await page.waitForSelector('.proposal .command-applied', { timeout: 30_000 });
    expect(await page.textContent('.proposal')).toContain('approved');
    expect((await jobs()).find((j) => j.job_id === job_id)?.assigned_resource).toBe(resource_id);
    await go('work');
    await expect.poll(() => page.textContent(`[data-job="${job_id}"] .assigned`), { timeout: 15_000 }).toBe(resource_id);
    await shot('work-queue');
    await axe('work queue');
  });

  it('rejects one with R', async () => {
    await go('inbox');
    const open = await api<ProposalView[]>('listProposals', { status: ['open'] });
    const p = open.find((x) => x.action !== 'assign_job') ?? open[0]!;
    await openProposal(p.id, '.proposal .will-send');
    await page.keyboard.press('r');
    await expect.poll(async () => (await api<ProposalView>('getProposal', { id: p.id })).status).toBe('rejected');
    await expect.poll(() => page.textContent('.proposal')).toContain('rejected');
    expect((await api<ProposalView>('getProposal', { id: p.id })).decidedBy).toBe('Lena');
  });

  it('lists what was decided, the newest decision first, with who and how far its command got (the Decided toggle)', async () => {
    const decided = await api<ProposalView[]>('listProposals', { status: ['approved', 'rejected', 'stale'] });
    const rejected = decided.find((x) => x.status === 'rejected')!;
    const approved = decided.find((x) => x.status === 'approved' && x.action === 'assign_job')!;
    expect([rejected, approved].every((x) => x !== undefined), JSON.stringify(decided.map((x) => x.status))).toBe(true);
    await page.click('.inbox-views button:has-text("Decided")');
    await page.waitForSelector(`[data-decided="${rejected.id}"]`);
    const ids = await page.$$eval('[data-decided]', (b) => b.map((x) => x.getAttribute('data-decided')));
    expect(ids.indexOf(rejected.id)).toBeLessThan(ids.indexOf(approved.id)); // rejected after the approval
    const row = (id: string) => page.locator(`tr:has([data-decided="${id}"])`).textContent();
    expect(await row(rejected.id)).toMatch(/rejected.*Lena/);
    expect(await row(approved.id)).toMatch(/approved.*Lena.*applied/);
    await axe('inbox, decided list');
    await page.click(`[data-decided="${approved.id}"]`);
    await page.waitForSelector('.proposal .command-applied');
    await page.click('.inbox-views button:has-text("Waiting")');
    await page.waitForSelector('.inbox-list [data-proposal]');
  });

  it('shows an approval as stale, with its reason, when the world changed since the agent looked', async () => {
    const open = await api<ProposalView[]>('listProposals', { status: ['open'] });
    const p = open.find((x) => x.action === 'assign_job');
    expect(p, 'a second assignment proposal').toBeDefined();
    const { job_id, resource_id } = p!.params as { job_id: string; resource_id: string };
    // Change the world behind the inbox's back: the operations module is told (directly, as the
    // site's own principal) to start that job, so its events assign it before anyone approves.
    const secrets = JSON.parse(readFileSync(join(data, 'secrets/modules.json'), 'utf8')) as { modules: Record<string, { username: string; password: string }> };
    const mqttUrl = /mqtt:\s+(mqtt:\/\/127\.0\.0\.1:\d+)/.exec(output.out)![1]!;
    const client = await mqtt.connectAsync(mqttUrl, { username: 'tilstand', password: secrets.modules.tilstand!.password, clientId: 'e2e-world-changer', reconnectPeriod: 0 });
    await client.publishAsync('tilstand/demo/commands/operations', JSON.stringify({ command_id: `e2e-${Date.now()}`, action: 'assign_job', job_id, resource_id, ts_ms: Date.now() }), { qos: 1 });
    await client.endAsync();
    await until(async () => (await jobs()).find((j) => j.job_id === job_id)?.assigned_resource === resource_id, `job ${job_id} assigned by the module`);
    await go('inbox');
    await openProposal(p!.id, '.proposal .actions .approve');
    await page.click('.proposal .actions .approve');
    await page.waitForSelector('.proposal .alert');
    const alert = await page.textContent('.proposal .alert');
    expect(alert).toContain('Not sent');
    expect(alert).toContain(job_id);
    expect((await api<ProposalView>('getProposal', { id: p!.id })).status).toBe('stale');
    await shot('inbox-stale');
  });

  it('N selects the next proposal in the list as shown', async () => {
    // By id: two proposals can share an explanation (the agent proposes again for the same job).
    const shown = () => page.$$eval('.inbox-list [data-proposal]', (bs) => bs.map((b) => b.getAttribute('data-proposal')));
    const selected = async () => (await page.$('.inbox-list tr.selected [data-proposal]'))?.getAttribute('data-proposal') ?? null;
    const ids = await shown();
    expect(ids.length).toBeGreaterThan(1);
    // From a row the list shows (the stale approval just before has left it, and N goes on from
    // its place, which the test after Reject below checks).
    await page.click(`[data-proposal="${ids[0]}"]`);
    await expect.poll(selected, { timeout: 15_000 }).toBe(ids[0]);
    const want = ids[1];
    await page.keyboard.press('n');
    // A server round trip (getProposal, then the list): under the whole suite's load it has taken
    // over the poll's default second (a run on 2 cores saw nothing selected yet after 1 s).
    await expect.poll(selected, { timeout: 15_000 }).toBe(want);
  });

  it('keeps the keyboard focus on Defer while the decision is on its way (aria-disabled, not disabled), and sends it once', async () => {
    await go('inbox');
    const open = await api<ProposalView[]>('listProposals', { status: ['open'] });
    // Not an assignment: the tests after this one approve those.
    const p = open.find((x) => x.action !== 'assign_job') ?? open.at(-1)!;
    await openProposal(p.id, '.proposal .will-send');
    // The decision held on its way until the test lets it go.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let sent = 0;
    await page.route('**/api/decide', async (route) => {
      sent++;
      await held;
      await route.continue();
    });
    try {
      const defer = page.locator('.proposal .actions button', { hasText: 'Defer' });
      await defer.focus();
      await page.keyboard.press('Enter');
      await page.waitForSelector('.proposal .actions button[aria-disabled="true"]');
      // The focused button's text, else the focused element's tag (BODY: the focus was lost), read
      // after a rendered frame or two: chromium moves the focus off a button made `disabled` when
      // it next renders, not at once. As text: a function passed from here would carry tsx's name
      // helper, which the page lacks.
      const focused = async () =>
        (await page.evaluate(
          "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => { const a = document.activeElement; r(a && a.tagName === 'BUTTON' ? a.textContent : a ? a.tagName : null); }, 100))))",
        )) as string | null;
      expect(await focused()).toBe('‖ Defer');
      // Still shown disabled (styles.css), in words too: aria-disabled is what a screen reader says.
      expect(await page.evaluate(`[...document.querySelectorAll('.proposal .actions button[aria-disabled="true"]')].map((b) => [b.textContent, getComputedStyle(b).opacity])`)).toEqual([
        ['✔ Approve', '0.6'],
        ['✖ Reject', '0.6'],
        ['‖ Defer', '0.6'],
      ]);
      await page.keyboard.press('Enter'); // again, on the button that still has the focus: nothing more is sent
      release();
      await expect.poll(async () => (await api<ProposalView>('getProposal', { id: p.id })).status).toBe('deferred');
      await expect.poll(() => page.$$('.proposal .actions button[aria-disabled="true"]').then((b) => b.length)).toBe(0);
      expect(await focused()).toBe('‖ Defer'); // a deferred one can still be decided: its buttons stay, and the focus on them
      expect(sent).toBe(1);
    } finally {
      // The held handler let go; afterEach takes the route off (after a failure without waiting,
      // and without an error of its own in place of the test's).
      release();
    }
  });

  it('moves the keyboard focus to the next row after Reject removes the buttons (not to the page), and N opens that row', async () => {
    await go('inbox');
    const shown = () => page.$$eval('.inbox-list [data-proposal]', (bs) => bs.map((b) => b.getAttribute('data-proposal')!));
    const selected = async () => (await page.$('.inbox-list tr.selected [data-proposal]'))?.getAttribute('data-proposal') ?? null;
    // The focused element's proposal id, else its tag (BODY: the focus fell to the page). As text:
    // a function passed from here would carry tsx's name helper, which the page lacks.
    const focused = async () =>
      (await page.evaluate("(() => { const a = document.activeElement; return a ? a.getAttribute('data-proposal') ?? a.tagName : null; })()")) as string | null;
    const open = await api<ProposalView[]>('listProposals', { status: ['open', 'deferred'] });
    const ids = await shown();
    // Not an assignment (the tests after this one approve those), one that another row follows, and
    // not the first where there is a choice (N from the top would then open the same row).
    const pick = (from: number) => ids.slice(from, -1).find((x) => open.some((p) => p.id === x && p.action !== 'assign_job'));
    const id = pick(1) ?? pick(0);
    expect(id, JSON.stringify({ ids, open: open.map((p) => [p.id, p.action]) })).toBeDefined();
    const want = ids[ids.indexOf(id!) + 1]!;
    await openProposal(id!, '.proposal .will-send');
    await page.locator('.proposal .actions button.reject').focus();
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await api<ProposalView>('getProposal', { id: id! })).status).toBe('rejected');
    await page.waitForSelector('.proposal .actions', { state: 'detached' });
    await expect.poll(shown).not.toContain(id);
    await expect.poll(focused, { timeout: 15_000 }).toBe(want); // was BODY
    await page.keyboard.press('n');
    await expect.poll(selected, { timeout: 15_000 }).toBe(want); // was the list's first row
  });

  it('switches language: Norwegian and German labels, numbers and dates in the locale format', async () => {
    // A proposal's trail shows dates in the list's short form (formatWhen), in full on hover; the tables screen shows sizes (formatBytes).
    await go('inbox');
    await page.click('[data-proposal]');
    await page.waitForSelector('.trail li');
    const lang = (l: string) => page.selectOption('header select[name="lang"]', l);
    await lang('nb');
    await expect.poll(() => page.textContent('nav [data-screen="inbox"]')).toContain('Innboks');
    expect(await page.getAttribute('html', 'lang')).toBe('nb');
    expect(await page.textContent('.trail li')).toMatch(/^[a-zø]{3}\. \d{1,2}\. [a-zé]{3,4}\.?, \d{2}:\d{2} — foreslått \(agent-.*\): handling: /);
    expect(await page.getAttribute('.trail li time', 'title')).toMatch(/ \d{4}, \d{2}:\d{2}:\d{2}$/); // the year and the seconds on hover
    // The agent's explanation too (whichever rule made the proposal), with the English record on hover.
    const heading = () => page.textContent('.proposal h2');
    const record = await page.getAttribute('.proposal h2', 'title');
    expect(await heading()).toMatch(/Jobb |har vært ledig|bestillingspunktet/);
    expect(record).toMatch(/Job |has been free|reorder point/);
    await shot('inbox-nb');
    await lang('de');
    await expect.poll(() => page.textContent('nav [data-screen="inbox"]')).toContain('Eingang');
    expect(await page.textContent('.trail li')).toMatch(/^[A-Z][a-z]\., \d{1,2}\. [A-Z][a-zä]{2,3}\.?, \d{2}:\d{2} — vorgeschlagen \(agent-.*\): Aktion: /); // not "06.12.26, 08:42:08"
    expect(await heading()).toMatch(/Auftrag |ist seit .* frei|Meldebestand/);
    await shot('inbox-de');
    await lang('en');
    await expect.poll(() => page.textContent('nav [data-screen="inbox"]')).toContain('Inbox');
    expect(await page.textContent('.trail li')).toMatch(/^[A-Z][a-z]{2} \d{1,2} [A-Z][a-z]{2,3}, \d{2}:\d{2} — proposed/);
    expect(await heading()).toMatch(/Job |has been free|reorder point/);

    await go('tables');
    await page.waitForSelector('[data-table="work_queue"]');
    const locales = { en: 'en-GB', nb: 'nb-NO', de: 'de-DE' } as const;
    for (const [l, locale] of Object.entries(locales)) {
      await lang(l);
      await expect.poll(() => page.textContent('nav [data-screen="tables"]')).toContain({ en: 'Tables', nb: 'Tabeller', de: 'Tabellen' }[l as 'en']);
      const bytes = (await api<Array<{ table: string; bytes: number }>>('tables')).find((t) => t.table === 'stock')!.bytes;
      const expected = new Intl.NumberFormat(locale, { style: 'unit', unit: 'kilobyte', unitDisplay: 'short', maximumFractionDigits: 1 }).format(bytes / 1000);
      await expect.poll(() => page.textContent('[data-table="stock"] td:nth-child(8)')).toBe(expected);
      if (l !== 'en') await shot(`tables-${l}`);
    }
    await lang('en');
  });

  it('shows budget gauges on the tables screen', async () => {
    const gauges = page.locator('table meter');
    await expect.poll(() => gauges.count()).toBeGreaterThanOrEqual(5);
    // yard_doors: the demo's table of its own, fed by its yard system.
    for (const t of ['work_queue', 'resources', 'stock', 'dead_letters', 'yard_doors']) expect(await page.locator(`[data-table="${t}"] meter`).count()).toBe(1);
    // Each module stream with its last event (the demo's modules published their snapshot at
    // start) and the silence its alarm allows (the demo: 10 min).
    await page.waitForSelector('[data-stream="inventory/stock"]');
    await page.waitForSelector('[data-stream="yard/doors"]');
    for (const st of ['commerce/reservations', 'inventory/stock', 'operations/jobs', 'operations/resources', 'procurement/inbound', 'yard/doors']) {
      expect(await page.locator(`[data-stream="${st}"] td`).nth(1).textContent(), st).toMatch(/ago$/);
      expect(await page.locator(`[data-stream="${st}"] td`).nth(3).textContent(), st).toMatch(/^10 mins?$/);
    }
    await shot('tables');
    await axe('tables');
  });

  it('travels in time: the work queue at the agent tag, and the diff with latest', async () => {
    await go('history');
    // The screen opens on the stock as it is now, saying which snapshot that is.
    await page.waitForSelector('table[aria-label="stock"] tbody tr');
    expect(await page.locator('.history-summary').textContent()).toMatch(/^stock at snapshot #\d+, committed .+\. Rows: \d+$/);
    await page.selectOption('select[name="table"]', 'work_queue');
    await page.waitForSelector('table[aria-label="work_queue"] tbody tr');
    await page.selectOption('select[name="kind"]', 'tag');
    await page.waitForSelector('select[name="tag"] option', { state: 'attached' });
    // The oldest agent tag: the first run, before this test approved anything (the last of the
    // picker's first group, "Agent runs": the decisions' and hourly tags are grouped after it).
    expect(await page.locator('select[name="tag"] optgroup').first().getAttribute('label')).toBe('Agent runs');
    const tag = (await page.locator('select[name="tag"] optgroup').first().locator('option').last().getAttribute('value'))!;
    const all = await page.locator('select[name="tag"] option').allTextContents();
    expect(tag).toMatch(/^agent-/);
    // A search narrows the list to the tags whose name contains it (a site keeps thousands).
    // Searched by the agent tag's whole name: the run's id alone is also in the decision tags of
    // the proposals decided above, and whether the hour's `hourly-*` tag exists yet depends on when
    // the sync engine first ran, so only the whole name leaves a list surely shorter than all
    // (the agent tag and at least the approved assignment's decision tag).
    expect(all.length, all.join(', ')).toBeGreaterThanOrEqual(2);
    await page.fill('input[name="tagSearch"]', tag);
    // Polled until the searched list has come (the full list also holds the tag, and is shown until then).
    const filtered = async () => {
      const options = await page.locator('select[name="tag"] option').allTextContents();
      return options.length > 0 && options.every((o) => o.includes(tag));
    };
    await expect.poll(filtered, { timeout: 15_000 }).toBe(true);
    const found = await page.locator('select[name="tag"] option').allTextContents();
    expect(found.every((o) => o.includes(tag)), found.join(', ')).toBe(true);
    expect(found.length).toBeLessThan(all.length);
    await page.selectOption('select[name="tag"]', tag);
    await page.click('form.history-form button[type="submit"]');
    await page.waitForSelector('table[aria-label="work_queue"] tbody tr');
    expect(await page.locator('table[aria-label="work_queue"] tbody tr').count()).toBeGreaterThanOrEqual(30);
    await shot('history');
    await axe('history');
    await page.click('form.history-form button[type="button"]');
    await page.waitForSelector('tr.change');
    // Each change in words, Paimon's mark on hover.
    const kinds = await page.locator('tr.change td.change-kind').evaluateAll((tds) => tds.map((td) => `${td.getAttribute('title')} ${td.textContent}`));
    expect(kinds).toContain('+U after');
    expect(kinds).toContain('-U before');
    expect(await page.locator('.history-summary').textContent()).toMatch(/^work_queue from snapshot #\d+ \(.+\) to the latest, #\d+ \(.+\)\. Changes: \d+$/);
    await shot('history-diff');
    // "Rows containing" narrows the read to one job (the site filters before its cut).
    const job = (await page.locator('tr.change td:nth-child(2)').first().textContent())!;
    await page.fill('input[name="contains"]', job);
    await page.click('form.history-form button[type="submit"]');
    await expect.poll(() => page.locator('table[aria-label="work_queue"] tbody tr').count()).toBe(1);
    expect(await page.locator('table[aria-label="work_queue"] tbody tr td').first().textContent()).toBe(job);
    expect(await page.locator('.history-summary').textContent()).toMatch(/\. Rows: 1$/);
    expect(await page.locator('section p.muted').allTextContents()).toContain(`Only rows with a cell that contains “${job}”.`);
  });

  it('finds a job by searching the Work queue (the site filters and cuts, the screen asks again as the tables change)', async () => {
    await go('work');
    await page.waitForSelector('[data-job]');
    const all = await page.locator('[data-job]').count();
    const id = (await page.locator('[data-job]').last().getAttribute('data-job'))!;
    await page.fill('.work input[name="search"]', id.toLowerCase());
    await expect.poll(() => page.locator('[data-job]').count()).toBe(1);
    expect(await page.locator('[data-job]').first().getAttribute('data-job')).toBe(id);
    await page.fill('.work input[name="search"]', '');
    // All again (the demo replaces done jobs as it goes, so about as many as before).
    await expect.poll(() => page.locator('[data-job]').count()).toBeGreaterThan(all / 2);
  });

  it('shows on a job what waits for a decision about it, one click from the inbox', async () => {
    await go('work');
    const chip = page.locator('[data-job] [data-waiting]').first();
    await chip.waitFor({ timeout: 15_000 });
    const id = await chip.getAttribute('data-waiting');
    await chip.click();
    await page.waitForSelector('.inbox-list');
    await expect.poll(async () => (await page.$('.inbox-list tr.selected [data-proposal]'))?.getAttribute('data-proposal') ?? null, { timeout: 15_000 }).toBe(id);
  });

  it("Stock shows each row's reorder point and, when asked, only the rows under it", async () => {
    await go('stock');
    await page.waitForSelector('table tbody tr td.num');
    // Every row is listed first; ticked, the screen shows what the site API lists as below (the
    // demo's stock moves, so both are read again until they agree), each row marked in words.
    const all = (await api<unknown[]>('stock', {})).length;
    await expect.poll(() => page.locator('tbody tr').count(), { timeout: 15_000 }).toBe(all);
    await page.check('input[name="below"]');
    await expect
      .poll(async () => {
        const rows = await page.locator('tbody tr').count();
        const tagged = await page.locator('tbody tr .below-tag').count();
        const below = await api<Array<{ item: string }>>('stock', { below: true });
        return rows === tagged && rows === below.length ? 'agree' : `${rows} rows, ${tagged} tagged, API ${below.length}`;
      }, { timeout: 15_000 })
      .toBe('agree');
    await page.uncheck('input[name="below"]');
    await expect.poll(() => page.locator('tbody tr').count(), { timeout: 15_000 }).toBe(all);
  });

  it("lets the shift lead set one location's reorder point on the Stock screen, under her name, and remove it again", async () => {
    await go('stock');
    await page.fill('input[name="search"]', 'ITEM-003');
    const scope = async () => (await api<StockView[]>('stock', { search: 'ITEM-003' })).find((r) => r.location === 'B-01')?.reorder_scope;
    expect(await scope()).toBe('default');
    const edit = page.locator('button.edit-policy[aria-label="Change the reorder point of ITEM-003 at B-01"]');
    await edit.click();
    const form = page.locator('form.policy-form');
    await form.waitFor();
    await shot('stock-policy');
    await axe('stock: a reorder point being changed');
    await form.locator('input[name="scope"][value="location"]').check();
    await form.locator('input[name="reorderPoint"]').fill('500');
    await form.locator('input[name="orderUpTo"]').fill('900');
    await form.locator('button[type="submit"]').click();
    await form.waitFor({ state: 'detached' });
    // The row shows it (far above any demo stock: marked below), and config.json holds it.
    const cell = page.locator('tbody tr').filter({ hasText: 'B-01' }).locator('td[data-scope]');
    await expect.poll(() => cell.getAttribute('data-scope'), { timeout: 15_000 }).toBe('location');
    expect(await cell.textContent()).toMatch(/^below 500 · location/);
    expect(await scope()).toBe('location');
    // The agent ran at once: the row's replenishment waits for a decision.
    await page.locator('tbody tr').filter({ hasText: 'B-01' }).locator('[data-waiting]').waitFor({ timeout: 15_000 });
    expect(JSON.parse(readFileSync(join(data, 'config.json'), 'utf8')).agent.reorderByItem['ITEM-003']).toEqual({ locations: { 'B-01': { reorderPoint: 500, orderUpTo: 900 } } });
    const changes = await run(['config', 'changes', '--data', data]);
    expect(changes.stdout).toMatch(/^\S+ {2}Lena {2}agent\.reorderByItem\.ITEM-003\.locations\.B-01: not set → \{"reorderPoint":500,"orderUpTo":900\}\n/);
    // The row says who set it (its title), and so does the form (a touch screen shows no title).
    expect(await cell.getAttribute('title')).toMatch(/\(set for this location\); set by Lena, /);
    // The screen's list of changes says it too, newest first.
    await page.locator('details.policy-changes summary').click();
    await expect.poll(() => page.locator('details.policy-changes li').first().textContent()).toMatch(/ — Lena: ITEM-003 at B-01: not set → 500, up to 900$/);
    // Removed: the row takes the site default again.
    await edit.click();
    expect(await form.locator('.set-by').textContent()).toMatch(/^set by Lena, /);
    await form.locator('button[name="remove"]').click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(() => cell.getAttribute('data-scope'), { timeout: 15_000 }).toBe('default');
    expect(await scope()).toBe('default');
    await expect.poll(() => page.locator('details.policy-changes li').first().textContent()).toMatch(/ — Lena: ITEM-003 at B-01: 500, up to 900 → not set$/);
    // The demo's ITEM-001 has levels of its own (40 → 150) and A-01 its own again (30 → 90): from
    // A-01's row either can be changed or removed, each starting from its own levels.
    await page.fill('input[name="search"]', 'ITEM-001');
    await page.locator('button.edit-policy[aria-label="Change the reorder point of ITEM-001 at A-01"]').click();
    await form.waitFor();
    expect(await form.locator('input[name="reorderPoint"]').inputValue()).toBe('30');
    expect(await form.locator('button[name="remove"]').count()).toBe(1);
    await form.locator('input[name="scope"][value="item"]').check();
    expect([await form.locator('input[name="reorderPoint"]').inputValue(), await form.locator('input[name="orderUpTo"]').inputValue()]).toEqual(['40', '150']);
    expect(await form.locator('button[name="remove"]').count()).toBe(1);
    await form.locator('input[name="scope"][value="location"]').check();
    expect(await form.locator('input[name="reorderPoint"]').inputValue()).toBe('30');
    await form.locator('button[name="cancel"]').click();
    await form.waitFor({ state: 'detached' });
    await page.fill('input[name="search"]', '');
  });

  it('has the other screens, accessible', async () => {
    for (const screen of ['stock', 'sync', 'deadLetters']) {
      await go(screen);
      await page.waitForTimeout(300);
      await shot(screen);
      await axe(screen);
    }
  });

  it('lets the shift lead replay a dead letter with those like it, then dismiss them in a row under it, with a note kept under her name', async () => {
    const secrets = JSON.parse(readFileSync(join(data, 'secrets/modules.json'), 'utf8')) as { modules: Record<string, { username: string; password: string }> };
    const mqttUrl = /mqtt:\s+(mqtt:\/\/127\.0\.0\.1:\d+)/.exec(output.out)![1]!;
    const inv = secrets.modules.inventory!;
    const client = await mqtt.connectAsync(mqttUrl, { username: inv.username, password: inv.password, clientId: 'e2e-garbage', reconnectPeriod: 0 });
    // The vendor's test run: three messages that are no events, from the same topic.
    for (const n of [1, 2, 3]) await client.publishAsync('tilstand/demo/events/inventory/stock', `hello from the vendor ${n}`, { qos: 1 });
    await client.endAsync();
    let ids: string[] = [];
    await until(async () => {
      const open = await api<Array<{ id: string; payload: string; status: string }>>('deadLetters', { status: 'open' });
      ids = open.filter((d) => d.payload.startsWith('hello from the vendor')).map((d) => d.id);
      return ids.length === 3;
    }, 'the dead letters');
    const id = ids[0]!;
    // The alarm band says so, in the reader's language.
    const lang = (l: string) => page.selectOption('header select[name="lang"]', l);
    await expect.poll(() => page.textContent('section.alarms'), { timeout: 10_000 }).toContain('dead letters waiting for a look: 3');
    await lang('nb');
    await expect.poll(() => page.textContent('section.alarms')).toContain('avviste hendelser som venter på å bli sett på: 3');
    await lang('de');
    await expect.poll(() => page.textContent('section.alarms')).toContain('abgewiesene Ereignisse, die auf Prüfung warten: 3');
    await lang('en');
    await go('deadLetters');
    const row = `tr[data-letter="${id}"]`;
    await page.waitForSelector(`${row}.attention`);
    // Its group, named above the list, lists only its letters (the site filters before its
    // limit); they are replayed and dismissed so, then "Show all" lists every letter again.
    const group = page.locator('.letter-sources button.source', { hasText: 'not JSON from inventory/stock' });
    expect(await group.getAttribute('aria-pressed')).toBe('false');
    await group.click();
    await expect.poll(() => group.getAttribute('aria-pressed')).toBe('true');
    expect(await page.textContent('.letter-sources .filtered span')).toBe('Only the letters from inventory/stock listed (not JSON).');
    await page.waitForSelector(`${row}.attention`);
    // Replayed with the open ones like it (its topic, its reason), they fail again — they are no
    // events — and stay open; the screen says so.
    await page.click(`${row} button.replay-alike`);
    await expect.poll(() => page.textContent('p.replay-result')).toBe('0 replayed, 3 still failing');
    for (const other of ids) expect(await page.locator(`tr[data-letter="${other}"].attention`).count()).toBe(1);
    await page.click(`${row} button.dismiss`);
    // The dismissal opens in a row of its own under the letter's (its note as wide as the table).
    const form = `tr[data-dismissing="${id}"] form.dismiss`;
    const field = page.locator(`${form} input[name="dismissNote"]`);
    // No note, no dismissal: the button waits for one.
    expect(await page.locator(`${form} button[type="submit"]`).isDisabled()).toBe(true);
    await field.fill('a test message from the module vendor');
    // One note closes the other two as well: the same topic, the same reason.
    expect(await page.textContent(`${form} label.filter`)).toBe(' Also every other open letter from this topic with this reason (2 listed here)');
    await page.check(`${form} input[name="dismissAlike"]`);
    await axe('dead letters with the dismiss form open');
    await page.click(`${form} button[type="submit"]`);
    for (const other of ids) {
      const r = `tr[data-letter="${other}"]`;
      await expect.poll(() => page.textContent(`${r} .dismissed`)).toMatch(/^Dismissed by Lena, .+: a test message from the module vendor$/);
      expect(await page.locator(`${r}.attention`).count()).toBe(0);
      expect(await page.locator(`${r} button.dismiss`).count()).toBe(0);
    }
    const st = await api<{ alarms: Array<{ kind: string }>; deadLetters: number }>('status', {});
    expect(st.deadLetters).toBe(0);
    expect(st.alarms.map((a) => a.kind)).not.toContain('dead_letters');
    await expect.poll(async () => (await page.locator('section.alarms').count()) === 0 || !(await page.textContent('section.alarms'))!.includes('dead letters'), { timeout: 10_000 }).toBe(true);
    // The group has emptied: its button is gone, the way back stays.
    await page.click('.letter-sources button.show-all');
    await expect.poll(() => page.locator('.letter-sources .filtered').count()).toBe(0);
    await shot('dead-letters-dismissed');
  });

  it("shows sync to the demo's stand-in HQ: where to, and what it sent", async () => {
    await go('sync');
    const sync = page.locator('section.sync');
    await sync.getByText(`Syncing to: ${join(data, 'demo-hq')}`).waitFor({ timeout: 10_000 });
    // The first round runs at start; its steps are within the last 15 min.
    await until(async () => /In the last 15 mins: [1-9][\d,]* steps? done, [\d.,]+ [kM]?B sent/.test(await sync.innerText()), 'the sync screen to show steps done', 30_000);
  });

  it('is usable at 1280×800 and 1920×1080', async () => {
    for (const [width, height] of [
      [1280, 800],
      [1920, 1080],
    ] as const) {
      await page.setViewportSize({ width, height });
      await go('inbox');
      await page.waitForSelector('[data-proposal]');
      await page.click('[data-proposal]');
      await page.waitForSelector('.proposal');
      const fit = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })')) as { scroll: number; inner: number };
      expect(fit.scroll, `horizontal overflow at ${width}×${height}`).toBeLessThanOrEqual(fit.inner);
      for (const sel of ['nav [data-screen="inbox"]', 'nav [data-screen="history"]', '.inbox-list', '.proposal h2']) {
        expect(await page.locator(sel).first().isVisible(), `${sel} at ${width}×${height}`).toBe(true);
      }
      await shot(`inbox-${width}x${height}`);
      // A figure and its unit stay on one line ("8.8 kB", "0 secs", not the unit under the
      // number), and the Tables screen still fits the width.
      await go('tables');
      await page.waitForSelector('[data-table="stock"]');
      const wrapped = (await page.evaluate(`[...document.querySelectorAll('td.num')].filter((td) => {
        const r = document.createRange();
        r.selectNodeContents(td);
        return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1;
      }).map((td) => td.textContent)`)) as string[];
      expect(wrapped, `numbers broken over two lines at ${width}×${height}`).toEqual([]);
      const fitTables = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })')) as { scroll: number; inner: number };
      expect(fitTables.scroll, `horizontal overflow of Tables at ${width}×${height}`).toBeLessThanOrEqual(fitTables.inner);
    }
  });

  it('fits every screen into a 1024×768 panel PC, in each language', async () => {
    // Number cells do not wrap (a figure and its unit stay together): no screen may get wider
    // than the window for it, with the longest labels (German) either.
    await page.setViewportSize({ width: 1024, height: 768 });
    const ready: Record<string, string> = { inbox: '[data-proposal]', work: '[data-job]', stock: 'tbody tr', tables: '[data-table="stock"]', history: 'form.history-form' };
    const screens = await page.$$eval('nav [data-screen]', (els) => els.map((e) => e.getAttribute('data-screen')!));
    expect(screens.length).toBeGreaterThanOrEqual(7);
    const over: string[] = [];
    for (const l of ['en', 'nb', 'de']) {
      await page.selectOption('header select[name="lang"]', l);
      for (const screen of screens) {
        await go(screen);
        await page.waitForSelector(`nav [data-screen="${screen}"][aria-current="page"]`);
        if (ready[screen]) await page.waitForSelector(ready[screen]!);
        else await page.waitForTimeout(500); // sync, dead letters: one small read each
        const fit = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })')) as { scroll: number; inner: number };
        if (fit.scroll > fit.inner) over.push(`${l} ${screen}: ${fit.scroll} px > ${fit.inner}`);
      }
    }
    await shot('stock-1024-de');
    await page.selectOption('header select[name="lang"]', 'en');
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(over).toEqual([]);
  });

  it('lets an admin add a user and reset her PIN, then a password, in the row, masked (no window.prompt: Electron has none)', async () => {
    const prompts: string[] = [];
    const onDialog = (d: { type(): string; dismiss(): Promise<void> }) => {
      prompts.push(d.type());
      void d.dismiss();
    };
    page.on('dialog', onDialog);
    await page.setViewportSize({ width: 1280, height: 800 });
    // The demo directory's admin (README: `demo`, PIN 1234).
    await page.click('header button:has-text("Sign out")');
    await page.waitForSelector('form input[name="user"]');
    await page.fill('input[name="user"]', 'demo');
    await page.fill('input[name="secret"]', '1234');
    await page.click('button[type="submit"]');
    await go('users');
    await page.waitForSelector('tr[data-user="demo"]');
    // Her own row: marked, and no Disable (the site refuses to disable the signed-in admin).
    expect(await page.textContent('tr[data-user="demo"] td:first-child')).toContain('(you)');
    expect(await page.locator('tr[data-user="demo"] button:has-text("Disable")').count()).toBe(0);
    expect(await page.textContent('tr[data-user="Lena"] td:nth-child(2)')).toBe('Shift lead');

    await page.fill('form.add-user input[name="name"]', 'Per');
    await page.selectOption('form.add-user select[name="role"]', 'operator');
    await page.fill('form.add-user input[name="newSecret"]', '4711');
    await page.click('form.add-user button[type="submit"]');
    await page.waitForSelector('tr[data-user="Per"]');
    await page.click('tr[data-user="Per"] button.reset');
    const field = page.locator('tr[data-user="Per"] form.reset-secret input[name="resetSecret"]');
    expect(await field.getAttribute('type')).toBe('password');
    await field.fill('8642');
    await page.click('tr[data-user="Per"] form.reset-secret button[type="submit"]');
    await expect.poll(() => page.textContent('.reset-done')).toBe('New PIN set for Per (it replaces their password, if they had one).');
    expect(await page.locator('form.reset-secret').count()).toBe(0);
    // A password the same way: the confirmation says which was set, and that it replaces the PIN
    // (a reset is what an admin does when a secret became known: checked below).
    await page.click('tr[data-user="Per"] button.reset');
    await page.fill('tr[data-user="Per"] form.reset-secret input[name="resetSecret"]', 'correct horse battery');
    await page.click('tr[data-user="Per"] form.reset-secret button[type="submit"]');
    await expect.poll(() => page.textContent('.reset-done')).toBe('New password set for Per (it replaces their PIN, if they had one).');
    expect(await page.textContent('tr[data-user="Per"] td.has-badge')).toBe('no');
    await axe('users with a PIN reset done');
    page.off('dialog', onDialog);
    expect(prompts).toEqual([]);

    // The password reset last signs Per in; the PIN before it and the first one no longer do (own
    // requests: not the test's session).
    const signIn = async (secret: string) =>
      (await (await fetch(`${url}/api/signIn`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' }, body: JSON.stringify({ user: 'Per', secret }) })).json()) as { ok: boolean };
    expect((await signIn('4711')).ok).toBe(false);
    expect((await signIn('8642')).ok).toBe(false);
    expect((await signIn('correct horse battery')).ok).toBe(true);

    // Back to the shift lead for the tests after this one.
    await page.click('header button:has-text("Sign out")');
    await page.waitForSelector('form input[name="user"]');
    await page.fill('input[name="user"]', 'Lena');
    await page.fill('input[name="secret"]', '2580');
    await page.click('button[type="submit"]');
    await page.waitForSelector('nav [data-screen="inbox"]');
  });

  it('falls back to sign-in when an admin disables the user at work, and lets her in again once enabled', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await go('inbox');
    await page.waitForSelector('[data-proposal]');
    const off = await run(['users', 'disable', '--data', data, '--name', 'Lena']);
    expect(off.code, off.stderr).toBe(0);
    // The next pushed event (status, every 5 s) finds her session ended: the server closes the
    // socket, the page asks `me` and shows the sign-in form instead of the inbox it had.
    await page.waitForSelector('form input[name="user"]', { timeout: 15_000 });
    expect(await page.locator('[data-proposal]').count()).toBe(0);
    await page.fill('input[name="user"]', 'Lena');
    await page.fill('input[name="secret"]', '2580');
    await page.click('button[type="submit"]');
    await expect.poll(() => page.locator('[role="alert"], .error').first().textContent()).toMatch(/disabled/);
    const on = await run(['users', 'enable', '--data', data, '--name', 'Lena']);
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toBe('enabled user Lena\n');
    await page.fill('input[name="user"]', 'Lena');
    await page.fill('input[name="secret"]', '2580');
    await page.click('button[type="submit"]');
    await page.waitForSelector('[data-proposal]');
  });

  it('signs out after 10 minutes without use, and says so on the sign-in screen', async () => {
    await go('inbox');
    await page.waitForSelector('[data-proposal]');
    // The page's clock is faked from here on; a pointer movement starts the wait under it.
    await page.clock.install();
    await page.mouse.move(40, 40);
    await page.mouse.move(60, 60);
    await page.clock.fastForward('09:00');
    await page.mouse.move(80, 80); // still in use: the wait starts again
    await page.clock.fastForward('09:00');
    expect(await page.locator('[data-proposal]').count()).toBeGreaterThan(0);
    await page.clock.fastForward('01:05');
    await page.waitForSelector('form input[name="user"]');
    expect(await page.locator('.signin [role="status"]').textContent()).toMatch(/Signed out after 10 mins? without use/);
    // The server's session is gone too: a reload does not bring the name back.
    await page.reload();
    await page.waitForSelector('form input[name="user"]');
    expect(await page.locator('[data-proposal]').count()).toBe(0);
  });
});
