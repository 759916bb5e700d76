// `tilstand config check` on a rule file the running site already runs says "(running now)", not
// "(runs from the next start)": a newcomer walking the demo read the second while `tilstand
// status` listed the same SHA-256, and took it that a restart was needed. The site is asked over
// the control socket as `status` does; a file edited since, or no site running, keeps the old words.

import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_RULE_FILE } from '../init.ts';
import { Site } from '../site.ts';
import { runMain } from './test-support.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-config-check-running-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** config check's line for the demo's rule file. */
async function ruleLine(data: string): Promise<string | undefined> {
  const r = await runMain(['config', 'check', '--data', data]);
  expect([r.code, r.err]).toEqual([0, '']);
  return r.out.split('\n').find((l) => l.startsWith(`rule file ${DEMO_RULE_FILE}:`));
}

describe('config check: a rule file the running site runs', () => {
  let site: Site | undefined;
  afterAll(async () => {
    await site?.stop();
  });

  it('says "(running now)" while the site runs that code, "(runs from the next start)" once the file is edited or the site stopped', async () => {
    const data = join(dir, 'demo');
    site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, demoStepMs: 600_000 });
    const file = join(data, DEMO_RULE_FILE);
    const original = readFileSync(file, 'utf8');
    expect(await ruleLine(data)).toMatch(/^rule file rules\/door-down\.mts: door-down@3, sha256 [0-9a-f]{12}… \(running now\)$/);

    // Edited while the site runs: the site still runs the code it loaded, the file waits for a start.
    appendFileSync(file, '// edited\n');
    expect(await ruleLine(data)).toMatch(/ \(runs from the next start\)$/);
    writeFileSync(file, original);
    expect(await ruleLine(data)).toMatch(/ \(running now\)$/);

    await site.stop();
    site = undefined;
    expect(await ruleLine(data)).toMatch(/ \(runs from the next start\)$/);
  }, 90_000);
});
