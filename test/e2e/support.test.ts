// support.ts's children when they cannot be started: a failure of the call that asked, at once and
// naming the binary, not an unhandled 'error' event (which vitest reports outside any test and
// fails the run on) and a wait for the site's address to time out. And startSite's other two ends:
// the address a site printed, or, with none, what the child printed: at once when it ended, else at
// the timeout, the child stopped.
// Needs no chromium.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runCli, startDemo, startSite, stopDemo } from './support.ts';

const MISSING = join(tmpdir(), 'tilstand-no-such-node', 'node');

describe('e2e support children that cannot be started', () => {
  it('startDemo rejects at once naming the binary, and removes its data directory', async () => {
    expect(existsSync(MISSING)).toBe(false);
    const output = { out: '', err: '' };
    const t0 = Date.now();
    await expect(startDemo('tilstand-e2e-support-nonode-', output, { node: MISSING })).rejects.toThrow(`could not start the demo site (${MISSING} ${BIN}): ENOENT`);
    // Not after the 30 s wait for the site's address.
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith('tilstand-e2e-support-nonode-'))).toEqual([]);
  });

  it('startSite rejects at once naming the binary', async () => {
    const output = { out: '', err: '' };
    const t0 = Date.now();
    await expect(startSite(['start', '--headless'], 'the site', output, { node: MISSING })).rejects.toThrow(`could not start the site (${MISSING} ${BIN}): ENOENT`);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('runCli rejects naming the binary', async () => {
    await expect(runCli(['status'], { node: MISSING })).rejects.toThrow(`could not start tilstand status (${MISSING} ${BIN}): ENOENT`);
  });
});

describe('startSite', () => {
  it('resolves with the UI address the site printed, its output kept (through startDemo)', async () => {
    const output = { out: '', err: '' };
    const demo = await startDemo('tilstand-e2e-support-address-', output);
    try {
      expect(demo.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(output.out).toContain(`ui:`);
      expect(output.out).toContain(`${demo.url}/`);
      expect(demo.child.exitCode).toBeNull();
    } finally {
      await stopDemo(demo, undefined);
    }
  }, 60_000);

  it('a child that ends without a UI address: the error comes at once, with its exit and what it printed', async () => {
    const output = { out: '', err: '' };
    // echo for node: the child prints its arguments at once and exits, no address ever.
    const begun = Date.now();
    const err = await startSite(['help'], 'the site', output, { node: '/bin/echo', timeoutMs: 20_000 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toBe(`the site (/bin/echo ${BIN}) exited with code 0 before printing its UI URL\nstdout:\n${BIN} help\n\nstderr:\n`);
    // Not the 20 s timeout: the poll's step (100 ms) after the exit.
    expect(Date.now() - begun).toBeLessThan(10_000);
  });

  it('a site still starting when the wait ends is stopped before the error (the caller has nothing to stop)', async () => {
    const data = mkdtempSync(join(tmpdir(), 'tilstand-e2e-support-slow-'));
    try {
      const output = { out: '', err: '' };
      // 1 ms: over before the site has loaded, let alone printed its address.
      await expect(startSite(['start', '--headless', '--mqtt-port', '0', '--http-port', '0', '--data', data], 'the site', output, { timeoutMs: 1 })).rejects.toThrow(/^timed out waiting for the site to print its UI URL/);
      expect(processesNaming(data)).toEqual([]);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});

/** The ids of the processes whose command line holds `text` (Linux /proc). */
function processesNaming(text: string): number[] {
  const found: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${n}/cmdline`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (cmd.includes(text)) found.push(Number(n));
  }
  return found;
}
