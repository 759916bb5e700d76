// What the floor-UI browser tests share: where the CLI and chromium are, the loud notice when
// chromium is missing, the CLI as a child process, polling with the site's output in the error,
// the site API as the test's own session, chromium launched as the tests run it, a site started as
// a child and its UI address awaited (startSite; the demo site in a new data directory, startDemo),
// chromium's page signed in (signedInPage) or not yet on the UI
// for a suite that signs in itself (openPage), and both stopped at the end (stopDemo); a suite's
// routes taken off after each test, passed or failed (unrouteAfterTest). A child that cannot be
// started fails the call that asked for it, naming it (../helpers/child-failure.ts), rather than
// raising an unhandled 'error' event.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { childFailure } from '../helpers/child-failure.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = join(ROOT, 'bin/tilstand.mjs');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const CI = process.env.CI === 'true';

/** The loud notice of a suite skipped for want of chromium (under CI=true the suite fails instead). */
export function warnSkipped(file: string, extra = ''): void {
  if (HAVE_CHROMIUM || CI) return;
  const bar = '!'.repeat(100);
  console.warn(`\n${bar}\n!!! SKIPPED: ${file} — no chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM=…)\n${extra}${bar}\n`);
}

/**
 * `tilstand <args>` as a child process, run to its end; rejects when it could not be started
 * (`o.node`: the binary run, process.execPath unless a test of this helper gives another).
 */
