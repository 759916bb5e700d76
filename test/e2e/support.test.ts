// support.ts's children when they cannot be started: a failure of the call that asked, at once and
// naming the binary, not an unhandled 'error' event (which vitest reports outside any test and
// fails the run on) and a wait for the site's address to time out. Needs no chromium.

import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runCli, startDemo } from './support.ts';

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

  it('runCli rejects naming the binary', async () => {
    await expect(runCli(['status'], { node: MISSING })).rejects.toThrow(`could not start tilstand status (${MISSING} ${BIN}): ENOENT`);
  });
});
