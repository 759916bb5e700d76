// The suites' way to take their routes off a page (support.ts's unrouteAll), with a handler still
// running: a CI run failed on "route.fulfill: Route is already handled!", an unhandled rejection
// from floor-ui-long-floor's listProposals handler. The UI polls; `page.unroute` came while a poll
// was inside the handler's `route.fetch()`, chromium let the request go on without it, and the
// handler's fulfill then failed outside any test. Here the same on a small loopback server: a
// request held in the handler, the routes taken off, and the handler finishes — its answer the one
// the page gets, nothing thrown. Without /usr/bin/chromium (or $CHROMIUM) the suite is skipped with
// a loud notice — and fails under CI=true.

import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CI, HAVE_CHROMIUM, openPage, unrouteAll, warnSkipped, type SuiteBrowser } from './support.ts';

warnSkipped('test/e2e/unroute-in-flight.e2e.test.ts');

const suite = HAVE_CHROMIUM || CI ? describe : describe.skip;

suite('routes taken off a page while a handler runs (chromium)', () => {
  let server: Server | undefined;
  let browser: SuiteBrowser | undefined;
  let url = '';
  let slowAsked: () => void = () => undefined;

  beforeAll(async () => {
    expect(HAVE_CHROMIUM, `no chromium at ${CHROMIUM}: under CI=true the end-to-end suite must run`).toBe(true);
    server = createServer((req, res) => {
      if (req.url === '/slow') {
        slowAsked();
        setTimeout(() => res.end('from the server'), 400);
        return;
      }
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>t</title>');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await openPage();
    await browser.page.goto(`${url}/`);
  }, 60_000);

  afterAll(async () => {
    await browser?.context.close().catch(() => undefined);
    if (browser) rmSync(browser.profile, { recursive: true, force: true });
    await new Promise((r) => server?.close(r));
  });

  it('lets the running handler answer the request it holds, and nothing rejects', async () => {
    const page = browser!.page;
    const thrown: string[] = [];
    await page.route('**/slow', async (route) => {
      try {
        const r = await route.fetch();
        await route.fulfill({ status: 200, body: `routed: ${await r.text()}` });
      } catch (e) {
        thrown.push((e as Error).message);
      }
    });
    const asked = new Promise<void>((r) => (slowAsked = r));
    const answer = page.evaluate(`fetch('/slow').then((r) => r.text())`) as Promise<string>;
    await asked; // the handler is inside route.fetch() now, and stays there 400 ms
    await unrouteAll(page);
    expect(await answer).toBe('routed: from the server');
    expect(thrown).toEqual([]);
    // Off: the next request goes to the server untouched.
    expect(await page.evaluate(`fetch('/slow').then((r) => r.text())`)).toBe('from the server');
  });
});