export function runCli(args: string[], o: { node?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const node = o.node ?? process.execPath;
    const c = spawn(node, [BIN, ...args], { cwd: ROOT });
    childFailure(c, `tilstand ${args[0] ?? ''} (${node} ${BIN})`).failed.catch(rej);
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** Polls `f` every 100 ms until it gives a value; on timeout the error holds `output()` (the site's stdout and stderr). */
export function untilWith(output: () => { out: string; err: string }) {
  return async function until<T>(f: () => Promise<T | undefined | false> | T | undefined | false, what: string, ms = 20_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await f();
      if (v) return v;
      if (Date.now() > end) {
        const { out, err } = output();
        throw new Error(`timed out waiting for ${what}\nstdout:\n${out}\nstderr:\n${err.slice(-3000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
}

/** The site API as the test's own session (not the page's): its cookie kept between calls. */
export function apiSession(base: () => string) {
  let cookie = '';
  return async function api<T>(method: string, body: unknown = {}): Promise<T> {
    const r = await fetch(`${base()}/api/${method}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1', cookie }, body: JSON.stringify(body) });
    const set = r.headers.get('set-cookie');
    if (set) cookie = set.split(';')[0]!;
    const j = (await r.json()) as { ok: boolean; value: T; error?: { message: string } };
    if (!j.ok) throw new Error(`${method}: ${j.error?.message}`);
    return j.value;
  };
}

/** Debian's chromium, headless, with a fresh profile directory, at 1280×800 in en-GB. */
export function launchChromium(profile: string, o: { bypassCSP?: boolean } = {}): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    viewport: { width: 1280, height: 800 },
    locale: 'en-GB',
    ...o,
  });
}

/** Stops the site's child: SIGTERM, and SIGKILL if it has not exited within 15 s. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** A demo site started as a child for a browser suite, and its output so far. */
export interface DemoChild {
  child: ChildProcess;
  data: string;
  /** The UI's base address (http://127.0.0.1:<port>). */
  url: string;
  output: { out: string; err: string };
}

/**
 * `tilstand <args>` (a `start`) as a child, `output` filling as it writes (for `untilWith`);
 * resolves with the child once it printed its UI's base address (http://127.0.0.1:<port>, without
 * the trailing slash). Rejects at once, naming the binary (`<what> (<node> <BIN>)`,
 * ../helpers/child-failure.ts), when the child could not be started; as soon as it ended without
 * printing an address, with its exit and what it printed; and after `o.timeoutMs` (30 s) without
 * an address with what the child printed (`untilWith`); either way the child is
 * stopped first, since the caller gets nothing to stop. `o.node`: the binary run, process.execPath
 * unless a test of this helper gives another.
 */
export async function startSite(args: string[], what: string, output: { out: string; err: string }, o: { node?: string; timeoutMs?: number } = {}): Promise<{ child: ChildProcess; url: string }> {
  const node = o.node ?? process.execPath;
  const child = spawn(node, [BIN, ...args], { cwd: ROOT });
  const failure = childFailure(child, `${what} (${node} ${BIN})`);
  child.stdout!.on('data', (d) => (output.out += d));
  child.stderr!.on('data', (d) => (output.err += d));
  // 'close', not 'exit': its output is all read by then.
  let closed: string | undefined;
  child.once('close', (code, signal) => (closed = signal ? `was ended by ${signal}` : `exited with code ${code}`));
  const address = () => {
    const failed = failure.error();
    if (failed) throw failed;
    const url = /ui:\s+(http:\/\/127\.0\.0\.1:\d+)\//.exec(output.out)?.[1];
    // A child that ended without an address never prints one: said at once, not at the timeout.
    if (url === undefined && closed !== undefined) throw new Error(`${what} (${node} ${BIN}) ${closed} before printing its UI URL\nstdout:\n${output.out}\nstderr:\n${output.err.slice(-3000)}`);
    return url;
  };
  try {
    return { child, url: await untilWith(() => output)(address, 'the site to print its UI URL', o.timeoutMs ?? 30_000) };
  } catch (e) {
    // A site that never said its address would outlive the suite.
    await stopChild(child);
    throw e;
  }
}

/**
 * `tilstand start --demo --headless` in a new data directory (`tmpdir()/<prefix>…`) on free ports,
 * the demo's modules stepping once per 10 min and no agent timer (a suite runs the agent when it
 * wants proposals), by startSite: resolves once the site printed its UI's address, and rejects at
 * once, naming the binary, when the child could not be started (`o.node` as startSite's), the
 * data directory removed. `output` fills as the site writes, for `untilWith`.
 */
export async function startDemo(prefix: string, output: { out: string; err: string }, o: { node?: string } = {}): Promise<DemoChild> {
  const data = mkdtempSync(join(tmpdir(), prefix));
  try {
    const args = ['start', '--demo', '--headless', '--mqtt-port', '0', '--http-port', '0', '--data', data, '--demo-step-ms', '600000', '--no-agent-timer'];
    const { child, url } = await startSite(args, 'the demo site', output, o);
    return { child, data, url, output };
  } catch (e) {
    rmSync(data, { recursive: true, force: true });
    throw e;
  }
}

/** Chromium as a suite holds it: its context, its one page and the profile folder stopDemo removes. */
export interface SuiteBrowser {
  context: BrowserContext;
  page: Page;
  profile: string;
}

/**
 * Chromium with a fresh profile and its one page (15 s timeouts), not yet on the UI: for a suite
 * that signs in itself or routes the page's requests first. At launchChromium's 1280×800 unless
 * `size` is given; page errors go to `pageErrors` when given; `bypassCSP` lets a suite inject
 * axe-core as an inline script (the app's CSP forbids that).
 */
export async function openPage(o: { size?: { width: number; height: number }; pageErrors?: string[]; bypassCSP?: boolean } = {}): Promise<SuiteBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'tilstand-chromium-'));
  const context = await launchChromium(profile, o.bypassCSP ? { bypassCSP: true } : {});
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  const errors = o.pageErrors;
  if (errors) page.on('pageerror', (e) => errors.push(e.message));
  if (o.size) await page.setViewportSize(o.size);
  return { context, page, profile };
}

/**
 * Chromium with a fresh profile, one page at `size` (the floor PC's 1366×768 unless given) on the
 * UI at `url`, signed in through the sign-in form as `user`; page errors go to `pageErrors`.
 */
export async function signedInPage(url: string, user: string, secret: string, pageErrors: string[], size = { width: 1366, height: 768 }): Promise<SuiteBrowser> {
  const browser = await openPage({ size, pageErrors });
  const { page } = browser;
  await page.goto(`${url}/`);
  await page.waitForSelector('form input[name="user"]');
  await page.fill('input[name="user"]', user);
  await page.fill('input[name="secret"]', secret);
  await page.click('button[type="submit"]');
  await page.waitForSelector('nav [data-screen="users"]');
  return browser;
}

