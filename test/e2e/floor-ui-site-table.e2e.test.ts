// A table of the site's own on the floor UI, end to end: a data directory made with `tilstand
// init`, a `yard` module with its contract and config.json defining yard_doors (budget, decision,
// columns) and a binding writing it, `tilstand start --headless` as a child process, the module's
// events through the embedded broker, and Debian's chromium through the real renderer:
//   sign in → Tables lists yard_doors with its decision and age (fed), and its snapshot count
//   follows the module's commits (the `tables` event over the WebSocket) → History reads yard_doors' rows,
//   and compares its first snapshot with the latest.
// Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with a loud notice — and fails
// under CI=true.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED_BINDINGS } from '../../core/ingest/seed-bindings.ts';
import { publishYardDoors, YARD_BINDING, YARD_CONTRACT, YARD_DOORS } from '../../core/ingest/test-support/yard-doors.ts';
import { CHROMIUM, CI, HAVE_CHROMIUM, runCli, signedInPage, startSite, stopDemo, untilWith, warnSkipped, type DemoChild, type SuiteBrowser } from './support.ts';

warnSkipped('test/e2e/floor-ui-site-table.e2e.test.ts', "!!! A table of the site's own was NOT tested on the floor UI. Under CI=true this is a failure.\n");

const output = { out: '', err: '' };
const until = untilWith(() => output);
let site: DemoChild | undefined;
let browser: SuiteBrowser | undefined;
let page: Page;
let url = '';
let mqttUrl = '';
let password = '';
const pageErrors: string[] = [];

const ADMIN = { name: 'kari', pin: '2468' };

const CONTRACT = YARD_CONTRACT;
// A budget of 4 s: the Ingestor commits a table once its oldest pending event is half its budget
// old, so the module's events show within seconds.
const DOORS = { ...YARD_DOORS, budgetMs: 4_000, confirmedBy: 'Kari' };
const BINDING = YARD_BINDING;

const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

suite("a table of the site's own on the floor UI (chromium)", () => {
  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    const data = mkdtempSync(join(tmpdir(), 'tilstand-e2e-site-table-'));
    const init = await runCli(['init', '--data', data, '--site', 'north', '--admin', ADMIN.name, '--pin', ADMIN.pin]);
    expect(init.code, init.stderr).toBe(0);
    const pw = await runCli(['modules', 'password', '--module', 'yard', '--data', data]);
    password = /\): (\S+)$/m.exec(pw.stdout)![1]!;
    // The contract's file beside the data directory's own (stopDemo removes the directory).
    const contractFile = join(data, 'yard.doors.v1.json');
    writeFileSync(contractFile, JSON.stringify(CONTRACT));
    const add = await runCli(['contracts', 'add', '--file', contractFile, '--data', data]);
    expect(add.code, add.stderr).toBe(0);
    rmSync(contractFile);
    const configFile = join(data, 'config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as { tables?: unknown[] };
    writeFileSync(configFile, JSON.stringify({ ...config, tables: [...(config.tables ?? []), DOORS], bindings: [...SEED_BINDINGS, BINDING] }, null, 2));
    const check = await runCli(['config', 'check', '--data', data]);
    expect(check.code, check.stderr).toBe(0);

    // A site that could not be started fails here, naming the binary (not an unhandled 'error');
    // one that prints no address is stopped by startSite, and its data directory removed here.
    const started = await startSite(['start', '--headless', '--mqtt-port', '0', '--http-port', '0', '--data', data, '--no-agent-timer'], 'the site', output).catch((e: unknown) => {
      rmSync(data, { recursive: true, force: true });
      throw e;
    });
    // stopDemo stops the child and removes the data directory.
    site = { ...started, data, output };
    url = site.url;
    mqttUrl = await until(() => /mqtt:\s+(mqtt:\/\/127\.0\.0\.1:\d+)/.exec(output.out)?.[1], 'the site to print its broker URL');
    browser = await signedInPage(url, ADMIN.name, ADMIN.pin, pageErrors);
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await stopDemo(site, browser);
  }, 60_000);

  it('lists yard_doors on Tables with its decision and age, and follows its commits', async () => {
    await page.click('nav [data-screen="tables"]');
    const row = page.locator('[data-table="yard_doors"]');
    await row.waitFor();
    expect(await row.locator('td').first().textContent()).toBe(`yard_doors${DOORS.decision}`);
    // Fed by its binding: an age against its budget (4 s), with a gauge, not "no source".
    expect(await row.locator('td').nth(1).textContent()).not.toContain('no source');
    expect(await row.locator('td').nth(2).textContent()).toBe('4 secs');
    expect(await row.locator('meter').count()).toBe(1);
    // No event yet: no snapshot. Each commit to yard_doors: the site's `tables` event (over the
    // WebSocket) reloads the screen, its snapshots with it.
    const snapshots = async () => Number((await row.locator('td').nth(5).textContent())!.replace(/\D/g, ''));
    expect(await snapshots()).toBe(0);
    await publishYardDoors(mqttUrl, password, [
      { seq: 1, door: 'D-01', state: 'free' },
      { seq: 2, door: 'D-02', state: 'occupied' },
    ]);
    await expect.poll(snapshots, { timeout: 15_000 }).toBeGreaterThan(0);
    const before = await snapshots();
    await publishYardDoors(mqttUrl, password, [{ seq: 3, door: 'D-01', state: 'occupied' }]);
    await expect.poll(snapshots, { timeout: 15_000 }).toBeGreaterThan(before);
  });

  it('reads yard_doors in History and compares its first snapshot with the latest', async () => {
    await page.click('nav [data-screen="history"]');
    await page.waitForSelector('select[name="table"] option[value="yard_doors"]', { state: 'attached' });
    await page.selectOption('select[name="table"]', 'yard_doors');
    const rows = page.locator('table[aria-label="yard_doors"] tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await page.locator('table[aria-label="yard_doors"] thead th').allTextContents()).toEqual(['door_id', 'state', 'yard_seq']);
    expect(await rows.nth(0).locator('td').allTextContents()).toEqual(['D-01', 'occupied', '3']);
    expect(await rows.nth(1).locator('td').allTextContents()).toEqual(['D-02', 'occupied', '2']);
    expect(await page.locator('.history-summary').textContent()).toMatch(/^yard_doors at snapshot #\d+, committed .+\. Rows: 2$/);
    await page.selectOption('select[name="kind"]', 'snapshot');
    await page.fill('input[name="value"]', '1');
    await page.click('form.history-form button[type="button"]');
    await page.waitForSelector('tr.change');
    expect(await page.locator('.history-summary').textContent()).toMatch(/^yard_doors from snapshot #1 \(.+\) to the latest, #\d+ \(.+\)\. Changes: \d+$/);
    expect(await page.locator('tr.change td:nth-child(2)').allTextContents()).toContain('D-01');
    expect(pageErrors).toEqual([]);
  });
});