/**
 * A badge reader's scan: `chars`, then Enter, each key `keyMs` after the last by the events' own
 * time stamps — the pace the sign-in screen tells a scan by (renderer/src/badge-scan.ts reads each
 * key's `timeStamp`) — however long a loaded machine takes to deliver them, as the OS stamps a
 * reader's keys when they arrive. `keyboard.type` with no delay had chromium stamp each key when
 * it got it: with the whole suite running on two cores the keys of one scan came more than the
 * scan's pace apart, and the scan was taken for typing (the test waited for a scan never sent).
 * Trusted key events with their text, as `keyboard.type` sends them (CDP Input.dispatchKeyEvent).
 */
export async function scanKeys(page: Page, chars: string, keyMs = 5): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const t0 = Date.now() / 1000;
    const sends: Promise<unknown>[] = [];
    const key = (k: { key: string; code: string; keyCode: number; text: string }, i: number) => {
      const timestamp = t0 + (i * keyMs) / 1000;
      const down = { key: k.key, code: k.code, windowsVirtualKeyCode: k.keyCode, timestamp };
      sends.push(cdp.send('Input.dispatchKeyEvent', { type: 'keyDown', ...down, text: k.text, unmodifiedText: k.text }));
      sends.push(cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', ...down, timestamp: timestamp + 0.001 }));
    };
    [...chars].forEach((ch, i) => {
      const upper = ch.toUpperCase();
      const code = /[0-9]/.test(ch) ? `Digit${ch}` : /[A-Z]/.test(upper) ? `Key${upper}` : '';
      key({ key: ch, code, keyCode: upper.charCodeAt(0), text: ch }, i);
    });
    key({ key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' }, chars.length);
    // Sent together (CDP keeps their order): their stamps, not their delivery, give the pace.
    await Promise.all(sends);
  } finally {
    await cdp.detach().catch(() => undefined);
  }
}

/**
 * Every route of `page` removed, after the handlers still running have finished. A plain
 * `page.unroute` does not wait: chromium lets the request a handler still holds go on, and the
 * handler's own `route.fulfill` or `route.continue` then rejects with "Route is already handled!"
 * outside the test (an unhandled rejection that failed a CI run; unroute-in-flight.e2e.test.ts).
 */
export async function unrouteAll(page: Page): Promise<void> {
  await page.unrouteAll({ behavior: 'wait' });
}

/**
 * For the `afterEach` of a suite that routes its page: every route of `page` taken off once a test
 * has ended, passed or failed, so that no handler a test left acts on a later test's requests.
 * `task` is the hook's `context.task`. After a pass as unrouteAll (the running handlers finish
 * first). After a failure without waiting — a handler may wait on what the failed test was still
 * to give it — with what the handlers throw from then on dropped (playwright's 'ignoreErrors': no
 * "Route is already handled!" or "Target closed" added to the run) and an error of this call's own
 * (the page gone with the failure) ignored: the test's own failure is the one reported. A closed
 * or missing page has nothing to take off.
 */
export async function unrouteAfterTest(page: Page | undefined, task: { result?: { state: string } }): Promise<void> {
  if (!page || page.isClosed()) return;
  if (task.result?.state !== 'fail') return unrouteAll(page);
  await page.unrouteAll({ behavior: 'ignoreErrors' }).catch(() => undefined);
}

/** The end of a suite that used startDemo and signedInPage: chromium closed, the site stopped, both folders removed. */
export async function stopDemo(demo: DemoChild | undefined, browser: { context: BrowserContext; profile: string } | undefined): Promise<void> {
  await browser?.context.close().catch(() => undefined);
  await stopChild(demo?.child);
  if (demo) rmSync(demo.data, { recursive: true, force: true });
  if (browser) rmSync(browser.profile, { recursive: true, force: true });
}
